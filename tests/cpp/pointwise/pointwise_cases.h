#pragma once

// Fusions for the pointwise scheduler's tests, unscheduled, with the arguments a run binds and
// the decisions the heuristics are expected to make for them.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/eval/host_tensor.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/shape.h"
#include "pointwise_scheduler.h"
#include "support/fusion_of.h"
#include "support/host_runtime_info.h"
#include "support/scheduled_suite.h"

namespace braze::test {

struct PointwiseCase {
  std::string name;
  std::function<std::unique_ptr<Fusion>()> build;
  std::vector<SuiteInput> inputs;
  int64_t break_point = 0;
  int64_t vector_width = 1;
  int64_t unroll = 1;
  /// Alignment in bytes of every input's data pointer as the heuristics see it.
  int64_t data_alignment = 16;
  /// Streaming multiprocessors of the device the heuristics assume (H100 otherwise).
  int sm_count = 0;
};

inline void PrintTo(const PointwiseCase& c, std::ostream* os) {
  *os << c.name;
}

inline SuiteInput input(std::vector<int64_t> sizes, DataType dtype = DataType::Float32) {
  SuiteInput in;
  in.dtype = dtype;
  in.sizes = std::move(sizes);
  return in;
}

/// Indices into a dim of `size` elements, negative ones (counted from the end) included.
inline SuiteInput indexInput(std::vector<int64_t> sizes, DataType dtype, int64_t size) {
  SuiteInput in = input(std::move(sizes), dtype);
  in.low = static_cast<double>(-size);
  in.high = static_cast<double>(size - 1);
  return in;
}

inline SuiteInput scalarInput(double value) {
  SuiteInput in;
  in.scalar = ScalarValue(value);
  return in;
}

inline SuiteInput integerInput(int64_t value) {
  SuiteInput in;
  in.dtype = DataType::Int64;
  in.scalar = ScalarValue(value);
  return in;
}

// The extents of x's dims, as a factory's shape.
inline std::vector<Operand> shapeOf(const TensorView* x) {
  std::vector<Operand> shape;
  for (IterDomain* id : x->logical()) shape.emplace_back(id->extent());
  return shape;
}

inline TensorView* symbolic(Fusion& f, int64_t rank, DataType dtype = DataType::Float32) {
  return makeSymbolicTensor(f, rank, dtype);
}

inline const std::vector<PointwiseCase>& pointwiseCases() {
  using DT = DataType;
  static const std::vector<PointwiseCase> cases = [] {
    std::vector<PointwiseCase> c;
    c.push_back({"add_1d",
                 fusionOf([](Fusion& f) { f.addOutput(add(symbolic(f, 1), symbolic(f, 1))); }),
                 {input({4100}), input({4100})},
                 0,
                 4});
    c.push_back({"add_odd_size",
                 fusionOf([](Fusion& f) { f.addOutput(add(symbolic(f, 1), symbolic(f, 1))); }),
                 {input({1001}), input({1001})},
                 0,
                 1});
    c.push_back({"add_2d_width_2",
                 fusionOf([](Fusion& f) { f.addOutput(sub(symbolic(f, 2), symbolic(f, 2))); }),
                 {input({67, 130}), input({67, 130})},
                 0,
                 2});
    c.push_back({"gelu_bias",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* bias = symbolic(f, 1);
                   f.addOutput(gelu(add(x, broadcast(bias, {true, false}))));
                 }),
                 {input({96, 256}), input({256})},
                 1,
                 4});
    c.push_back({"gelu_bias_half",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2, DT::Float16);
                   TensorView* bias = symbolic(f, 1, DT::Float16);
                   TensorView* y = gelu(
                       add(cast(x, DT::Float32), broadcast(cast(bias, DT::Float32), {true, false})),
                       GeluApproximation::Tanh);
                   f.addOutput(cast(y, DT::Float16));
                 }),
                 {input({40, 136}, DT::Float16), input({136}, DT::Float16)},
                 1,
                 8});
    c.push_back({"cast_chain",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 1, DT::BFloat16);
                   TensorView* t = mul(cast(x, DT::Float32), 3.0);
                   f.addOutput(cast(t, DT::Float16));
                 }),
                 {input({8192}, DT::BFloat16)},
                 0,
                 8});
    c.push_back({"where_scalars",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   Scalar* s = makeInputScalar(f, DT::Float32);
                   f.addOutput(where(gt(x, s), x, 0.5));
                 }),
                 {input({33, 64}), scalarInput(0.25)},
                 0,
                 4});
    c.push_back({"column_major_input",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeInputTensor(
                       f, {.dtype = DT::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
                   f.addOutput(add(symbolic(f, 2), x));
                 }),
                 {[] {
                    SuiteInput in = input({48, 80});
                    in.allocation_order = {1, 0};
                    return in;
                  }(),
                  input({48, 80})},
                 0,
                 4});
    c.push_back({"permute_3d",
                 fusionOf([](Fusion& f) {
                   f.addOutput(permute(exp(symbolic(f, 3)), {2, 0, 1}));
                 }),
                 {input({8, 12, 20})},
                 0,
                 4});
    c.push_back(
        {"expand_column",
         fusionOf([](Fusion& f) {
           TensorView* column = makeInputTensor(f, {.dtype = DT::Float32, .sizes = {-1, 1}});
           TensorView* x = symbolic(f, 2);
           f.addOutput(mul(expand(column, {int64_t{-1}, int64_t{96}}), x));
         }),
         {input({64, 1}), input({64, 96})},
         1,
         4});
    c.push_back({"odd_3d",
                 fusionOf([](Fusion& f) { f.addOutput(mul(symbolic(f, 3), symbolic(f, 3))); }),
                 {input({5, 6, 7}), input({5, 6, 7})},
                 0,
                 1});
    c.push_back({"bias_3d",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 3);
                   TensorView* bias = symbolic(f, 1);
                   f.addOutput(relu(add(x, broadcast(bias, {true, true, false}))));
                 }),
                 {input({4, 6, 32}), input({32})},
                 2,
                 4});
    c.push_back({"padded_rows",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeInputTensor(
                       f, {.dtype = DT::Float32, .sizes = {-1, -1}, .contiguity = {false, true}});
                   f.addOutput(neg(x));
                 }),
                 {[] {
                   SuiteInput in = input({24, 64});
                   in.gap_dim = 0;
                   in.gap_step = 2;
                   return in;
                 }()},
                 0,
                 1});
    c.push_back({"strided_inner",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeInputTensor(
                       f, {.dtype = DT::Float32, .sizes = {-1, -1}, .contiguity = {true, false}});
                   f.addOutput(add(x, symbolic(f, 2)));
                 }),
                 {[] {
                    SuiteInput in = input({24, 64});
                    in.gap_dim = 1;
                    in.gap_step = 3;
                    return in;
                  }(),
                  input({24, 64})},
                 0,
                 1});
    c.push_back({"misaligned",
                 fusionOf([](Fusion& f) { f.addOutput(add(symbolic(f, 1), symbolic(f, 1))); }),
                 {input({4096}), input({4096})},
                 0,
                 1,
                 1,
                 /*data_alignment=*/4});
    c.push_back({"squeeze",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeInputTensor(f, {.dtype = DT::Float32, .sizes = {-1, 1}});
                   f.addOutput(add(squeeze(x, {1}), symbolic(f, 1)));
                 }),
                 {input({256, 1}), input({256})},
                 0,
                 4});
    c.push_back({"two_outputs",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* y = symbolic(f, 2);
                   f.addOutput(add(x, y));
                   f.addOutput(mul(x, y));
                 }),
                 {input({20, 52}), input({20, 52})},
                 0,
                 4});
    // Rows shorter than a warp of vectors: rows stacked along threadIdx.y, unrolled over rows.
    c.push_back({"bias_short_rows_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2, DT::BFloat16);
                   TensorView* bias = symbolic(f, 1, DT::BFloat16);
                   TensorView* y =
                       add(cast(x, DT::Float32), broadcast(cast(bias, DT::Float32), {true, false}));
                   f.addOutput(cast(y, DT::BFloat16));
                 }),
                 {input({3001, 48}, DT::BFloat16), input({48}, DT::BFloat16)},
                 1,
                 8,
                 1,
                 16,
                 /*sm_count=*/2});
    // More rows than gridDim.y addresses: rows on gridDim.x (a per-row scale, so nothing is
    // read again by every row and the unroll goes along the row).
    c.push_back({"row_scale_many_rows",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* scale = symbolic(f, 1);
                   f.addOutput(mul(x, broadcast(scale, {false, true})));
                 }),
                 {input({65537, 257}), input({65537})},
                 1,
                 1,
                 2});
    c.push_back({"unrolled_small_device",
                 fusionOf([](Fusion& f) { f.addOutput(add(symbolic(f, 1), symbolic(f, 1))); }),
                 {input({65536}), input({65536})},
                 0,
                 4,
                 4,
                 16,
                 /*sm_count=*/2});
    // Factories computed in the kernel from each element's position: a uniform with the Philox
    // seed and offset as scalar inputs, and a normal, an iota and a full beside an input.
    c.push_back({"uniform_plus_input",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   Scalar* seed = makeInputScalar(f, DataType::Int64);
                   Scalar* offset = makeInputScalar(f, DataType::Int64);
                   f.addOutput(
                       add(x, uniform(f, shapeOf(x), -1.0, 1.0, DataType::Float32, seed, offset)));
                 }),
                 {input({33, 128}), integerInput(42), integerInput(int64_t{3} << 32)},
                 0,
                 4});
    c.push_back({"normal_iota_full",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   const std::vector<Operand> shape = shapeOf(x);
                   TensorView* noise = normal(f, shape, 0.0, 0.1, DataType::Float32, 7, 8);
                   TensorView* ramp = broadcast(iota(f, shape[1]), {true, false});
                   f.addOutput(mul(add(x, noise), full(f, shape, 0.5, DataType::Float32)));
                   f.addOutput(add(x, ramp));
                 }),
                 {input({64, 100})},
                 0,
                 4});
    // Indexing ops: the loop follows the output; the indexed input is read at positions from
    // data (negative ones counted from the end), never cached or vectorized.
    c.push_back({"index_select_rows",
                 fusionOf([](Fusion& f) {
                   TensorView* table = symbolic(f, 2);
                   TensorView* rows = symbolic(f, 1, DT::Int64);
                   f.addOutput(index_select(table, 0, rows));
                 }),
                 {input({50, 96}), indexInput({37}, DT::Int64, 50)},
                 1,
                 4});
    c.push_back({"index_select_computed_index",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* index = symbolic(f, 1, DT::Int32);
                   // Shifted by one and kept in range: the read index is itself computed.
                   TensorView* shifted = sub(index, 1);
                   f.addOutput(mul(index_select(x, 1, shifted), 2.0));
                 }),
                 {input({33, 41}),
                  [] {
                    SuiteInput in = indexInput({29}, DT::Int32, 41);
                    in.low += 1;
                    return in;
                  }()},
                 1,
                 1});
    c.push_back({"embedding_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* tokens = symbolic(f, 2, DT::Int64);
                   TensorView* weight = symbolic(f, 2, DT::BFloat16);
                   f.addOutput(embedding_fwd(tokens, weight));
                 }),
                 {indexInput({3, 11}, DT::Int64, 40), input({40, 256}, DT::BFloat16)},
                 2,
                 8});
    // Two lookups of one table, both feeding the reference: it reaches each take whole.
    c.push_back(
        {"two_embeddings_added",
         fusionOf([](Fusion& f) {
           TensorView* tokens = symbolic(f, 2, DT::Int64);
           TensorView* positions = symbolic(f, 2, DT::Int64);
           TensorView* weight = symbolic(f, 2);
           f.addOutput(add(embedding_fwd(tokens, weight), embedding_fwd(positions, weight)));
         }),
         {indexInput({16, 24}, DT::Int64, 10), indexInput({16, 24}, DT::Int64, 10), input({10, 4})},
         2,
         4});
    c.push_back({"take_middle_dim",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 3);
                   TensorView* index = symbolic(f, 2, DT::Int32);
                   f.addOutput(neg(take(x, 1, index)));
                 }),
                 {input({4, 13, 20}), indexInput({5, 3}, DT::Int32, 13)},
                 0,
                 4});
    c.push_back({"take_along_axis",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* index = symbolic(f, 2, DT::Int32);
                   TensorView* y = symbolic(f, 2);
                   f.addOutput(add(gather(x, 1, index), y));
                 }),
                 {input({24, 40}), indexInput({24, 17}, DT::Int32, 40), input({24, 17})},
                 0,
                 1});
    c.push_back({"gather_shorter_index",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 3, DT::Float16);
                   TensorView* index = symbolic(f, 3, DT::Int64);
                   f.addOutput(gather(x, 0, index));
                 }),
                 // The int64 index allows vectors of 2 (16 bytes).
                 {input({9, 6, 64}, DT::Float16), indexInput({4, 5, 48}, DT::Int64, 9)},
                 0,
                 2});
    c.push_back({"select_scalar_index",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 3);
                   Scalar* at = makeInputScalar(f, DT::Int64);
                   f.addOutput(exp(select(x, 1, at)));
                 }),
                 {input({6, 7, 300}),
                  [] {
                    SuiteInput in;
                    in.scalar = ScalarValue(int64_t{-2});
                    return in;
                  }()},
                 0,
                 4});
    // Resizing ops read their inputs at shifted positions, guarded by the input's bounds: the
    // loop follows the output, the shifted inputs are read in place, never cached or vectorized.
    c.push_back({"pad_last_dim_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2, DT::BFloat16);
                   f.addOutput(pad(x, {int64_t{1}, int64_t{2}}, 0.5));
                 }),
                 {input({45, 37}, DT::BFloat16)},
                 0,
                 8});
    c.push_back({"slice_with_step",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   f.addOutput(exp(slice(x, 1, int64_t{3}, std::nullopt, int64_t{2})));
                 }),
                 {input({20, 70})},
                 0,
                 4});
    c.push_back({"cat_rows",
                 fusionOf([](Fusion& f) {
                   TensorView* x = symbolic(f, 2);
                   TensorView* y = symbolic(f, 2);
                   f.addOutput(mul(cat({x, y}, 0), 2.0));
                 }),
                 {input({10, 33}), input({7, 33})},
                 0,
                 1});
    return c;
  }();
  return cases;
}

inline const PointwiseCase& findPointwiseCase(const std::string& name) {
  for (const PointwiseCase& c : pointwiseCases())
    if (c.name == name) return c;
  throw std::runtime_error("no pointwise case named " + name);
}

inline std::vector<std::string> pointwiseCaseNames() {
  std::vector<std::string> names;
  for (const PointwiseCase& c : pointwiseCases()) names.push_back(c.name);
  return names;
}

/// The case as a ScheduledCase (for makeSuiteArguments).
inline ScheduledCase asSuiteCase(const PointwiseCase& c) {
  return ScheduledCase{.name = c.name, .description = c.name, .build = c.build, .inputs = c.inputs};
}

/// What the heuristics see for these host arguments.
inline SchedulerRuntimeInfo runtimeInfoOf(const PointwiseCase& c,
                                          const std::vector<EvaluatorArgument>& args) {
  SchedulerRuntimeInfo info = hostRuntimeInfo(args, c.data_alignment);
  if (c.sm_count > 0) info.device.sm_count = c.sm_count;
  return info;
}

}  // namespace braze::test
