// acme::flat_elementwise: a complete scheduler plugin in one file.
//
// It takes elementwise fusions whose tensors all have one shape (no broadcast) and are
// contiguous, treats them as one flat array, and gives each thread one vector of up to 16
// bytes: [blocks, threads, vector]. Everything a plugin does is here: the structural check,
// the run-time check, heuristics encoded as bytes with a printable summary, and the schedule
// made of Braze's scheduling primitives.

#include <algorithm>
#include <cstring>
#include <sstream>

#include "braze/sdk/scheduler_author.h"

namespace acme {
namespace {

using namespace braze;

/// The heuristics' result; crosses the plugin boundary as raw bytes.
struct FlatParams {
  int32_t threads = 128;
  int32_t vector_width = 1;
};

std::vector<uint8_t> encode(const FlatParams& params) {
  std::vector<uint8_t> bytes(sizeof(FlatParams));
  std::memcpy(bytes.data(), &params, sizeof(FlatParams));
  return bytes;
}

FlatParams decode(sdk::ParamBytes bytes) {
  BRAZE_USER_CHECK(bytes.size() == sizeof(FlatParams))
      << "acme::flat_elementwise: params of " << bytes.size() << " bytes, expected "
      << sizeof(FlatParams) << "; compute them with this version of the scheduler";
  FlatParams params;
  std::memcpy(&params, bytes.data(), sizeof(FlatParams));
  return params;
}

std::vector<TensorView*> tensorsOf(const std::vector<Val*>& values) {
  std::vector<TensorView*> tensors;
  for (Val* value : values) {
    if (auto* tv = dynamic_cast<TensorView*>(value)) tensors.push_back(tv);
  }
  return tensors;
}

class FlatElementwise : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  static constexpr int kRank = 500;  // after Braze's own pointwise scheduler unless asked for
  static constexpr const char* kDescription =
      "Same-shape contiguous elementwise fusions as one flat array, 16-byte vectors";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    if (fusion.outputs().empty()) return "the fusion has no outputs";
    for (const Expr* expr : fusion.exprs()) {
      if (!isElementwise(expr->op())) {
        return "op " + std::string(toString(expr->op())) + " is not elementwise";
      }
    }
    const std::vector<TensorView*> outputs = tensorsOf(fusion.outputs());
    if (outputs.size() != fusion.outputs().size()) return "an output is a scalar";
    for (const TensorView* tv : fusion.allTensors()) {
      if (tv->rank() != outputs[0]->rank()) {
        return "tensor " + tv->name() + " has another rank than output " + outputs[0]->name();
      }
      for (const IterDomain* id : tv->logicalNoReductions()) {
        if (id->isBroadcast()) return "tensor " + tv->name() + " has a broadcast dim";
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    const TensorArgumentInfo* first = nullptr;
    for (size_t i = 0; i < info.arguments.size(); ++i) {
      const auto* tensor = std::get_if<TensorArgumentInfo>(&info.arguments[i]);
      if (tensor == nullptr) continue;
      const std::string where = "input " + std::to_string(i) + " (" + tensor->description + ")";
      if (tensor->strides != contiguousStrides(tensor->sizes)) return where + " is not contiguous";
      if (first != nullptr && tensor->sizes != first->sizes) {
        return where + " has other sizes than " + first->description;
      }
      first = first != nullptr ? first : tensor;
    }
    if (first == nullptr) return "the fusion has no tensor input";
    return std::nullopt;
  }

  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    int64_t numel = 1;
    int64_t widest = 1;  // bytes of the widest element moved
    int64_t alignment = 16;
    for (size_t i = 0; i < info.arguments.size(); ++i) {
      const auto* tensor = std::get_if<TensorArgumentInfo>(&info.arguments[i]);
      if (tensor == nullptr) continue;
      numel = 1;
      for (int64_t size : tensor->sizes) numel *= size;
      widest = std::max<int64_t>(widest, sizeInBytes(tensor->dtype));
      alignment = std::min<int64_t>(alignment, info.data_alignments.at(i));
    }
    for (const TensorView* tv : tensorsOf(fusion.outputs())) {
      widest = std::max<int64_t>(widest, sizeInBytes(tv->dtype()));
    }
    FlatParams params;
    params.threads = 128;
    // The widest vector all of 16 bytes, the pointers' alignment and the length allow.
    int64_t width = std::max<int64_t>(1, std::min<int64_t>(alignment, 16) / widest);
    while (width > 1 && numel % width != 0) width /= 2;
    params.vector_width = static_cast<int32_t>(width);
    return encode(params);
  }

  std::string describeParams(sdk::ParamBytes bytes) override {
    const FlatParams params = decode(bytes);
    std::ostringstream os;
    os << "flat: " << params.threads << " threads x vector " << params.vector_width;
    return os.str();
  }

  void schedule(Fusion& fusion, sdk::ParamBytes bytes) override {
    const FlatParams params = decode(bytes);
    TensorView* reference = tensorsOf(fusion.outputs())[0];
    // Vectors move through register copies of the inputs and outputs.
    std::vector<TensorView*> vectorized;
    if (params.vector_width > 1) {
      for (TensorView* input : tensorsOf(fusion.inputs())) {
        vectorized.push_back(input->cacheAfter());
      }
      for (TensorView* output : tensorsOf(fusion.outputs())) {
        output->cacheBefore();
        vectorized.push_back(output);
      }
    }
    if (reference->rank() == 0) return;
    while (reference->nLoopDims() > 1) reference->merge(0);
    if (params.vector_width > 1) reference->split(0, params.vector_width);
    reference->split(0, params.threads);  // [blocks, threads, vector?]
    propagateTransforms(reference);
    reference->parallelize(0, ParallelType::BIDx);
    reference->parallelize(1, ParallelType::TIDx);
    propagateParallelTypes(reference);
    for (TensorView* tv : vectorized) tv->parallelize(-1, ParallelType::Vectorize);
    inlineMost(fusion);
  }
};

}  // namespace
}  // namespace acme

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, acme::FlatElementwise)
