#include "support/scheduled_suite.h"

#include <gtest/gtest.h>

#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"
#include "support/random_tensor.h"
#include "support/scan_cases.h"

namespace braze::test {

namespace {

using FusionPtr = std::unique_ptr<Fusion>;

// Every intermediate in registers, as schedulers leave them unless they choose shared memory.
void keepIntermediatesInRegisters(Fusion& fusion) {
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv) || fusion.isOutput(tv)) continue;
    if (tv->memoryType() == MemoryType::Global) tv->setMemoryType(MemoryType::Local);
  }
}

// The common pointwise shape: all dims of `reference` merged into one, split by `threads`
// (and by `vector` first, innermost), blocks on BIDx and threads on TIDx, propagated to every
// tensor, then inlined as far as possible.
void schedulePointwise(Fusion& fusion, TensorView* reference, int64_t threads, int64_t vector = 1) {
  while (reference->nLoopDims() > 1) reference->merge(0, 1);
  if (vector > 1) reference->split(0, vector);
  reference->split(0, threads);
  propagateTransforms(reference);
  reference->parallelize(0, ParallelType::BIDx);
  reference->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
}

SuiteInput tensorInput(std::vector<int64_t> sizes, DataType dtype = DataType::Float32) {
  SuiteInput input;
  input.dtype = dtype;
  input.sizes = std::move(sizes);
  return input;
}

// ---- pointwise ----------------------------------------------------------------------------

FusionPtr pointwiseBroadcast() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* bias = makeSymbolicTensor(*fusion, 1);
  TensorView* y = relu(add(x, broadcast(bias, {true, false})));
  fusion->addOutput(y);
  schedulePointwise(*fusion, y, 128);
  inlineMost(*fusion);
  return fusion;
}

// Cached loads and stores as 16-byte vectors; the math runs on registers in between.
FusionPtr vectorizedFloat(DataType dtype, int64_t vector) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeInputTensor(*fusion, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* b = makeInputTensor(*fusion, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* y = add(mul(a, 2.0), b);
  fusion->addOutput(y);
  TensorView* a_cache = a->cacheAfter();
  TensorView* b_cache = b->cacheAfter();
  y->cacheBefore();
  schedulePointwise(*fusion, y, 128, vector);
  y->parallelize(2, ParallelType::Vectorize);
  a_cache->parallelize(2, ParallelType::Vectorize);
  b_cache->parallelize(2, ParallelType::Vectorize);
  inlineMost(*fusion);
  return fusion;
}

// x + bias[None, :] with vector loads of x: the broadcast (and bias's cache) are computed in
// the consumer's vector loop, along a merge of the broadcast dim with the row.
FusionPtr broadcastVectorize() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* bias = makeSymbolicTensor(*fusion, 1);
  TensorView* y = add(x, broadcast(bias, {true, false}));
  fusion->addOutput(y);
  TensorView* x_cache = x->cacheAfter();
  // bias is cached too, but read element by element: its elements are not consecutive along
  // the merged loop (a row boundary may fall inside a vector).
  bias->cacheAfter();
  y->cacheBefore();
  schedulePointwise(*fusion, y, 128, 4);
  y->parallelize(2, ParallelType::Vectorize);
  x_cache->parallelize(2, ParallelType::Vectorize);
  inlineMost(*fusion);
  return fusion;
}

// nvFuser's pointwise shape: [blocks, unswitch 1, threads 128, vector 4]: every vector access
// of a thread under one hoisted bounds check.
FusionPtr unswitchVectorize() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2);
  TensorView* b = makeSymbolicTensor(*fusion, 2);
  TensorView* y = sub(a, b);
  fusion->addOutput(y);
  TensorView* a_cache = a->cacheAfter();
  TensorView* b_cache = b->cacheAfter();
  y->cacheBefore();
  y->merge(0, 1);
  y->split(0, 4);
  y->split(0, 128);
  y->split(0, 1);
  propagateTransforms(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::Unswitch);
  y->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(y);
  keepIntermediatesInRegisters(*fusion);
  for (TensorView* tv : {y, a_cache, b_cache}) tv->parallelize(3, ParallelType::Vectorize);
  inlineMost(*fusion);
  return fusion;
}

// [blocks, unswitch 1, unroll 4, threads 128]: the bounds of all four unrolled iterations are
// checked once, in front of the nest.
FusionPtr unrollUnswitchHalf() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* y = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* out = mul(add(x, y), 0.5);
  fusion->addOutput(out);
  out->merge(0, 1);
  out->split(0, 128);
  out->split(0, 4);
  out->split(0, 1);
  propagateTransforms(out);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::Unswitch);
  out->parallelize(2, ParallelType::Unroll);
  out->parallelize(3, ParallelType::TIDx);
  propagateParallelTypes(out);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

FusionPtr castChain() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1}});
  TensorView* t = mul(cast(x, DataType::Float32), 3.0);
  t = cast(cast(t, DataType::BFloat16), DataType::Float32);
  t = cast(add(t, 1.0), DataType::Float64);
  t = sqrt(abs(t));
  TensorView* out = cast(t, DataType::Float16);
  fusion->addOutput(out);
  schedulePointwise(*fusion, out, 128);
  inlineMost(*fusion);
  return fusion;
}

// Two splits where the inner one does not divide: [N/128, 43, 3] covers 129 > 128 elements per
// block, so both the block's range and the whole extent need a predicate.
FusionPtr nonDivisibleNested() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* out = mul(x, 2.0);
  fusion->addOutput(out);
  out->split(0, 128);
  out->split(1, 3);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  return fusion;
}

// A row-padded input (rows further apart than their length) and a column-major one.
FusionPtr nonContiguousInputs() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* padded = makeInputTensor(
      *fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, true}});
  TensorView* column_major = makeInputTensor(
      *fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  TensorView* out = sub(padded, column_major);
  fusion->addOutput(out);
  schedulePointwise(*fusion, out, 128);
  inlineMost(*fusion);
  return fusion;
}

// A 32x32 tile of the input goes through shared memory, read and written along TIDx so that
// both global accesses are coalesced.
FusionPtr transposeShared() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = transpose(x, 0, 1);
  fusion->addOutput(out);
  TensorView* tile = x->cacheAfter();
  tile->setMemoryType(MemoryType::Shared);
  out->split(0, 32);
  out->split(2, 32);
  out->reorder({{1, 2}, {2, 1}});
  out->merge(0, 1);
  propagateTransforms(out);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDy);
  out->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(out);
  // The tile is read from global memory along the input's rows.
  tile->reorder({{1, 2}, {2, 1}});
  tile->parallelize(1, ParallelType::Serial);
  tile->parallelize(2, ParallelType::Serial);
  tile->parallelize(1, ParallelType::TIDy);
  tile->parallelize(2, ParallelType::TIDx);
  inlineAt(tile, 1);
  return fusion;
}

// A row kept in shared memory across its reduction: x * sum(x) per row, each row on a block of
// ceil(n / per_thread) threads (n known only at launch unless given). The row's cache is
// sized by the launch, so it lives in dynamic shared memory, before the block reduction's
// scratch; each thread reads back only what it wrote, so no barrier guards it.
FusionPtr rowInSharedMemory(std::optional<int64_t> row_length, int64_t per_thread) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.sizes = {-1, row_length.value_or(-1)}});
  TensorView* total = sum(x, {1});
  TensorView* out = mul(x, broadcast(total, {false, true}));
  fusion->addOutput(out);
  TensorView* row = x->cacheAfter();
  out->split(1, per_thread, /*inner_split=*/false);
  propagateTransforms(out);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(out);
  total->rFactor({1});
  keepIntermediatesInRegisters(*fusion);
  row->setMemoryType(MemoryType::Shared);
  inlineMost(*fusion);
  inlineAt(row, 1);
  return fusion;
}

// A naive transpose: each thread reads one strided element.
FusionPtr transposePointwise() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3);
  TensorView* out = permute(exp(x), {2, 0, 1});
  fusion->addOutput(out);
  schedulePointwise(*fusion, out, 128);
  inlineMost(*fusion);
  return fusion;
}

// Scalar inputs of the fusion as kernel parameters, and an iota over a tensor's extent.
FusionPtr scalarInputs() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  Scalar* scale = makeInputScalar(*fusion, DataType::Float32);
  Scalar* offset = makeInputScalar(*fusion, DataType::Int64);
  TensorView* positions = iota(*fusion, x->axis(0)->extent(), offset, int64_t{2});
  TensorView* scaled = mul(x, scale);
  TensorView* out =
      add(where(gt(x, scale), scaled, neg(scaled)), cast(positions, DataType::Float32));
  fusion->addOutput(out);
  schedulePointwise(*fusion, out, 128);
  inlineMost(*fusion);
  return fusion;
}

// Shape ops whose indices are shifted or guarded (slice, pad, cat, select), unscheduled: one
// serial loop nest per tensor, intermediates in global memory.
FusionPtr shapeOpsSerial() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = makeSymbolicTensor(*fusion, 2);
  TensorView* sliced = slice(x, 1, int64_t{1}, std::nullopt, int64_t{2});
  TensorView* padded = pad(sliced, {int64_t{2}, int64_t{1}}, 0.5);
  TensorView* joined = cat({padded, y}, 0);
  fusion->addOutput(exp(joined));
  fusion->addOutput(select(x, 0, int64_t{-1}));
  return fusion;
}

// Indexing and data-movement ops, unscheduled: index_select and gather with negative indices,
// reshape, expand of a broadcast into a materialized output, squeeze, full.
FusionPtr indexingOpsSerial() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {6, 4}});
  TensorView* rows = makeInputTensor(*fusion, {.dtype = DataType::Int64, .sizes = {5}});
  TensorView* cols = makeInputTensor(*fusion, {.dtype = DataType::Int64, .sizes = {6, 3}});
  TensorView* column = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {6, 1}});
  fusion->addOutput(index_select(x, 0, rows));
  fusion->addOutput(gather(x, 1, cols));
  fusion->addOutput(reshape(add(x, 1.0), {int64_t{3}, int64_t{8}}));
  fusion->addOutput(expand(column, {int64_t{-1}, int64_t{5}}));
  fusion->addOutput(add(squeeze(column, {1}), full(*fusion, {int64_t{6}}, 2.5, DataType::Float32)));
  return fusion;
}

// Every elementwise op of every family, on floats, halves, integers and bools, as one
// pointwise kernel with many outputs.
FusionPtr elementwiseOps() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* y = makeSymbolicTensor(*fusion, 1);
  TensorView* h = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1}});
  TensorView* a = makeInputTensor(*fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  TensorView* b = makeInputTensor(*fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  std::vector<TensorView*> outs;
  using Unary = TensorView* (*)(TensorView*);
  using Binary = TensorView* (*)(TensorView*, TensorView*);
  for (Unary op : std::initializer_list<Unary>{
           neg, abs,  exp,     exp2, expm1, log, log2, log1p, sqrt, rsqrt, reciprocal, sin, cos,
           tan, tanh, sigmoid, relu, silu,  erf, erfc, floor, ceil, round, trunc,      sign}) {
    outs.push_back(op(x));
  }
  outs.push_back(gelu(x));
  outs.push_back(gelu(h, GeluApproximation::Tanh));
  outs.push_back(exp(h));
  for (Unary op : std::initializer_list<Unary>{isnan, isinf, isfinite})
    outs.push_back(op(log(sub(x, 0.5))));
  for (Binary op : std::initializer_list<Binary>{add, sub, mul, div, truediv, remainder, fmod, pow,
                                                 maximum, minimum, atan2}) {
    outs.push_back(op(x, y));
  }
  for (Binary op : std::initializer_list<Binary>{eq, ne, lt, le, gt, ge}) outs.push_back(op(x, y));
  outs.push_back(lt(a, 0));
  for (Binary op : std::initializer_list<Binary>{add, sub, mul, div, remainder, fmod, maximum,
                                                 minimum, bitwise_and, bitwise_or, bitwise_xor}) {
    outs.push_back(op(a, b));
  }
  outs.push_back(pow(b, 3));
  outs.push_back(left_shift(a, 3));
  outs.push_back(right_shift(b, 2));
  outs.push_back(truediv(a, 4));
  outs.push_back(abs(a));
  outs.push_back(neg(b));
  outs.push_back(bitwise_not(a));
  TensorView* p = gt(x, 0.8);
  TensorView* q = lt(y, 0.4);
  for (Binary op : std::initializer_list<Binary>{logical_and, logical_or, logical_xor})
    outs.push_back(op(p, q));
  outs.push_back(logical_not(p));
  outs.push_back(bitwise_not(p));
  outs.push_back(where(p, x, y));
  outs.push_back(clamp(x, 0.3, 0.9));
  outs.push_back(lerp(x, y, 0.25));
  outs.push_back(addcmul(x, y, h, 0.5));
  outs.push_back(cast(a, DataType::Float64));
  outs.push_back(cast(x, DataType::Int32));
  outs.push_back(cast(h, DataType::BFloat16));
  outs.push_back(cast(p, DataType::Float32));
  outs.push_back(add(h, h));
  for (TensorView* out : outs) fusion->addOutput(out);
  TensorView* reference = outs.front();
  reference->split(0, 128);
  propagateTransforms(reference);
  reference->parallelize(0, ParallelType::BIDx);
  reference->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

// signbit, nextafter, gcd, logical_right_shift, set and triu (iotas, broadcasts and a where) in
// one pointwise kernel with many outputs; every result is exact, so the GPU must match the
// reference evaluator bit for bit.
FusionPtr torchOps() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* h = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* a = makeInputTensor(*fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  TensorView* b = makeInputTensor(*fusion, {.dtype = DataType::Int64, .sizes = {-1, -1}});
  // The first output reads every input, so that the schedule propagates from it to all; it
  // selects rather than adds, so that it is exact on both sides (the case compares exactly:
  // float sums round differently in a kernel and in the float64 reference).
  TensorView* all = where(signbit(h), x, cast(add(a, b), DataType::Float32));
  std::vector<TensorView*> outs = {all,
                                   triu(x, 1),
                                   signbit(x),
                                   signbit(h),
                                   signbit(a),
                                   signbit(neg(mul(x, 0.0))),  // -0.0 where x > 0
                                   nextafter(x, 0.0),
                                   nextafter(cast(x, DataType::Float64), x),
                                   gcd(a, b),
                                   gcd(a, 6),
                                   gcd(a, 0),
                                   logical_right_shift(a, 3),
                                   logical_right_shift(b, a),
                                   logical_right_shift(a, add(b, 25)),
                                   set(x),
                                   triu(a, -1)};
  for (TensorView* out : outs) fusion->addOutput(out);
  schedulePointwise(*fusion, outs.front(), 128);
  inlineMost(*fusion);
  return fusion;
}

// uniform or normal tensors shaped like a 2-D input, with the Philox seed and offset as scalar
// inputs: added to the input (registers), returned directly (global), made transposed and read
// through a permute (the element's position is its own tensor's, not the reader's), in float64
// and (uniform) in float16. The first output reads every input, so the schedule propagates from it.
FusionPtr randomFactories(OpKind op) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  Scalar* seed = makeInputScalar(*fusion, DataType::Int64);
  Scalar* offset = makeInputScalar(*fusion, DataType::Int64);
  Scalar* rows = x->logical()[0]->extent();
  Scalar* cols = x->logical()[1]->extent();
  const bool is_uniform = op == OpKind::Uniform;
  auto draw = [&](std::vector<Operand> shape, DataType dtype, Operand seed_operand) {
    return is_uniform ? uniform(*fusion, shape, -1.0, 3.0, dtype, seed_operand, offset)
                      : normal(*fusion, shape, 0.5, 2.0, dtype, seed_operand, offset);
  };
  TensorView* r = draw({rows, cols}, DataType::Float32, seed);
  TensorView* transposed = draw({cols, rows}, DataType::Float32, add(seed, 1));
  // Each output reads x, so the schedule reaches it; where(x > 100, ...) always selects the draw
  // and keeps it exact.
  auto drawn_like_x = [&](DataType dtype) {
    return where(gt(x, 100.0), cast(x, dtype), draw({rows, cols}, dtype, seed));
  };
  std::vector<TensorView*> outs = {add(x, r), r, add(x, permute(transposed, {1, 0})),
                                   drawn_like_x(DataType::Float64)};
  // A float32 value an ulp off (normal's log and cos) may round to the other float16 neighbor:
  // only uniform, exact in float32, is compared in float16.
  if (is_uniform) outs.push_back(drawn_like_x(DataType::Float16));
  for (TensorView* out : outs) fusion->addOutput(out);
  schedulePointwise(*fusion, outs.front(), 128);
  inlineMost(*fusion);
  return fusion;
}

// float8_e4m3fn and float8_e5m2 from and to float32, float16 and bfloat16, past their ranges
// (NaN for e4m3fn, infinity for e5m2), from integers, and multiplied in float32 and rounded
// once: every conversion is the same integer arithmetic in the kernel and the reference, so the
// case compares exactly. The first output reads every input.
FusionPtr float8Casts() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* h = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* b = makeInputTensor(*fusion, {.dtype = DataType::BFloat16, .sizes = {-1, -1}});
  TensorView* e4 = cast(x, DataType::Float8_e4m3fn);
  TensorView* e5 = cast(x, DataType::Float8_e5m2);
  TensorView* all =
      add(add(cast(e4, DataType::Float32), cast(cast(h, DataType::Float8_e5m2), DataType::Float32)),
          cast(cast(b, DataType::Float8_e4m3fn), DataType::Float32));
  std::vector<TensorView*> outs = {
      all,
      e4,
      e5,
      cast(h, DataType::Float8_e4m3fn),
      cast(b, DataType::Float8_e5m2),
      cast(e4, DataType::Float16),
      cast(e5, DataType::BFloat16),
      cast(e4, DataType::Float64),
      cast(mul(x, 300.0), DataType::Float8_e4m3fn),
      cast(mul(x, 40000.0), DataType::Float8_e5m2),
      cast(cast(mul(x, 100.0), DataType::Int32), DataType::Float8_e4m3fn),
      mul(e5, e5)};
  for (TensorView* out : outs) fusion->addOutput(out);
  schedulePointwise(*fusion, outs.front(), 128);
  inlineMost(*fusion);
  return fusion;
}

// ---- reductions ---------------------------------------------------------------------------

// One thread per row, reducing it serially in a register.
FusionPtr innerReductionSerial() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(0, 128);
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// One block per row: a serial loop over chunks of 128 and a block reduction across TIDx.
FusionPtr innerReductionBlock() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 128);
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// As innerReductionBlock, with the serial loop over chunks run backwards, and x / sum(x) per
// row computed in a second loop over the row that runs forwards (as multi-wave plans alternate).
FusionPtr innerReductionReversed() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* total = sum(x, {1});
  TensorView* out = div(x, broadcast(total, {false, true}));
  fusion->addOutput(total);
  fusion->addOutput(out);
  TensorView* partial = total->cacheBefore();
  out->split(1, 128);
  propagateTransforms(out);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(out);
  inlineMost(*fusion);
  partial->loopAxis(1)->setReversed(true);
  return fusion;
}

// Row sums split for the threads: [rows, row] -> [BIDx rows, r serial, r TIDx] with the row split
// by `factor` (the TIDx extent where inner_split, else the serial one), a per-thread serial
// partial (rFactor), then one block reduction.
FusionPtr rowSumsSplitForThreads(int64_t factor, bool inner_split) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, factor, inner_split);
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(partial);
  TensorView* per_thread = partial->rFactor({1});
  per_thread->setMemoryType(MemoryType::Local);
  inlineMost(*fusion);
  return fusion;
}

// As innerReductionBlock, but the serial part is split off with rFactor: each thread sums its
// chunk of the row in a register, then one block reduction combines the 128 partial sums.
FusionPtr innerReductionRFactor() {
  return rowSumsSplitForThreads(128, /*inner_split=*/true);
}

// Row sums with four elements per thread and the rest of the row over TIDx, so that the block
// follows the row length (ceil(N / 4) threads), compiled for rows of 512 (Fusion::assumeExtent):
// the block is a constant of the kernel (128 threads) and the launch checks the row length.
FusionPtr innerReductionForRowsOf512() {
  FusionPtr fusion = rowSumsSplitForThreads(4, /*inner_split=*/false);
  auto* x = fusion->inputs()[0]->as<TensorView>();
  fusion->assumeExtent(x->logical()[1]->extent(), 512);
  return fusion;
}

// Two row reductions that do not depend on each other, sum(x) + sum(x * x), scheduled as
// innerReductionBlock: their block reductions run as one group (one pair of barriers).
FusionPtr twoRowSums() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* total = sum(x, {1});
  TensorView* squares = sum(mul(x, x), {1});
  fusion->addOutput(add(total, squares));
  total->split(1, 128);
  propagateTransforms(total);
  total->parallelize(0, ParallelType::BIDx);
  total->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(total);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

// The reduction scheduler's inner shape: rows on blocks; each row read as float4 vectors by
// 128 threads, [r/512 serial, 128 TIDx, 4 unrolled]; the serial and unrolled parts are summed
// per thread (rFactor), then one block reduction.
FusionPtr innerReductionVectorized() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* x_cache = x->cacheAfter();
  TensorView* partial = out->cacheBefore();
  partial->split(1, 4);
  partial->split(1, 128);
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDx);
  partial->parallelize(3, ParallelType::Unroll);
  propagateParallelTypes(partial);
  TensorView* per_thread = partial->rFactor({1, 3});
  per_thread->setMemoryType(MemoryType::Local);
  x_cache->parallelize(3, ParallelType::Vectorize);
  inlineMost(*fusion);
  return fusion;
}

// A whole row on TIDx: the block size is the (symbolic) row length, not a multiple of 32, so
// the block reduction takes its shared-memory tree and the shared memory is sized at launch.
FusionPtr innerReductionRowThreads() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// Short rows, 16 per block: 8 lanes of TIDx per row (a serial loop over the rest of it) and rows
// on TIDy, so that each row is reduced by warp shuffles within its group of 8 lanes.
FusionPtr innerReductionShortRows() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {1});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 8);   // [i0, r1/8, 8]
  partial->split(0, 16);  // [i0/16, 16, r1/8, 8]
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDy);
  partial->parallelize(3, ParallelType::TIDx);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// The variance of a whole vector: serial, block and grid Welford steps.
FusionPtr welfordGrid() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  fusion->addOutput(var(x, {0}));
  TensorView* avg = nullptr;
  for (TensorView* tv : fusion->allTensors()) {
    if (tv->definition() != nullptr && tv->definition()->op() == OpKind::Welford &&
        tv == tv->definition()->output(0))
      avg = tv;
  }
  avg->split(0, 128);
  avg->split(0, 4);
  propagateTransforms(avg);
  avg->parallelize(0, ParallelType::BIDx);
  avg->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(avg);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

// Columns across threads, rows reduced serially by each thread (coalesced reads).
FusionPtr outerReduction() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = max(x, {0});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 128);
  partial->reorder({{0, 2}});
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// Everything into one number: a block reduction per block, then a grid reduction.
FusionPtr gridReduction() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* out = sum(x, {0});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(0, 128);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDx);
  inlineMost(*fusion);
  return fusion;
}

// Column sums where each column's rows are spread over blocks of BIDy: a grid reduction per
// column, columns on BIDx/TIDx.
FusionPtr gridReductionColumns() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {0});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 32);                               // [r0, i1/32, 32]
  partial->split(0, 8);                                // [r0/8, 8, i1/32, 32]
  partial->reorder({{2, 0}, {3, 1}, {0, 2}, {1, 3}});  // [i1/32, 32, r0/8, 8]
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(1, ParallelType::TIDx);
  partial->parallelize(2, ParallelType::BIDy);
  partial->parallelize(3, ParallelType::TIDy);
  propagateParallelTypes(partial);
  inlineMost(*fusion);
  return fusion;
}

// Column sums with 4 columns per thread, as a normalization backward's dw: 8 blocks share the
// rows, each summing its rows serially per thread (rFactor), then one grid reduction per
// register element, each with its own workspace region; the output is written in the same
// iteration, by the block that finished it.
FusionPtr gridReductionPerElement() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {0});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 4, /*inner_split=*/false);  // [r0, 4, ceil(i1/4)]
  partial->split(0, 8, /*inner_split=*/false);  // [8, ceil(r0/8), 4, ceil(i1/4)]
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::Unroll);
  partial->parallelize(3, ParallelType::TIDx);
  propagateParallelTypes(partial);
  partial->setMemoryType(MemoryType::Local);
  partial->rFactor({1})->setMemoryType(MemoryType::Local);
  partial->reorder({{0, 2}});  // [4, threads, r 8 blocks]
  inlineMost(*fusion);
  return fusion;
}

// As gridReductionPerElement, with each block's rows over `rows` threads of TIDy too: the four
// elements' block reductions over TIDy go together (blockReduceGroup), each thread adding its
// column's copies itself up to 32 rows, in a tree beyond.
FusionPtr gridReductionPerElementOverRows(int64_t rows) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sum(x, {0});
  fusion->addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 4, /*inner_split=*/false);  // [r0, 4, ceil(i1/4)]
  partial->split(0, 8, /*inner_split=*/false);  // [8, ceil(r0/8), 4, ceil(i1/4)]
  partial->split(1, rows);                      // [8, ceil(r0/8/rows), rows, 4, ceil(i1/4)]
  propagateTransforms(partial);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDy);
  partial->parallelize(3, ParallelType::Unroll);
  partial->parallelize(4, ParallelType::TIDx);
  propagateParallelTypes(partial);
  partial->setMemoryType(MemoryType::Local);
  partial->rFactor({1})->setMemoryType(MemoryType::Local);
  partial->reorder({{0, 2}, {1, 3}});  // [4, threads x, r 8 blocks, r rows]
  inlineMost(*fusion);
  return fusion;
}

FusionPtr welfordBlock() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  VarMeanResult r = var_mean(x, {1});
  fusion->addOutput(r.var);
  fusion->addOutput(r.mean);
  // The Welford writes a register copy of the mean; the output is a plain copy of it.
  TensorView* avg = r.mean->cacheBefore();
  avg->split(1, 128);
  propagateTransforms(avg);
  avg->parallelize(0, ParallelType::BIDx);
  avg->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(avg);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

// Row-wise normalizations with a fixed row length of 512: one block of 128 threads per row,
// each thread keeping its 4 elements of the row in registers between the reductions.
FusionPtr softmax() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, 512}});
  TensorView* e = exp(sub(x, max(x, {1}, true)));
  TensorView* y = div(e, sum(e, {1}, true));
  fusion->addOutput(y);
  y->split(1, 128);
  propagateTransforms(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(y);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

FusionPtr layerNorm() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, 512}});
  TensorView* weight = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {512}});
  TensorView* bias = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {512}});
  VarMeanResult stats = var_mean(x, {1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* normalized = mul(sub(x, stats.mean), rsqrt(add(stats.var, 1e-5)));
  TensorView* y =
      add(mul(normalized, broadcast(weight, {true, false})), broadcast(bias, {true, false}));
  fusion->addOutput(y);
  y->split(1, 128);
  propagateTransforms(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(y);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

}  // namespace

std::unique_ptr<Fusion> persistentSoftmax(int64_t elements_per_thread,
                                          std::optional<LaunchBounds> bounds) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* e = exp(sub(x, max(x, {1}, true)));
  TensorView* y = div(e, sum(e, {1}, true));
  fusion->addOutput(y);
  y->split(1, elements_per_thread);
  propagateTransforms(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  y->parallelize(2, ParallelType::Unroll);
  propagateParallelTypes(y);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  if (bounds) fusion->setLaunchBounds(bounds->max_threads_per_block, bounds->min_blocks_per_sm);
  return fusion;
}

namespace {

std::vector<ScheduledCase> makeSuite() {
  std::vector<ScheduledCase> suite;
  suite.push_back({"pointwise_broadcast",
                   "relu(x + bias[None, :]): dims merged, split by 128 onto blocks and threads; "
                   "the size is not a multiple of 128",
                   pointwiseBroadcast,
                   {tensorInput({37, 129}), tensorInput({129})}});
  suite.push_back({"pointwise_vectorize",
                   "a * 2 + b with cached loads and stores as float4 vectors",
                   [] { return vectorizedFloat(DataType::Float32, 4); },
                   {tensorInput({64, 256}), tensorInput({64, 256})},
                   std::nullopt,
                   {"braze::vectorCopy<float, 4>"}});
  suite.push_back(
      {"pointwise_vectorize_half",
       "a * 2 + b in float16 with 16-byte vectors of 8 halves",
       [] { return vectorizedFloat(DataType::Float16, 8); },
       {tensorInput({32, 1024}, DataType::Float16), tensorInput({32, 1024}, DataType::Float16)},
       std::nullopt,
       {"braze::vectorCopy<braze::Half, 8>"}});
  suite.push_back({"pointwise_broadcast_vectorize",
                   "x + bias[None, :] with float4 loads and stores; the broadcast is recomputed "
                   "in the vector loop",
                   broadcastVectorize,
                   {tensorInput({16, 64}), tensorInput({64})},
                   std::nullopt,
                   {"braze::vectorCopy<float, 4>"}});
  suite.push_back({"pointwise_unswitch_vectorize",
                   "a - b as [blocks, unswitch, threads, float4]: one hoisted check for all "
                   "vector accesses of a thread",
                   unswitchVectorize,
                   {tensorInput({31, 68}), tensorInput({31, 68})},
                   std::nullopt,
                   {"braze::vectorCopy<float, 4>", "} else {"}});
  suite.push_back(
      {"pointwise_unroll_unswitch",
       "(x + y) * 0.5 in float16, four unrolled iterations per thread under one "
       "hoisted bounds check",
       unrollUnswitchHalf,
       {tensorInput({33, 100}, DataType::Float16), tensorInput({33, 100}, DataType::Float16)},
       std::nullopt,
       {"#pragma unroll", "} else {"}});
  suite.push_back({"cast_chain",
                   "float16 -> float32 -> bfloat16 -> float32 -> float64 -> float16",
                   castChain,
                   {tensorInput({1000}, DataType::Float16)},
                   Tolerance{1e-2, 1e-2}});
  {
    SuiteInput scale;
    scale.scalar = ScalarValue(0.75);
    SuiteInput offset;
    offset.scalar = ScalarValue(int64_t{-3});
    suite.push_back({"scalar_inputs",
                     "float and integer scalar inputs, where, iota over a tensor's extent",
                     scalarInputs,
                     {tensorInput({333}), scale, offset}});
  }
  suite.push_back({"shape_ops_serial",
                   "slice with a step, pad, cat and select, unscheduled (serial, global "
                   "intermediates)",
                   shapeOpsSerial,
                   {tensorInput({5, 9}), tensorInput({3, 7})}});
  {
    SuiteInput rows = tensorInput({5}, DataType::Int64);
    rows.low = -6;
    rows.high = 5;
    SuiteInput cols = tensorInput({6, 3}, DataType::Int64);
    cols.low = -4;
    cols.high = 3;
    suite.push_back({"indexing_ops_serial",
                     "index_select and gather with negative indices, reshape, expand into an "
                     "output, squeeze, full; unscheduled",
                     indexingOpsSerial,
                     {tensorInput({6, 4}), rows, cols, tensorInput({6, 1})}});
  }
  {
    std::vector<SuiteInput> inputs = {
        tensorInput({300}), tensorInput({300}), tensorInput({300}, DataType::Float16),
        tensorInput({300}, DataType::Int32), tensorInput({300}, DataType::Int64)};
    inputs[0].low = 0.05;
    inputs[0].high = 1.5;
    inputs[1].low = 0.05;
    inputs[1].high = 1.5;
    inputs[2].low = -1.0;
    inputs[2].high = 1.0;
    inputs[3].low = -50;
    inputs[3].high = 50;
    inputs[4].low = 1;
    inputs[4].high = 20;
    suite.push_back({"elementwise_ops",
                     "every unary, binary and ternary op and cast, on float32, float16, int32, "
                     "int64 and bool, as one pointwise kernel with many outputs",
                     elementwiseOps, inputs, Tolerance{1e-4, 1e-4}});
  }
  {
    std::vector<SuiteInput> inputs = {tensorInput({7, 45}), tensorInput({7, 45}, DataType::Float16),
                                      tensorInput({7, 45}, DataType::Int32),
                                      tensorInput({7, 45}, DataType::Int64)};
    inputs[2].low = -60;
    inputs[2].high = 60;
    inputs[3].low = -12;
    inputs[3].high = 12;
    suite.push_back({"torch_ops",
                     "signbit, nextafter, gcd, logical_right_shift, set and triu as one "
                     "pointwise kernel with many outputs",
                     torchOps, inputs, Tolerance{0.0, 0.0}});
  }
  {
    SuiteInput seed;
    seed.dtype = DataType::Int64;
    seed.scalar = ScalarValue(int64_t{20261125});
    SuiteInput offset = seed;
    offset.scalar = ScalarValue(int64_t{7} << 33);  // above 32 bits: both counter words matter
    const std::vector<SuiteInput> inputs = {tensorInput({37, 45}), seed, offset};
    // float32 uniform is the same formula with one fused multiply-add on both sides: exact.
    suite.push_back({"random_uniform",
                     "uniform (Philox) shaped like the input, in registers, as an output, "
                     "transposed through a permute, in float16 and float64",
                     [] { return randomFactories(OpKind::Uniform); },
                     inputs,
                     Tolerance{0.0, 0.0},
                     {"braze::uniformFloat(", "braze::uniformDouble("}});
    // normal goes through log, sqrt and cos, whose GPU versions may differ by an ulp or two.
    suite.push_back({"random_normal",
                     "normal (Philox, Box-Muller) shaped like the input, in registers, as an "
                     "output, transposed through a permute, in float64",
                     [] { return randomFactories(OpKind::Normal); },
                     inputs,
                     Tolerance{1e-5, 1e-5},
                     {"braze::normalFloat(", "braze::normalDouble("}});
  }
  suite.push_back({"float8_casts",
                   "float8_e4m3fn and float8_e5m2 casts both ways with float32, float16 and "
                   "bfloat16, overflow, integers and arithmetic, as one pointwise kernel",
                   float8Casts,
                   {tensorInput({29, 70}), tensorInput({29, 70}, DataType::Float16),
                    tensorInput({29, 70}, DataType::BFloat16)},
                   Tolerance{0.0, 0.0},
                   {"braze::Float8e4m3", "braze::Float8e5m2"}});
  suite.push_back({"non_divisible_nested",
                   "split by 128 then by 3: both splits leave remainders",
                   nonDivisibleNested,
                   {tensorInput({1000})}});
  {
    SuiteInput padded = tensorInput({45, 70});
    padded.gap_dim = 0;
    padded.gap_step = 2;
    SuiteInput column_major = tensorInput({45, 70});
    column_major.allocation_order = {1, 0};
    suite.push_back({"noncontiguous_inputs",
                     "a row-padded input minus a column-major one",
                     nonContiguousInputs,
                     {padded, column_major},
                     std::nullopt,
                     {"T0.stride[0]"}});
  }
  suite.push_back({"transpose_shared",
                   "transpose through a 32x32 shared-memory tile, both sides coalesced",
                   transposeShared,
                   {tensorInput({100, 70})},
                   std::nullopt,
                   {"__shared__", "__syncthreads();"}});
  suite.push_back({"transpose_pointwise",
                   "exp(x).permute(2, 0, 1) as a plain pointwise kernel",
                   transposePointwise,
                   {tensorInput({5, 17, 9})}});
  suite.push_back({"inner_reduction_serial",
                   "row sums, one thread per row accumulating in a register",
                   innerReductionSerial,
                   {tensorInput({130, 77})}});
  suite.push_back({"inner_reduction_block",
                   "row sums, one block per row: serial chunks of 128, then a block reduction",
                   innerReductionBlock,
                   {tensorInput({67, 300})},
                   std::nullopt,
                   {"braze::blockReduce<true, false, false>", "__shfl_xor_sync"}});
  suite.push_back({"inner_reduction_reversed",
                   "row sums over serial chunks run backwards, then x / sum(x) forwards",
                   innerReductionReversed,
                   {tensorInput({67, 300})},
                   Tolerance{1e-5, 1e-5},
                   {") - 1; i", " >= 0; --i", "braze::blockReduce<true, false, false>"}});
  suite.push_back({"row_in_shared_memory",
                   "x * sum(x) per row, the row cached in shared memory sized at launch",
                   [] { return rowInSharedMemory(std::nullopt, 4); },
                   {tensorInput({37, 4003})},
                   Tolerance{1e-4, 1e-4},
                   {"extern __shared__ __align__(16) char braze_dynamic_smem[];",
                    "char* braze_smem_bytes = braze_dynamic_smem + "}});
  // A row of 12800 floats (50 KiB): past what a kernel may declare statically.
  suite.push_back({"row_in_shared_memory_past_static_limit",
                   "the same with a constant row of 12800 floats: dynamic for its size",
                   [] { return rowInSharedMemory(12800, 16); },
                   {tensorInput({9, 12800})},
                   Tolerance{1e-4, 1e-4},
                   {"float* T4 = reinterpret_cast<float*>(braze_dynamic_smem + 0);"}});
  suite.push_back({"two_row_sums_grouped",
                   "sum(x) + sum(x * x) per row: two block reductions in one group",
                   twoRowSums,
                   {tensorInput({67, 300})},
                   Tolerance{1e-5, 1e-5},
                   {"braze::blockReduceGroup<true, false, false, 2>"}});
  suite.push_back({"inner_reduction_rfactor",
                   "row sums: per-thread serial partial sums (rFactor), then one block reduction",
                   innerReductionRFactor,
                   {tensorInput({67, 1000})},
                   Tolerance{1e-5, 1e-5},
                   {"braze::blockReduce<true, false, false>"}});
  suite.push_back({"inner_reduction_vectorized",
                   "row sums read as float4 vectors: serial and unrolled partial sums per thread "
                   "(rFactor of two axes), then one block reduction",
                   innerReductionVectorized,
                   {tensorInput({33, 2048})},
                   Tolerance{1e-5, 1e-5},
                   {"braze::vectorCopy<float, 4>", "braze::blockReduce<true, false, false>"}});
  suite.push_back({"inner_reduction_row_threads",
                   "row sums with the whole (symbolic) row on TIDx: a block size that is not a "
                   "multiple of 32 and shared memory sized at launch",
                   innerReductionRowThreads,
                   {tensorInput({20, 300})},
                   Tolerance{1e-5, 1e-5},
                   {"extern __shared__"}});
  suite.push_back({"inner_reduction_short_rows",
                   "row sums of 8 lanes per row and 16 rows per block: segmented warp shuffles",
                   innerReductionShortRows,
                   {tensorInput({37, 21})},
                   Tolerance{1e-5, 1e-5},
                   {"braze::blockReduce<true, false, false>"}});
  suite.push_back({"welford_grid",
                   "the variance of a vector: serial, block and grid Welford steps",
                   welfordGrid,
                   {tensorInput({5000})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::gridReduce<true, false, false, true, false, false>(braze_value, "
                    "braze::WelfordOp{}"}});
  suite.push_back({"outer_reduction",
                   "column maxima, columns across threads, rows serial in each thread",
                   outerReduction,
                   {tensorInput({50, 300})}});
  suite.push_back({"grid_reduction",
                   "the sum of a vector: block reductions, then a grid reduction",
                   gridReduction,
                   {tensorInput({10000})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::gridReduce<true, false, false, true, false, false>"}});
  suite.push_back({"grid_reduction_columns",
                   "column sums with rows spread over BIDy and TIDy",
                   gridReductionColumns,
                   {tensorInput({1000, 100})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::gridReduce<false, true, false, false, true, false>",
                    "braze::blockReduce<false, true, false>"}});
  suite.push_back({"grid_reduction_per_element",
                   "column sums, 4 columns per thread: serial partials per block, then a grid "
                   "reduction per register element through its own workspace region, the four "
                   "grouped into one round of the blocks",
                   gridReductionPerElement,
                   {tensorInput({301, 102})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::gridReduceRegionBytes(8)",
                    "braze::gridReduceGroup<true, false, false, false, false, false, 4>"}});
  suite.push_back({"inner_reduction_for_rows_of_512",
                   "row sums over ceil(N / 4) threads, compiled for rows of 512: the block of "
                   "128 threads is a constant of the kernel",
                   innerReductionForRowsOf512,
                   {tensorInput({37, 512})},
                   Tolerance{1e-4, 1e-4},
                   {"__launch_bounds__(128)", "braze::BlockScratch<128, 1, 1> braze_smem"}});
  suite.push_back({"grid_reduction_per_element_over_4_rows",
                   "as grid_reduction_per_element, each block's rows over 4 threads of TIDy too: "
                   "the four elements' block reductions go together, each thread adding up its "
                   "column's four copies",
                   [] { return gridReductionPerElementOverRows(4); },
                   {tensorInput({301, 30})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::blockReduceGroup<false, true, false, 4>(finished",
                    "braze::gridReduceGroup<true, false, false, false, true, false, 4>"}});
  suite.push_back({"grid_reduction_per_element_over_64_rows",
                   "as grid_reduction_per_element_over_4_rows with 64 rows a block: the grouped "
                   "block reduction adds the copies in a tree",
                   [] { return gridReductionPerElementOverRows(64); },
                   {tensorInput({1301, 30})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::blockReduceGroup<false, true, false, 4>(finished"}});
  suite.push_back({"welford_block",
                   "var_mean over rows with a block Welford reduction",
                   welfordBlock,
                   {tensorInput({40, 333})},
                   Tolerance{1e-4, 1e-4},
                   {"braze::WelfordTriplet<float>"}});
  suite.push_back({"softmax",
                   "softmax over rows of 512, one block per row, registers between reductions",
                   softmax,
                   {tensorInput({30, 512})},
                   std::nullopt,
                   {"braze::MaxOp{}", "braze::SumOp{}"}});
  suite.push_back({"layer_norm",
                   "layer norm over rows of 512 with weight and bias",
                   layerNorm,
                   {tensorInput({30, 512}), tensorInput({512}), tensorInput({512})},
                   Tolerance{1e-4, 1e-4}});
  suite.push_back({"softmax_launch_bounds",
                   "softmax over rows of symbolic length, 8 elements per thread in registers and "
                   "row / 8 threads per block, with launch bounds of 512 threads and 2 blocks "
                   "per SM stated on the fusion",
                   [] {
                     return persistentSoftmax(8, LaunchBounds{512, 2});
                   },
                   {tensorInput({30, 2048})},
                   std::nullopt,
                   {"__launch_bounds__(512, 2)", "extern __shared__"}});
  for (ScheduledCase& c : scanCases()) suite.push_back(std::move(c));
  return suite;
}

}  // namespace

void PrintTo(const ScheduledCase& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<ScheduledCase>& scheduledSuite() {
  static const std::vector<ScheduledCase> suite = makeSuite();
  return suite;
}

const ScheduledCase& findScheduledCase(std::string_view name) {
  for (const ScheduledCase& c : scheduledSuite()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no scheduled case named " << name;
  return scheduledSuite().front();
}

std::vector<EvaluatorArgument> makeSuiteArguments(const ScheduledCase& c, uint64_t seed) {
  RandomTensors random(seed);
  std::vector<EvaluatorArgument> arguments;
  for (const SuiteInput& input : c.inputs) {
    if (input.scalar) {
      arguments.emplace_back(*input.scalar);
      continue;
    }
    HostTensor tensor = random.uniform(input.dtype, input.sizes, input.low, input.high);
    if (input.gap_dim >= 0) {
      tensor = withGaps(tensor, input.gap_dim, input.gap_step, input.allocation_order);
    } else if (!input.allocation_order.empty()) {
      tensor = withAllocationOrder(tensor, input.allocation_order);
    }
    arguments.emplace_back(std::move(tensor));
  }
  return arguments;
}

}  // namespace braze::test
