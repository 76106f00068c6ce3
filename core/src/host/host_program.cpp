// Building the host program of a segmented fusion, and printing it.

#include "braze/host/host_program.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "braze/error.h"

namespace braze::host {
namespace {

std::string refText(const HostProgram& program, const Fusion& original, const ValueRef& ref) {
  switch (ref.kind) {
    case SlotKind::Input:
      return original.inputs().at(static_cast<size_t>(ref.index))->name();
    case SlotKind::Buffer:
      return "%" + std::to_string(ref.index);
    case SlotKind::Extent:
      return program.extents.at(static_cast<size_t>(ref.index))->name();
  }
  return "?";
}

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

// The order to launch `segmented`'s segments in: each after the segments whose outputs it
// reads, and a segment that writes an aliased output after every other segment that reads the
// input it writes into; otherwise in segment order.
std::vector<size_t> launchOrder(const SegmentedFusion& segmented) {
  const Fusion& original = *segmented.original;
  const size_t count = segmented.segments.size();
  std::map<const Val*, size_t> writer;
  for (size_t s = 0; s < count; ++s) {
    for (const Val* output : segmented.segments[s].outputs) writer[output] = s;
  }
  std::vector<std::set<size_t>> after(count);  // after[s]: segments that must run before s
  for (size_t s = 0; s < count; ++s) {
    for (const Val* input : segmented.segments[s].inputs) {
      auto found = writer.find(input);
      if (found != writer.end()) after[s].insert(found->second);
    }
  }
  for (const auto& [output, input] : original.outputAliases()) {
    auto found = writer.find(output);
    if (found == writer.end()) continue;
    for (size_t r = 0; r < count; ++r) {
      const std::vector<const Val*>& reads = segmented.segments[r].inputs;
      if (r != found->second && std::find(reads.begin(), reads.end(), input) != reads.end())
        after[found->second].insert(r);
    }
  }
  std::vector<size_t> order;
  std::vector<bool> placed(count, false);
  while (order.size() < count) {
    size_t next = count;
    for (size_t s = 0; s < count && next == count; ++s) {
      if (placed[s]) continue;
      if (std::all_of(after[s].begin(), after[s].end(), [&](size_t p) { return placed[p]; }))
        next = s;
    }
    BRAZE_INTERNAL_CHECK(next < count)
        << "buildHostProgram: no order runs every reader of an input before the segment that "
           "writes an output into it";
    placed[next] = true;
    order.push_back(next);
  }
  return order;
}

}  // namespace

HostProgram buildHostProgram(const SegmentedFusion& segmented) {
  BRAZE_INTERNAL_CHECK(segmented.original != nullptr) << "buildHostProgram: no original fusion";
  const Fusion& original = *segmented.original;
  HostProgram program;
  program.original = &original;
  std::map<const Val*, ValueRef> where;
  for (size_t i = 0; i < original.inputs().size(); ++i)
    where[original.inputs()[i]] = {SlotKind::Input, static_cast<int32_t>(i)};
  std::map<const Val*, int32_t> extent_slot;
  auto extentRef = [&](const Val* extent) {
    auto [it, inserted] = extent_slot.emplace(extent, static_cast<int32_t>(program.extents.size()));
    if (inserted) program.extents.push_back(extent);
    return ValueRef{SlotKind::Extent, it->second};
  };

  const std::vector<size_t> order = launchOrder(segmented);
  // The last launch that reads each original tensor: its buffer is freed after that launch.
  std::map<const Val*, size_t> last_reader;
  for (size_t step = 0; step < order.size(); ++step) {
    for (const Val* input : segmented.segments[order[step]].inputs) last_reader[input] = step;
  }
  std::map<int32_t, const Val*> live;  // buffers that hold intermediates, by buffer
  for (size_t step = 0; step < order.size(); ++step) {
    const size_t s = order[step];
    const Segment& segment = segmented.segments[s];
    LaunchKernel launch;
    launch.segment = static_cast<int32_t>(s);
    for (const Val* input : segment.inputs) {
      auto found = where.find(input);
      if (found != where.end()) {
        launch.inputs.push_back(found->second);
        continue;
      }
      BRAZE_INTERNAL_CHECK(input->isA<Scalar>())
          << "buildHostProgram: segment " << s << " reads " << input->name()
          << ", which no earlier segment writes";
      launch.inputs.push_back(extentRef(input));
    }
    for (const Val* output : segment.outputs) {
      const auto* tv = output->as<TensorView>();
      Allocate allocate;
      allocate.buffer = program.num_buffers++;
      allocate.dtype = tv->dtype();
      allocate.tensor = tv;
      for (const IterDomain* id : tv->logicalNoReductions()) {
        allocate.extents.push_back(id->logicalExtent());
        if (!id->logicalExtent()->isConstant()) extentRef(id->logicalExtent());
      }
      ValueRef ref{SlotKind::Buffer, allocate.buffer};
      if (const Val* input = original.aliasedInput(output)) {
        // Later segments read it where it is written: in the input.
        allocate.alias_input = static_cast<int32_t>(original.inputIndex(input));
        ref = ValueRef{SlotKind::Input, allocate.alias_input};
      }
      BRAZE_INTERNAL_CHECK(where.emplace(output, ref).second)
          << "buildHostProgram: " << output->name() << " is written by two segments";
      launch.outputs.push_back(allocate.buffer);
      if (!original.isOutput(output)) live[allocate.buffer] = output;
      program.instructions.emplace_back(std::move(allocate));
    }
    program.instructions.emplace_back(std::move(launch));
    for (auto it = live.begin(); it != live.end();) {
      auto reader = last_reader.find(it->second);
      if (reader == last_reader.end() || reader->second <= step) {
        program.instructions.emplace_back(Deallocate{it->first});
        it = live.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Val* output : original.outputs()) {
    auto found = where.find(output);
    BRAZE_INTERNAL_CHECK(found != where.end())
        << "buildHostProgram: no segment writes fusion output " << output->name();
    program.outputs.push_back(found->second);
  }
  return program;
}

std::string HostProgram::toString() const {
  std::ostringstream os;
  for (const Instruction& instruction : instructions) {
    std::visit(Overloaded{
                   [&](const Allocate& a) {
                     if (a.alias_input >= 0) {
                       os << "%" << a.buffer << " = "
                          << refText(*this, *original, {SlotKind::Input, a.alias_input}) << "  ("
                          << a.tensor->name() << ", written in place)\n";
                       return;
                     }
                     os << "%" << a.buffer << " = allocate " << a.dtype << "[";
                     for (size_t i = 0; i < a.extents.size(); ++i)
                       os << (i ? ", " : "") << a.extents[i]->name();
                     os << "]  (" << a.tensor->name() << ")\n";
                   },
                   [&](const Deallocate& d) { os << "deallocate %" << d.buffer << "\n"; },
                   [&](const LaunchKernel& l) {
                     os << "launch segment " << l.segment << " (";
                     for (size_t i = 0; i < l.inputs.size(); ++i)
                       os << (i ? ", " : "") << refText(*this, *original, l.inputs[i]);
                     os << ") -> (";
                     for (size_t i = 0; i < l.outputs.size(); ++i)
                       os << (i ? ", " : "") << "%" << l.outputs[i];
                     os << ")\n";
                   },
               },
               instruction);
  }
  os << "return (";
  for (size_t i = 0; i < outputs.size(); ++i)
    os << (i ? ", " : "") << (original ? refText(*this, *original, outputs[i]) : "?");
  os << ")\n";
  return os.str();
}

}  // namespace braze::host
