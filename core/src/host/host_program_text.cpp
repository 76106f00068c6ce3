// HostProgram::toString: BRAZE_DUMP=host_ir.

#include <algorithm>
#include <sstream>

#include "braze/host/host_program.h"

namespace braze::host {
namespace {

class ProgramPrinter {
 public:
  explicit ProgramPrinter(const HostProgram& program) : program_(program) {}

  std::string print() {
    for (const Instruction& instruction : program_.instructions) print(instruction, 0);
    os_ << "return (";
    for (size_t i = 0; i < program_.outputs.size(); ++i)
      os_ << (i ? ", " : "") << (program_.original ? ref(program_.outputs[i]) : "?");
    os_ << ")\n";
    return os_.str();
  }

 private:
  std::string ref(const ValueRef& value) const {
    switch (value.kind) {
      case SlotKind::Input:
        return program_.original->inputs().at(static_cast<size_t>(value.index))->name();
      case SlotKind::Buffer:
        return "%" + std::to_string(value.index);
      case SlotKind::Extent:
        return program_.extents.at(static_cast<size_t>(value.index))->name();
      case SlotKind::SliceLength:
        return "slice_length(loop " + std::to_string(value.index) + ")";
    }
    return "?";
  }

  static std::string stream(const StreamRef& s) {
    if (s.saved >= 0) return "%s" + std::to_string(s.saved);
    return "loop " + std::to_string(s.loop) + (s.every ? " streams" : " stream");
  }

  void print(const Instruction& instruction, int depth) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    std::visit(
        Overloaded{
            [&](const Allocate& a) {
              os_ << indent << "%" << a.buffer << " = ";
              if (a.alias_input >= 0) {
                os_ << ref({SlotKind::Input, a.alias_input}) << "  (" << a.tensor->name()
                    << ", written in place)\n";
                return;
              }
              os_ << (a.host ? "allocate_host " : "allocate ") << a.dtype << "[";
              for (size_t i = 0; i < a.extents.size(); ++i)
                os_ << (i ? ", " : "") << a.extents[i]->name();
              os_ << "]";
              const std::vector<int64_t>& order = a.tensor->allocationOrder();
              if (!std::is_sorted(order.begin(), order.end())) {
                os_ << " laid out";
                for (size_t d = 0; d < order.size(); ++d) os_ << (d ? ", " : " [") << order[d];
                os_ << "]";
              }
              if (a.tensor->sharding()) os_ << " on " << a.tensor->sharding()->toString();
              if (a.ring_slots > 0)
                os_ << " ring of " << a.ring_slots << " slices of loop " << a.ring_loop
                    << " along dim " << a.ring_axis;
              os_ << "  (" << a.tensor->name() << ")\n";
            },
            [&](const Deallocate& d) { os_ << indent << "deallocate %" << d.buffer << "\n"; },
            [&](const LaunchKernel& l) {
              os_ << indent << "launch segment " << l.segment << " (";
              for (size_t i = 0; i < l.inputs.size(); ++i)
                os_ << (i ? ", " : "") << ref(l.inputs[i]);
              os_ << ") -> (";
              for (size_t i = 0; i < l.outputs.size(); ++i)
                os_ << (i ? ", " : "") << "%" << l.outputs[i];
              os_ << ")\n";
            },
            [&](const Select& s) {
              os_ << indent << "%" << s.view << " = select " << ref(s.source) << " dim " << s.axis
                  << ", " << (s.ring_slots > 0 ? "ring slot" : "slice") << " of loop " << s.loop
                  << "\n";
            },
            [&](const Copy& c) {
              os_ << indent
                  << (c.direction == CopyDirection::HostToDevice   ? "copy_to_device "
                      : c.direction == CopyDirection::DeviceToHost ? "copy_to_host "
                                                                   : "copy ")
                  << ref(c.source) << " -> " << ref(c.target) << "\n";
            },
            [&](const GetCurrentStream& g) {
              os_ << indent << "%s" << g.stream << " = get_current_stream\n";
            },
            [&](const SetCurrentStream& s) {
              os_ << indent << "set_current_stream " << stream(s.stream) << "\n";
            },
            [&](const Synchronize& s) {
              os_ << indent << "synchronize " << stream(s.stream) << "\n";
            },
            [&](const Communicate& c) {
              os_ << indent << "communicate segment " << c.segment << " (" << ref(c.input)
                  << ") -> (%" << c.output << ")\n";
            },
            [&](const Wait& w) { os_ << indent << "wait segment " << w.segment << "\n"; },
            [&](const ForLoop& f) {
              const Loop& loop = program_.loops.at(static_cast<size_t>(f.loop));
              os_ << indent << "for loop " << f.loop << " over "
                  << (loop.reference ? loop.reference->name() + " " : std::string())
                  << loop.slicing.toString() << " (extent " << ref(loop.extent) << ") on "
                  << loop.streams << " streams:\n";
              for (const Instruction& inner : f.body) print(inner, depth + 1);
            },
        },
        instruction);
  }

  const HostProgram& program_;
  std::ostringstream os_;
};

}  // namespace

std::string HostProgram::toString() const {
  return ProgramPrinter(*this).print();
}

}  // namespace braze::host
