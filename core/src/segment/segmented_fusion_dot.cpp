#include "braze/segment/segmented_fusion_dot.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <unordered_map>

namespace braze {

namespace {

// A DOT string literal's body: quotes and backslashes escaped, lines joined by \n.
std::string escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return escaped;
}

// "512 B", "1.5 KiB", "32.0 MiB", "2.0 GiB".
std::string formatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

// "T0 float32[s0, 4]": an original input or output as its node shows it.
std::string tensorLabel(const Val& val) {
  std::ostringstream os;
  os << val.name() << " " << val.dtype();
  if (const auto* tv = val.dynCast<TensorView>()) {
    os << "[";
    const std::vector<IterDomain*> dims = tv->logicalNoReductions();
    for (size_t i = 0; i < dims.size(); ++i)
      os << (i ? ", " : "") << dims[i]->logicalExtent()->name();
    os << "]";
  }
  return os.str();
}

class DotWriter {
 public:
  DotWriter(const SegmentedFusion& segmented, const DotAnnotations& annotations)
      : segmented_(segmented), annotations_(annotations) {}

  std::string write() {
    const Fusion& original = *segmented_.original;
    os_ << "digraph segmented_fusion {\n";
    os_ << "  node [shape=box, fontname=\"monospace\"];\n";
    for (size_t i = 0; i < original.inputs().size(); ++i) {
      os_ << "  input_" << i << " [shape=ellipse, label=\""
          << escape("input " + std::to_string(i) + "\n" + tensorLabel(*original.inputs()[i]))
          << "\"];\n";
    }
    for (const Segment& segment : segmented_.segments) {
      std::string label = "segment " + std::to_string(segment.id) + "\n" +
                          (segment.scheduler.empty() ? "no scheduler" : segment.scheduler);
      if (annotations_.segment_lines) {
        for (const std::string& line : annotations_.segment_lines(segment)) label += "\n" + line;
      }
      os_ << "  segment_" << segment.id << " [label=\"" << escape(label) << "\"];\n";
      for (const Val* output : segment.outputs) writer_.emplace(output, segment.id);
    }
    const std::vector<const Val*> outputs = distinctOutputs();
    for (size_t i = 0; i < outputs.size(); ++i) {
      os_ << "  output_" << i << " [shape=ellipse, label=\""
          << escape("output " + std::to_string(i) + "\n" + tensorLabel(*outputs[i])) << "\"];\n";
    }
    for (const Segment& segment : segmented_.segments) {
      const std::string to = "segment_" + std::to_string(segment.id);
      for (const Val* input : segment.inputs) {
        if (const int64_t i = original.inputIndex(input); i >= 0) {
          edge("input_" + std::to_string(i), to, *input);
        } else if (auto it = writer_.find(input); it != writer_.end()) {
          edge("segment_" + std::to_string(it->second), to, *input);
        }
      }
      for (const Val* output : segment.outputs) {
        const auto it = std::find(outputs.begin(), outputs.end(), output);
        if (it != outputs.end())
          edge(to, "output_" + std::to_string(it - outputs.begin()), *output);
      }
    }
    os_ << "}\n";
    return os_.str();
  }

 private:
  std::vector<const Val*> distinctOutputs() const {
    std::vector<const Val*> outputs;
    for (const Val* output : segmented_.original->outputs()) {
      if (std::find(outputs.begin(), outputs.end(), output) == outputs.end())
        outputs.push_back(output);
    }
    return outputs;
  }

  void edge(const std::string& from, const std::string& to, const Val& val) {
    std::string label = val.name();
    if (const auto* tv = val.dynCast<TensorView>(); tv && annotations_.tensor_bytes) {
      if (std::optional<int64_t> bytes = annotations_.tensor_bytes(*tv))
        label += "\n" + formatBytes(*bytes);
    }
    os_ << "  " << from << " -> " << to << " [label=\"" << escape(label) << "\"];\n";
  }

  const SegmentedFusion& segmented_;
  const DotAnnotations& annotations_;
  std::unordered_map<const Val*, int64_t> writer_;
  std::ostringstream os_;
};

}  // namespace

std::string toDot(const SegmentedFusion& segmented, const DotAnnotations& annotations) {
  return DotWriter(segmented, annotations).write();
}

}  // namespace braze
