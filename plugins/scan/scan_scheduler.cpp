#include "scan_scheduler.h"

#include "braze/error.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/outputs_problem.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/reference_dim_map.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/transform_propagation.h"
#include "braze/sched/unsupported_op_problem.h"

namespace braze::scan {

namespace {

constexpr int64_t kDefaultThreads = 128;
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;

std::optional<std::string> refusedOp(OpKind op) {
  if (isElementwise(op) || familyOf(op) == OpFamily::Scan) return std::nullopt;
  switch (op) {
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Set:
      return std::nullopt;
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Welford:
      return "reductions need a cross-thread combine; the segmenter gives them their own kernel";
    default:
      return "this scheduler covers scans with elementwise, broadcast and expand ops around them";
  }
}

// The reference dim every scan runs along, or why there is no single one.
struct ScanDim {
  int64_t dim = -1;
  std::optional<std::string> problem;
};

ScanDim scanDim(const Fusion& fusion, const TensorView* reference) {
  const ReferenceDimMap map = mapDimsToReference(fusion, reference);
  ScanDim found;
  const TensorView* first = nullptr;
  for (const Expr* expr : fusion.exprs()) {
    if (familyOf(expr->op()) != OpFamily::Scan) continue;
    const auto* out = expr->output(0)->as<TensorView>();
    const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
    const int64_t mapped = map.at(out)[dim];
    if (mapped < 0) {
      found.problem = "the scan dim " + std::to_string(dim) + " of " + out->name() +
                      " pairs with no dim of the reference output " + reference->name();
      return found;
    }
    if (first != nullptr && mapped != found.dim) {
      found.problem = first->name() + " scans along dim " + std::to_string(found.dim) +
                      " of the reference " + reference->name() + " and " + out->name() +
                      " along dim " + std::to_string(mapped) +
                      "; one serial loop per thread covers one dim";
      return found;
    }
    first = out;
    found.dim = mapped;
  }
  if (first == nullptr) {
    found.problem = "the fusion has no scan (cumsum, cumprod, cummax, cummin)";
  } else if (reference->logicalNoReductions()[static_cast<size_t>(found.dim)]->isBroadcast()) {
    found.problem = "the scan dim " + std::to_string(found.dim) + " of the reference output " +
                    reference->name() + " is a broadcast";
  }
  return found;
}

// The reference's extents for these arguments, after the core's validation of them, which
// throws on a mismatch.
std::vector<std::optional<int64_t>> referenceSizes(const Fusion& fusion,
                                                   const TensorView* reference,
                                                   const SchedulerRuntimeInfo& info) {
  ExpressionEvaluator evaluator;
  return evaluateExtents(fusion, info.arguments, reference->logicalNoReductions(), "scan scheduler",
                         evaluator);
}

// How many lines the threads walk: the product of the reference's dims other than the scan's.
int64_t lineCount(const std::vector<std::optional<int64_t>>& sizes, int64_t scan_dim) {
  int64_t lines = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (static_cast<int64_t>(d) != scan_dim) lines *= sizes[d].value_or(1);
  }
  return lines;
}

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  if (std::optional<std::string> problem = outputsProblem(fusion)) return problem;
  if (std::optional<std::string> problem = unsupportedOpProblem(fusion, refusedOp)) return problem;
  const auto* reference = fusion.outputs()[outputWithFewestBroadcasts(fusion)]->as<TensorView>();
  if (std::optional<std::string> problem = outputRankProblem(fusion, reference)) return problem;
  const ScanDim dim = scanDim(fusion, reference);
  if (dim.problem) return dim.problem;
  return unmappedOutputDimProblem(fusion, mapDimsToReference(fusion, reference), reference);
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (std::optional<std::string> problem = argumentProblem(fusion, info.arguments)) return problem;
  const auto* reference = fusion.outputs()[outputWithFewestBroadcasts(fusion)]->as<TensorView>();
  try {
    const std::vector<std::optional<int64_t>> sizes = referenceSizes(fusion, reference, info);
    for (const std::optional<int64_t>& size : sizes) {
      if (!size)
        return "an extent of the reference output " + reference->name() +
               " depends on a scalar input whose value was not given";
    }
    const int64_t lines = lineCount(sizes, scanDim(fusion, reference).dim);
    if (lines > kMaxGridX) {
      return std::to_string(lines) + " lines to scan need more blocks than a launch addresses";
    }
  } catch (const Error& error) {
    return std::string("the arguments' sizes contradict the fusion: ") + error.what();
  }
  return std::nullopt;
}

ScanParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  ScanParams params;
  params.reference_output = outputWithFewestBroadcasts(fusion);
  const auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  params.scan_dim = scanDim(fusion, reference).dim;
  // Few lines get narrower blocks, so that more SMs share them.
  const int64_t lines = lineCount(referenceSizes(fusion, reference, info), params.scan_dim);
  params.threads_per_block = kDefaultThreads;
  while (params.threads_per_block > info.device.warp_size && params.threads_per_block / 2 >= lines)
    params.threads_per_block /= 2;
  return params;
}

void schedule(Fusion& fusion, const ScanParams& params) {
  BRAZE_USER_CHECK(params.reference_output >= 0 &&
                   params.reference_output < static_cast<int64_t>(fusion.outputs().size()))
      << "scan schedule: reference_output " << params.reference_output
      << " is not an output position (the fusion has " << fusion.outputs().size()
      << " outputs); compute the params for this fusion";
  auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  const int64_t rank = reference->rank();
  BRAZE_USER_CHECK(params.scan_dim >= 0 && params.scan_dim < rank)
      << "scan schedule: scan_dim " << params.scan_dim << " is outside [0, " << rank
      << ") for reference " << reference->name() << "; compute the params for this fusion";
  BRAZE_USER_CHECK(params.threads_per_block > 0)
      << "scan schedule: threads_per_block " << params.threads_per_block
      << " must be positive; compute the params for this fusion";

  // [d0, .., s, .., dn] -> [d0 * .. * dn / t, t, s]: the scan dim stays whole, innermost and
  // serial; a 1-D fusion is one line, walked by one thread.
  if (rank > 1) {
    reference->reorder({{params.scan_dim, rank - 1}});
    while (reference->nLoopDims() > 2) reference->merge(0);
    reference->split(0, params.threads_per_block);
  }
  propagateTransforms(reference);
  if (rank > 1) {
    reference->parallelize(0, ParallelType::BIDx);
    reference->parallelize(1, ParallelType::TIDx);
    propagateParallelTypes(reference);
  }
  keepIntermediatesInRegisters(fusion);
  inlineMost(fusion);
  // inlineMost leaves a tensor that several chains read (x + bias feeding both cumsum and
  // cummax) outside the scan loop, as their loops are not shared yet; there it would need a
  // register per step of the scan. Inlined as far as its axes map, it pulls its readers into one
  // loop nest and is computed once per step.
  for (TensorView* tv : scheduledTensors(fusion)) {
    if (!fusion.isInput(tv)) inlineAt(tv, maxInlinePosition(tv));
  }
}

}  // namespace braze::scan
