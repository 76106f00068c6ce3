#include "pointwise_scheduler.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "braze/error.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/indexed_inputs.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/outputs_problem.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/reference_dim_map.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/transform_propagation.h"
#include "braze/sched/unsupported_op_problem.h"
#include "braze/sched/vectorization.h"

namespace braze::pointwise {

namespace {

constexpr int64_t kMaxVectorBytes = 16;
constexpr int64_t kDefaultThreads = 128;
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridY = 65535;

// Per tensor, per dim (pointwise tensors have no reduced dims): the reference dim it
// indexes, or -1.
using DimMap = ReferenceDimMap;

int64_t positionOf(const TensorView* tv, const IterDomain* id) {
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  const auto it = std::find(dims.begin(), dims.end(), id);
  return it == dims.end() ? -1 : static_cast<int64_t>(it - dims.begin());
}

// The reference dims where `tv` holds real (not broadcast) data.
std::vector<bool> presentDims(const TensorView* tv, const DimMap& map, int64_t rank) {
  std::vector<bool> present(rank, false);
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  const std::vector<int64_t>& to_ref = map.at(tv);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i]->isBroadcast() && to_ref[i] >= 0) present[to_ref[i]] = true;
  }
  return present;
}

// Whether `expr` reads input `input` at positions shifted from its output's (and guarded by
// its bounds): the data of slice and pad, every tensor of cat.
bool isShiftedOperand(const Expr& expr, size_t input) {
  switch (expr.op()) {
    case OpKind::Slice:
    case OpKind::Pad:
      return input == 0;
    case OpKind::Cat:
      return expr.input(input)->isA<TensorView>();
    default:
      return false;
  }
}

// The tensors read away from the reference's positions: at data-dependent positions
// (indexed_inputs.h) or shifted ones. A thread reads elements of them that other threads'
// loop positions hold, so they are read from global memory and never cached along the loop.
std::vector<TensorView*> offPositionTensors(const Fusion& fusion) {
  std::vector<TensorView*> tensors = indexedTensors(fusion);
  for (const Expr* expr : fusion.exprs()) {
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* tv = expr->input(i)->dynCast<TensorView>();
      if (tv == nullptr || !isShiftedOperand(*expr, i)) continue;
      if (std::find(tensors.begin(), tensors.end(), tv) == tensors.end()) tensors.push_back(tv);
    }
  }
  return tensors;
}

// Why a shifted read cannot be in this kernel, or nullopt: the tensor is computed in the
// fusion. Its producer's loop would run at the reader's positions, not the tensor's own.
std::optional<std::string> shiftedIntermediateProblem(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      const auto* tv = expr->input(i)->dynCast<TensorView>();
      if (tv == nullptr || !isShiftedOperand(*expr, i) || fusion.isInput(tv)) continue;
      return std::string(toString(expr->op())) + " reads " + tv->name() +
             " at shifted positions, and " + tv->name() +
             " is computed in this fusion: its producer must be another kernel";
    }
  }
  return std::nullopt;
}

// Whether an input has none of the row dims [0, break_point): every row reads it again. An
// indexed input (an embedding table) has none of them either, but each row reads other data.
bool rowInvariantInput(const Fusion& fusion, const DimMap& map, int64_t break_point, int64_t rank) {
  const std::vector<TensorView*> indexed = offPositionTensors(fusion);
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr || tv->rank() == 0) continue;
    if (std::find(indexed.begin(), indexed.end(), tv) != indexed.end()) continue;
    const std::vector<bool> present = presentDims(tv, map, rank);
    if (std::none_of(present.begin(), present.begin() + break_point, [](bool p) { return p; }))
      return true;
  }
  return false;
}

// The reference dims the vector walks: the non-broadcast dims of [first, rank).
std::vector<int64_t> vectorSide(const TensorView* reference, int64_t first) {
  std::vector<int64_t> side;
  const std::vector<IterDomain*> dims = reference->logicalNoReductions();
  for (int64_t d = first; d < static_cast<int64_t>(dims.size()); ++d) {
    if (!dims[d]->isBroadcast()) side.push_back(d);
  }
  return side;
}

// True when `tv` holds every dim of the vectorized side and those dims are its innermost in
// memory, in the reference's order: then consecutive loop iterations are consecutive
// addresses of `tv`.
bool followsReference(const TensorView* tv, const DimMap& map, const TensorView* reference,
                      int64_t break_point) {
  const std::vector<int64_t> side = vectorSide(reference, break_point);
  if (side.empty()) return false;
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  const std::vector<int64_t>& to_ref = map.at(tv);
  std::vector<int64_t> memory_order;  // reference dims of tv's real dims, outermost first
  for (const int64_t position : tv->allocationOrder()) {
    if (to_ref[position] < 0) return false;  // a dim the loop does not walk (squeezed away)
    if (dims[position]->isBroadcast()) continue;
    memory_order.push_back(to_ref[position]);
  }
  if (memory_order.size() < side.size()) return false;
  return std::equal(side.begin(), side.end(), memory_order.end() - side.size());
}

// Break points b where every input holds either all or none of each side's real dims, and
// some input holds none of one side (so 2D saves its index arithmetic). Indexed inputs are not
// read along the loop's dims, so they have no say.
std::optional<int64_t> chooseBreakPoint(const Fusion& fusion, const TensorView* reference,
                                        const DimMap& map) {
  const int64_t rank = reference->rank();
  const std::vector<TensorView*> indexed = offPositionTensors(fusion);
  for (int64_t b = 1; b < rank; ++b) {
    const std::vector<int64_t> outer = [&] {
      std::vector<int64_t> all = vectorSide(reference, 0), result;
      for (int64_t d : all)
        if (d < b) result.push_back(d);
      return result;
    }();
    const std::vector<int64_t> inner = vectorSide(reference, b);
    if (outer.empty() || inner.empty()) continue;
    bool valid = true;
    bool useful = false;
    for (const Val* input : fusion.inputs()) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || std::find(indexed.begin(), indexed.end(), tv) != indexed.end()) continue;
      const std::vector<bool> present = presentDims(tv, map, rank);
      for (const std::vector<int64_t>* side : {&outer, &inner}) {
        const auto held =
            std::count_if(side->begin(), side->end(), [&](int64_t d) { return present[d]; });
        if (held != 0 && held != static_cast<int64_t>(side->size())) valid = false;
        if (held == 0) useful = true;
      }
    }
    if (valid && useful) return b;
  }
  return std::nullopt;
}

std::optional<std::string> refusedOp(OpKind op) {
  if (isElementwise(op)) return std::nullopt;
  switch (op) {
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Permute:
    case OpKind::Squeeze:
    case OpKind::Set:
    // Factories compute each element from its position in their own logical domain, which the
    // kernel has wherever the tensor is inlined.
    case OpKind::Full:
    case OpKind::Iota:
    case OpKind::Uniform:
    case OpKind::Normal:
    case OpKind::Select:
    case OpKind::IndexSelect:
    case OpKind::Gather:
    // Shifted and guarded reads of fusion inputs (shiftedIntermediateProblem).
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Cat:
      return std::nullopt;
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Welford:
      return "reductions need a cross-thread combine; use the reduction scheduler";
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Cummax:
    case OpKind::Cummin:
      return "a scan carries a running value along its dim; use the scan scheduler";
    case OpKind::Matmul:
    case OpKind::Linear:
      return "matmul and linear need a tiled contraction; use a matmul scheduler";
    case OpKind::Reshape:
      return "reshape regroups dims, so the reference's loop cannot be mapped onto its input";
    default:
      return "this op is not pointwise";
  }
}

// The reference's extents for these arguments, after the core's validation of them (counts,
// dtypes, ranks, fixed and shared sizes, broadcast dims, layouts), which throws on a mismatch.
std::vector<std::optional<int64_t>> referenceSizes(const Fusion& fusion,
                                                   const TensorView* reference,
                                                   const SchedulerRuntimeInfo& info) {
  ExpressionEvaluator evaluator;
  return evaluateExtents(fusion, info.arguments, reference->logicalNoReductions(),
                         "pointwise scheduler", evaluator);
}

int64_t product(const std::vector<std::optional<int64_t>>& sizes, int64_t first, int64_t last) {
  int64_t n = 1;
  for (int64_t d = first; d < last; ++d) n *= sizes[d].value_or(1);
  return n;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The vectorized tensors: inputs and outputs that follow the reference along the vector side.
struct VectorPlan {
  std::vector<TensorView*> inputs;
  std::vector<TensorView*> outputs;
};

VectorPlan vectorPlan(const Fusion& fusion, const TensorView* reference, const DimMap& map,
                      int64_t break_point) {
  VectorPlan plan;
  // A cached copy of an indexed input would be read by other threads than the ones that load
  // it (and cacheAfter redirects every reader to the copy).
  const std::vector<TensorView*> indexed = offPositionTensors(fusion);
  for (Val* input : fusion.inputs()) {
    auto* tv = input->dynCast<TensorView>();
    if (tv != nullptr && !consumersOf(tv).empty() &&
        std::find(indexed.begin(), indexed.end(), tv) == indexed.end() &&
        followsReference(tv, map, reference, break_point))
      plan.inputs.push_back(tv);
  }
  for (Val* output : fusion.outputs()) {
    auto* tv = output->as<TensorView>();
    if (!fusion.isInput(tv) && followsReference(tv, map, reference, break_point))
      plan.outputs.push_back(tv);
  }
  return plan;
}

// The widest width every vectorized tensor allows for these arguments.
int64_t vectorWidth(const Fusion& fusion, const VectorPlan& plan, const DimMap& map,
                    int64_t break_point, const SchedulerRuntimeInfo& info, int64_t inner_elements) {
  std::vector<TensorView*> tensors = plan.inputs;
  tensors.insert(tensors.end(), plan.outputs.begin(), plan.outputs.end());
  if (tensors.empty()) return 1;
  int64_t width = commonVectorWidth(tensors, kMaxVectorBytes);
  const auto fits = [&](int64_t w) {
    if (inner_elements % w != 0) return false;
    for (TensorView* tv : plan.inputs) {
      const size_t index = fusion.inputIndex(tv);
      const auto& actual = std::get<TensorArgumentInfo>(info.arguments[index]);
      if (vectorAlignment(info, index) % (w * sizeInBytes(tv->dtype())) != 0) return false;
      // The vectorized dims are merged into one loop: a gap between them (padded rows, an
      // inner stride) would put a vector across it.
      const std::vector<IterDomain*> dims = tv->logicalNoReductions();
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d]->isBroadcast() || map.at(tv)[d] < break_point) continue;
        if (!tv->contiguity()[d].value_or(true)) return false;
      }
      const VectorizationLimit limit = vectorizationLimit(tv, kMaxVectorBytes);
      int64_t run = 1;
      for (const IterDomain* id : limit.dims) run *= actual.sizes[positionOf(tv, id)];
      if (run % w != 0) return false;
      for (const IterDomain* id : limit.strides_to_check) {
        if (actual.strides[positionOf(tv, id)] % w != 0) return false;
      }
    }
    return true;
  };
  while (width > 1 && !fits(width)) width /= 2;
  return width;
}

// Why the reference's transforms cannot reach an output of index_select (take), slice, pad or
// cat whole, or nullopt. Its dims pair with the index's (the picked ones) and the table's (the
// rest), or not at all along a resized dim, never all with one neighbour, so transform
// propagation must reach it from a consumer: it must be the reference or feed it.
//
//   T2 = take(T1, T0) [i, j, d]; T3 = take(T1, T0) [i, j, d]; outputs T2 (reference), T3
//   T3 is reached through T0 (i, j) or T1 (d) only: refused, two kernels.
std::optional<std::string> detachedResizeProblem(const Fusion& fusion,
                                                 const TensorView* reference) {
  std::unordered_set<const TensorView*> feeds_reference = {reference};
  const std::vector<Expr*> exprs = fusion.exprs();
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* expr = *it;
    const bool feeds = std::any_of(expr->outputs().begin(), expr->outputs().end(), [&](Val* out) {
      const auto* tv = out->dynCast<TensorView>();
      return tv != nullptr && feeds_reference.count(tv) > 0;
    });
    if (!feeds) continue;
    for (Val* input : expr->inputs()) {
      if (const auto* tv = input->dynCast<TensorView>()) feeds_reference.insert(tv);
    }
  }
  for (const Expr* expr : exprs) {
    const OpKind op = expr->op();
    if (op != OpKind::IndexSelect && op != OpKind::Slice && op != OpKind::Pad && op != OpKind::Cat)
      continue;
    const auto* out = expr->output(0)->as<TensorView>();
    if (feeds_reference.count(out) > 0) continue;
    return "the " + std::string(toString(op)) + " output " + out->name() +
           " does not feed the reference output " + reference->name() +
           ", so the reference's loop reaches it only through " +
           (op == OpKind::IndexSelect ? "its index or its table, each of which pairs"
                                      : "its inputs, which pair") +
           " only some of its dims";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  if (std::optional<std::string> problem = outputsProblem(fusion)) return problem;
  if (std::optional<std::string> problem = unsupportedOpProblem(fusion, refusedOp)) return problem;
  if (std::optional<std::string> problem = indexedIntermediateProblem(fusion)) return problem;
  if (std::optional<std::string> problem = shiftedIntermediateProblem(fusion)) return problem;
  const auto* reference = fusion.outputs()[outputWithFewestBroadcasts(fusion)]->as<TensorView>();
  const DimMap map = mapDimsToReference(fusion, reference);
  if (std::optional<std::string> problem = outputRankProblem(fusion, reference)) return problem;
  if (std::optional<std::string> problem = detachedResizeProblem(fusion, reference)) return problem;
  // Pointwise tensors have no reduced dims: logical and user-visible dims are the same.
  return unmappedOutputDimProblem(fusion, map, reference);
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (std::optional<std::string> problem = argumentProblem(fusion, info.arguments)) return problem;
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const auto* tv = fusion.inputs()[i]->dynCast<TensorView>();
    if (tv == nullptr) continue;
    const auto& actual = std::get<TensorArgumentInfo>(info.arguments[i]);
    const std::vector<IterDomain*> dims = tv->logicalNoReductions();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d]->isBroadcast() && actual.sizes[d] != 1) {
        return "dim " + std::to_string(d) + " of input " + std::to_string(i) + " (" + tv->name() +
               ") is declared broadcast (size 1) but its argument has size " +
               std::to_string(actual.sizes[d]);
      }
    }
  }
  const auto* reference = fusion.outputs()[outputWithFewestBroadcasts(fusion)]->as<TensorView>();
  try {
    ExpressionEvaluator evaluator;
    for (const std::optional<int64_t>& size :
         evaluateExtents(fusion, info.arguments, reference->logicalNoReductions(),
                         "pointwise scheduler", evaluator)) {
      if (!size)
        return "an extent of the reference output " + reference->name() +
               " depends on a scalar input whose value was not given";
    }
    if (std::optional<std::string> problem = emptyIndexedDimProblem(fusion, evaluator))
      return problem;
  } catch (const Error& error) {
    return std::string("the arguments' sizes contradict the fusion: ") + error.what();
  }
  return std::nullopt;
}

namespace {

// The heuristics, with the 2D shape when `rows` allows it and the fusion has a break point.
PointwiseParams heuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info, bool rows) {
  PointwiseParams params;
  params.reference_output = outputWithFewestBroadcasts(fusion);
  const auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  const int64_t rank = reference->rank();
  const DimMap map = mapDimsToReference(fusion, reference);
  const std::vector<std::optional<int64_t>> sizes = referenceSizes(fusion, reference, info);

  if (const std::optional<int64_t> b = chooseBreakPoint(fusion, reference, map); b && rows) {
    params.break_point = *b;
  }
  const int64_t inner = product(sizes, params.break_point, rank);
  const int64_t outer = product(sizes, 0, params.break_point);

  const VectorPlan plan = vectorPlan(fusion, reference, map, params.break_point);
  params.vector_width = vectorWidth(fusion, plan, map, params.break_point, info, inner);

  // Small problems get narrower blocks so that more SMs share the work. 2D rows shorter than
  // a block get a block of their own width, with rows stacked along threadIdx.y to fill it.
  const int64_t vectors_per_row = ceilDiv(inner, params.vector_width);
  const bool two_d = params.break_point > 0;
  const int64_t min_threads = two_d ? 1 : info.device.warp_size;
  params.threads_per_block = kDefaultThreads;
  while (params.threads_per_block > min_threads && params.threads_per_block / 2 >= vectors_per_row)
    params.threads_per_block /= 2;
  if (two_d) {
    params.rows_per_block = std::clamp<int64_t>(kDefaultThreads / params.threads_per_block, 1,
                                                std::max<int64_t>(outer, 1));
  }
  const int64_t block_threads = params.threads_per_block * params.rows_per_block;

  // Unroll only while the grid still fills the device once: more bytes in flight per thread
  // at no loss of parallelism. Over rows when an input is the same for every row (a bias: each
  // thread then loads its vectors once for all its rows; bf16 x * w + b with rows of 4096 went
  // from 79% to 97% of copy on an H200, GELU with a bias from 90% to 94%) or when a thread has one
  // vector of a row; else along the row.
  const int64_t resident_blocks =
      static_cast<int64_t>(info.device.sm_count) * (info.device.max_threads_per_sm / block_threads);
  const int64_t vectors_per_thread = ceilDiv(vectors_per_row, params.threads_per_block);
  const int64_t row_groups = ceilDiv(outer, params.rows_per_block);
  const auto fills = [&](int64_t row_unroll, int64_t unroll) {
    return ceilDiv(row_groups, row_unroll) *
               ceilDiv(vectors_per_row, params.threads_per_block * unroll) >=
           resident_blocks;
  };
  const auto unroll_rows = [&] {
    for (const int64_t unroll : {4, 2}) {
      if (fills(unroll, 1)) {
        params.row_unroll = unroll;
        return;
      }
    }
  };
  if (two_d && rowInvariantInput(fusion, map, params.break_point, rank)) unroll_rows();
  if (params.row_unroll == 1) {
    for (const int64_t unroll : {4, 2}) {
      if (two_d && unroll > vectors_per_thread) continue;
      if (fills(1, unroll)) {
        params.unroll = unroll;
        break;
      }
    }
  }
  if (two_d && params.unroll == 1 && params.row_unroll == 1) unroll_rows();
  params.blocks =
      std::max<int64_t>(1, ceilDiv(vectors_per_row, params.threads_per_block * params.unroll));
  if (two_d) {
    // Rows beyond what gridDim.y addresses go to gridDim.x; rows of more blocks than gridDim.y
    // allows too (rare: both huge) take the 1D loop instead.
    const int64_t row_blocks = ceilDiv(row_groups, params.row_unroll);
    if (row_blocks > kMaxGridY) {
      if (params.blocks <= kMaxGridY) {
        params.rows_on_x = true;
      } else {
        return heuristics(fusion, info, /*rows=*/false);
      }
    }
  }
  if (params.break_point == 0 && params.blocks > kMaxGridX) {
    params.grid_stride = true;
    params.blocks = resident_blocks;
  }
  return params;
}

}  // namespace

PointwiseParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  return heuristics(fusion, info, /*rows=*/true);
}

void schedule(Fusion& fusion, const PointwiseParams& params) {
  BRAZE_USER_CHECK(params.reference_output >= 0 &&
                   params.reference_output < static_cast<int64_t>(fusion.outputs().size()))
      << "pointwise schedule: reference_output " << params.reference_output
      << " is not an output position (the fusion has " << fusion.outputs().size()
      << " outputs); compute the params for this fusion";
  auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  const int64_t rank = reference->rank();
  BRAZE_USER_CHECK(params.break_point >= 0 && params.break_point < std::max<int64_t>(rank, 1))
      << "pointwise schedule: break_point " << params.break_point << " is outside [0, " << rank
      << ") for reference " << reference->name() << "; compute the params for this fusion";
  const DimMap map = mapDimsToReference(fusion, reference);
  const VectorPlan plan = vectorPlan(fusion, reference, map, params.break_point);

  // Vectors move between global memory and registers through cached copies.
  std::vector<TensorView*> vectorized;
  if (params.vector_width > 1) {
    for (TensorView* input : plan.inputs) vectorized.push_back(input->cacheAfter());
    for (TensorView* output : plan.outputs) {
      output->cacheBefore();
      vectorized.push_back(output);
    }
  }

  // 1D: [inner] -> [blocks, unroll, threads, vector].
  // 2D: [outer, inner] -> [row blocks, blocks, row unroll, rows, unroll, threads, vector].
  if (rank == 0) return;
  const int64_t b = params.break_point;
  for (int64_t i = 1; i < b; ++i) reference->merge(0, 1);
  while (reference->nLoopDims() > (b > 0 ? 2 : 1)) reference->merge(b > 0 ? 1 : 0);
  int64_t axis = b > 0 ? 1 : 0;
  if (params.vector_width > 1) reference->split(axis, params.vector_width);
  reference->split(axis, params.threads_per_block);
  if (params.unroll > 1) reference->split(axis, params.unroll);
  if (params.grid_stride) {
    reference->split(axis, params.blocks);
    ++axis;  // the serial loop stays outside the blocks
  }
  // 2D rows: [outer, ...] -> [outer / (u r), u, r, ...], then the row blocks next to the
  // blocks along the row: [outer / (u r), blocks, u, r, ...].
  int64_t row_axes = 0;
  if (b > 0) {
    if (params.rows_per_block > 1) {
      reference->split(0, params.rows_per_block);
      ++row_axes;
    }
    if (params.row_unroll > 1) {
      reference->split(0, params.row_unroll);
      ++row_axes;
    }
    axis += row_axes;
    if (row_axes > 0) reference->reorder({{axis, 1}});
  }
  propagateTransforms(reference);

  const int64_t blocks_axis = b > 0 ? 1 : axis;
  if (b > 0) {
    reference->parallelize(0, params.rows_on_x ? ParallelType::BIDx : ParallelType::BIDy);
    int64_t row_axis = 2;
    if (params.row_unroll > 1) reference->parallelize(row_axis++, ParallelType::Unroll);
    if (params.rows_per_block > 1) reference->parallelize(row_axis, ParallelType::TIDy);
  }
  reference->parallelize(blocks_axis,
                         b > 0 && params.rows_on_x ? ParallelType::BIDy : ParallelType::BIDx);
  const int64_t after_rows = b > 0 ? 2 + row_axes : axis + 1;
  if (params.unroll > 1) reference->parallelize(after_rows, ParallelType::Unroll);
  const int64_t threads_axis = after_rows + (params.unroll > 1 ? 1 : 0);
  reference->parallelize(threads_axis, ParallelType::TIDx);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
  for (TensorView* tv : vectorized) tv->parallelize(-1, ParallelType::Vectorize);
  inlineMost(fusion);
}

}  // namespace braze::pointwise
