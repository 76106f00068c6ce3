#include <sstream>

#include "braze/ir/printer.h"
#include "braze/segment/segmented_fusion.h"

namespace braze {

namespace {

// Where an original Val of a segment input comes from: "fusion input 2", "segment 0", ...
std::string originOf(const SegmentedFusion& segmented, const Segment& segment, const Val* val) {
  const Fusion& original = *segmented.original;
  if (const int64_t i = original.inputIndex(val); i >= 0)
    return "fusion input " + std::to_string(i);
  if (!val->isA<TensorView>()) return "evaluated on the original";
  for (const Segment& other : segmented.segments) {
    if (&other == &segment) continue;
    for (const Val* output : other.outputs) {
      if (output == val) return "segment " + std::to_string(other.id);
    }
  }
  return "no segment writes it";
}

void indent(std::ostream& os, const std::string& text, const char* prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) os << prefix << line << "\n";
}

}  // namespace

std::string SegmentedFusion::toString() const {
  std::ostringstream os;
  os << "segmented fusion: " << segments.size() << (segments.size() == 1 ? " segment" : " segments")
     << "\n";
  for (const Segment& segment : segments) {
    os << "segment " << segment.id << ": "
       << (segment.scheduler.empty() ? "no scheduler" : segment.scheduler) << "\n";
    os << "  inputs:\n";
    for (size_t i = 0; i < segment.inputs.size(); ++i) {
      os << "    " << segment.fusion->inputs()[i]->name() << " is " << segment.inputs[i]->name()
         << " (" << originOf(*this, segment, segment.inputs[i]) << ")\n";
    }
    os << "  outputs:\n";
    for (size_t i = 0; i < segment.outputs.size(); ++i) {
      const Val* output = segment.outputs[i];
      os << "    " << segment.fusion->outputs()[i]->name() << " is " << output->name();
      if (original != nullptr && original->isOutput(output)) {
        const auto& outputs = original->outputs();
        os << " (fusion output "
           << std::find(outputs.begin(), outputs.end(), output) - outputs.begin() << ")";
      }
      os << "\n";
    }
    indent(os, printMath(*segment.fusion), "  ");
  }
  return os.str();
}

}  // namespace braze
