#include "support/scan_cases.h"

#include "braze/ops/elementwise.h"
#include "braze/ops/scan.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"

namespace braze::test {

namespace {

using FusionPtr = std::unique_ptr<Fusion>;

// [d0, .., s, .., dn] -> [others merged / threads (BIDx), threads (TIDx), s (serial)], as the
// scan plugin schedules; a 1-D reference stays one serial loop in one thread.
void scheduleScan(Fusion& fusion, TensorView* reference, int64_t scan_dim, int64_t threads) {
  const int64_t rank = reference->rank();
  if (rank > 1) {
    reference->reorder({{scan_dim, rank - 1}});
    while (reference->nLoopDims() > 2) reference->merge(0);
    reference->split(0, threads);
  }
  propagateTransforms(reference);
  if (rank > 1) {
    reference->parallelize(0, ParallelType::BIDx);
    reference->parallelize(1, ParallelType::TIDx);
    propagateParallelTypes(reference);
  }
  keepIntermediatesInRegisters(fusion);
  // Every tensor as far inside the scan loop as its axes map, tensors read by several chains
  // included (inlineMost keeps those outside the loop).
  for (TensorView* tv : scheduledTensors(fusion)) {
    if (!fusion.isInput(tv)) inlineAt(tv, maxInlinePosition(tv));
  }
}

SuiteInput input(std::vector<int64_t> sizes, DataType dtype = DataType::Float32, double low = -2.0,
                 double high = 2.0) {
  SuiteInput in;
  in.dtype = dtype;
  in.sizes = std::move(sizes);
  in.low = low;
  in.high = high;
  return in;
}

// Scans along the rows (the innermost dim) with math before and after them: an exclusive sum
// from the inclusive one, a running maximum, an int32 sum in int64 and a product of values
// near 1, all carried by one serial loop per row.
FusionPtr scanRows() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* i = makeInputTensor(*fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* doubled = mul(x, 2.0);
  TensorView* exclusive = sub(cumsum(doubled, 1), doubled);
  std::vector<TensorView*> outs = {exclusive, cummax(x, -1), cumsum(i, 1), cumprod(p, 1),
                                   cummin(add(x, i), 1)};
  for (TensorView* out : outs) fusion->addOutput(out);
  scheduleScan(*fusion, outs.front(), 1, 32);
  return fusion;
}

// float16 scans along the outer dim of a padded input: cumsum accumulates in float32 between
// casts, cummin selects in float16.
FusionPtr scanOuterDimHalf() {
  auto fusion = std::make_unique<Fusion>();
  // Rows padded in memory: dim 0 is not contiguous with dim 1.
  TensorView* x = makeInputTensor(
      *fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}, .contiguity = {false, true}});
  TensorView* sums = cumsum(x, 0);
  fusion->addOutput(sums);
  fusion->addOutput(cummin(x, 0));
  scheduleScan(*fusion, sums, 0, 64);
  return fusion;
}

// The middle dim of three scanned in float64: the outer and inner dims merged around it.
FusionPtr scanMiddleDim() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3, DataType::Float64);
  TensorView* products = cumprod(x, 1);
  fusion->addOutput(products);
  fusion->addOutput(cummax(neg(x), -2));
  scheduleScan(*fusion, products, 1, 32);
  return fusion;
}

// One line: a single thread walks it.
FusionPtr scanSingleLine() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* y = cumsum(abs(x), 0);
  fusion->addOutput(y);
  scheduleScan(*fusion, y, 0, 1);
  return fusion;
}

}  // namespace

std::vector<ScheduledCase> scanCases() {
  std::vector<ScheduledCase> cases;
  cases.push_back({"scan_rows",
                   "cumsum, cummax, an int32 cumsum in int64, cumprod and cummin along rows of "
                   "45, with elementwise ops before and after; one serial loop per row",
                   scanRows,
                   {input({37, 45}), input({37, 45}, DataType::Int32, -50, 50),
                    input({37, 45}, DataType::Float32, 0.9, 1.1)},
                   Tolerance{1e-4, 1e-4},
                   {"braze::maximum(", "long long scan"}});
  SuiteInput padded = input({29, 70}, DataType::Float16);
  padded.gap_dim = 0;
  padded.gap_step = 2;
  cases.push_back({"scan_outer_dim_half",
                   "float16 cumsum (in float32) and cummin down the columns of a padded input: "
                   "the scan dim reordered innermost",
                   scanOuterDimHalf,
                   {padded},
                   Tolerance{2e-3, 2e-3},
                   {"float scan", "braze::minimum("}});
  cases.push_back({"scan_middle_dim",
                   "float64 cumprod and cummax along the middle dim of three, the others merged",
                   scanMiddleDim,
                   {input({5, 17, 6}, DataType::Float64, 0.8, 1.2)},
                   Tolerance{1e-12, 1e-12},
                   {"double scan"}});
  cases.push_back({"scan_single_line",
                   "cumsum of a 1-D tensor: one thread walks the whole line",
                   scanSingleLine,
                   {input({300})},
                   Tolerance{1e-4, 1e-4},
                   {"float scan"}});
  return cases;
}

}  // namespace braze::test
