#include "codegen/runtime_prelude.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "braze/error.h"
#include "codegen/runtime_headers.h"

namespace braze::codegen {

namespace {

// One runtime header: the `braze::` names that generated kernels (or other headers) use from
// it, and the headers its own definitions need. A name printed by codegen that is missing here
// fails generateCuda for every kernel that uses it (the codegen tests compile every
// elementwise op and every case of the scheduled suite).
struct RuntimeHeader {
  std::string_view file;
  std::vector<std::string_view> names;
  std::vector<std::string_view> needs;
};

// In dependency order: a header comes after every header it needs.
const std::vector<RuntimeHeader>& runtimeHeaderTable() {
  static const std::vector<RuntimeHeader> table = {
      {"types.cuh",
       {"Half", "BFloat16", "Float8", "Float8e4m3", "Float8e5m2", "floatToFloat8",
        "floatToFloat8E4M3fn", "floatToFloat8E5M2", "float8E4M3fnToFloat", "float8E5M2ToFloat"},
       {}},
      {"index.cuh", {"ceilDiv", "min", "max"}, {}},
      {"opaque.cuh", {"opaque"}, {}},
      {"limits.cuh", {"lowestValue", "highestValue"}, {}},
      {"float_functions.cuh",
       {"exp", "expNarrow", "exp2", "expm1", "log",  "log2",  "log1p", "sqrt",  "rsqrt", "sin",
        "cos", "tan",       "tanh", "erf",   "erfc", "floor", "ceil",  "round", "trunc", "abs"},
       {}},
      // sigmoid, silu, gelu and geluTanh call exp, erf and tanh; isinf compares with the limits.
      {"math.cuh",
       {"reciprocal", "sigmoid",     "silu",
        "gelu",       "geluTanh",    "isnan",
        "isinf",      "isfinite",    "relu",
        "sign",       "maximum",     "minimum",
        "clamp",      "remainder",   "fmod",
        "pow",        "atan2",       "lerp",
        "leftShift",  "rightShift",  "MaxOp",
        "MinOp",      "signbit",     "nextafter",
        "gcd",        "gcdUnsigned", "logicalRightShift"},
       {"float_functions.cuh", "limits.cuh"}},
      {"random.cuh",
       {"philox4x32", "unitFloat", "unitDouble", "uniformFloat", "uniformDouble", "normalFloat",
        "normalDouble", "PhiloxWords"},
       {}},
      {"reduction_ops.cuh", {"SumOp", "ProdOp"}, {}},
      {"tensor.cuh", {"Tensor"}, {}},
      {"vector.cuh",
       {"Vector", "vectorCopy", "vectorLoadReadOnly", "loadReadOnly", "packedElement"},
       {}},
      {"welford.cuh",
       {"WelfordTriplet", "welfordUpdate", "welfordCombine", "welfordMerge", "WelfordOp",
        "shuffleXor"},
       {}},
      {"block_reduction.cuh",
       {"blockReduce", "blockReduceGroup", "warpAllReduce", "reductionCoordinates", "BlockShape",
        "BlockScratch"},
       {}},
      {"grid_sync.cuh", {"arrive", "waitForArrivals"}, {}},
      // The finishing block reduces with blockReduce; Welford triplets load through their own
      // loadCoherent.
      {"grid_reduction.cuh",
       {"gridReduce", "gridReduceGroup", "gridReduceGroupResident", "gridReduceRegionBytes",
        "gridCoordinates", "loadCoherent", "gridSemaphores", "arriveLast"},
       {"welford.cuh", "block_reduction.cuh", "grid_sync.cuh"}},
      // Hopper (sm_90/sm_90a) machinery, for kernels that name it: plugin-owned kernel
      // templates (HOPPER_LOWERING.md). Each namespace (braze::mbarrier, braze::tma, ...) is one
      // name here, so an ordinary kernel never parses these headers.
      {"mbarrier.cuh",
       {"mbarrier", "sharedAddress", "namedBarrierSync", "namedBarrierArrive",
        "fenceProxyAsyncShared", "fenceProxyAsyncGlobal", "fenceProxyAsync"},
       {}},
      // Every header below names shared memory through sharedAddress.
      {"bulk_copy.cuh", {"TensorMap", "tma"}, {"mbarrier.cuh"}},
      {"wgmma.cuh", {"wgmma"}, {"mbarrier.cuh"}},
      {"warp_matrix.cuh", {"storeMatrix", "loadMatrix", "packBf16", "packF16"}, {"mbarrier.cuh"}},
      {"warp_specialization.cuh", {"warpgroup", "electOne"}, {}},
      {"cluster.cuh", {"cluster"}, {"mbarrier.cuh"}},
  };
  return table;
}

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Every identifier that follows "braze::" in `text`.
std::set<std::string_view> brazeNames(std::string_view text) {
  constexpr std::string_view kPrefix = "braze::";
  std::set<std::string_view> names;
  for (size_t at = text.find(kPrefix); at != std::string_view::npos; at = text.find(kPrefix, at)) {
    const size_t begin = at + kPrefix.size();
    size_t end = begin;
    while (end < text.size() && isIdentifierChar(text[end])) ++end;
    if (end > begin) names.insert(text.substr(begin, end - begin));
    at = end;
  }
  return names;
}

std::string_view headerText(std::string_view file) {
  for (const auto& [name, text] : runtimeHeaders()) {
    if (name == file) return text;
  }
  BRAZE_INTERNAL_CHECK(false) << "codegen: the runtime header " << file
                              << " is not embedded; please report";
  return {};
}

}  // namespace

std::vector<std::string_view> runtimeHeadersUsedBy(std::string_view kernel_text) {
  const std::vector<RuntimeHeader>& table = runtimeHeaderTable();
  std::set<std::string_view> used;
  for (std::string_view name : brazeNames(kernel_text)) {
    const auto header = std::find_if(table.begin(), table.end(), [&](const RuntimeHeader& h) {
      return std::find(h.names.begin(), h.names.end(), name) != h.names.end();
    });
    BRAZE_INTERNAL_CHECK(header != table.end())
        << "codegen: the kernel uses braze::" << name
        << ", which no runtime header defines in the table of runtime_prelude.cpp; please report";
    used.insert(header->file);
  }
  // Needs point to earlier headers: one pass from the last header to the first closes the set.
  for (auto header = table.rbegin(); header != table.rend(); ++header) {
    if (used.count(header->file)) used.insert(header->needs.begin(), header->needs.end());
  }
  std::vector<std::string_view> ordered;
  for (const RuntimeHeader& header : table) {
    if (used.count(header.file)) ordered.push_back(header.file);
  }
  return ordered;
}

std::vector<std::string_view> allRuntimeHeaders() {
  std::vector<std::string_view> files;
  for (const RuntimeHeader& header : runtimeHeaderTable()) files.push_back(header.file);
  return files;
}

std::string runtimePreludeFor(std::string_view kernel_text) {
  // A hand-written source may misspell a name: that is the writer's mistake, not ours.
  const std::vector<RuntimeHeader>& table = runtimeHeaderTable();
  for (std::string_view name : brazeNames(kernel_text)) {
    const bool known = std::any_of(table.begin(), table.end(), [&](const RuntimeHeader& h) {
      return std::find(h.names.begin(), h.names.end(), name) != h.names.end();
    });
    BRAZE_USER_CHECK(known) << "the kernel source names braze::" << name
                            << ", which no runtime header defines; the names are those of "
                               "core/src/codegen/runtime/*.cuh (HOPPER_LOWERING.md lists the "
                               "Hopper ones)";
  }
  return runtimePrelude(runtimeHeadersUsedBy(kernel_text));
}

std::string runtimePrelude(const std::vector<std::string_view>& headers) {
  std::string text;
  for (std::string_view name : headers) {
    text += "// ---- " + std::string(name) + " ----\n";
    // The headers are concatenated, not included: their include guards would be noise.
    std::string body(headerText(name));
    const std::string guard = "#pragma once\n";
    if (auto at = body.find(guard); at != std::string::npos) body.erase(at, guard.size());
    text += body;
    if (!body.empty() && body.back() != '\n') text += '\n';
  }
  return text;
}

}  // namespace braze::codegen
