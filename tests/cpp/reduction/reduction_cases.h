#pragma once

// Fusions for the reduction scheduler's tests, unscheduled, with the arguments a run binds and
// the decisions the heuristics are expected to make for them: a sweep over inner and outer
// reductions, float32 / bfloat16 / float16 inputs, reduction sizes from 1 to 2^20 + 3,
// iteration sizes from 1 to millions, several reduced dims, keepdim, prologues and epilogues,
// Welford and several reductions of one input.

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "reduction_scheduler.h"
#include "support/fusion_of.h"
#include "support/host_runtime_info.h"
#include "support/scheduled_suite.h"
#include "support/tensor_compare.h"

namespace braze::test {

struct ReductionCase {
  std::string name;
  std::function<std::unique_ptr<Fusion>()> build;
  std::vector<SuiteInput> inputs;
  /// What the heuristics must choose for these arguments on an H100.
  reduction::ReductionStrategy strategy;
  int64_t vector_width = 1;
  /// Alignment in bytes of every input's data pointer as the heuristics see it.
  int64_t data_alignment = 16;
  /// Comparison tolerance on the GPU; nullopt: toleranceFor(output dtype).
  std::optional<Tolerance> tolerance = std::nullopt;
};

inline void PrintTo(const ReductionCase& c, std::ostream* os) {
  *os << c.name;
}

/// A tensor input with values in [low, high]. Long sums get positive values, so that the
/// result is far from zero and rounding differences between summation orders stay relative.
inline SuiteInput tensorOf(std::vector<int64_t> sizes, DataType dtype = DataType::Float32,
                           double low = -2.0, double high = 2.0) {
  SuiteInput in;
  in.dtype = dtype;
  in.sizes = std::move(sizes);
  in.low = low;
  in.high = high;
  return in;
}

inline SuiteInput positiveOf(std::vector<int64_t> sizes, DataType dtype = DataType::Float32) {
  return tensorOf(std::move(sizes), dtype, 0.25, 2.0);
}

/// sum(x, axes) of a symbolic input of rank `rank`.
inline std::function<std::unique_ptr<Fusion>()> sumOf(int64_t rank, std::vector<int64_t> axes,
                                                      DataType dtype = DataType::Float32,
                                                      bool keepdim = false) {
  return fusionOf(
      [=](Fusion& f) { f.addOutput(sum(makeSymbolicTensor(f, rank, dtype), axes, keepdim)); });
}

inline const std::vector<ReductionCase>& reductionCases() {
  using DT = DataType;
  using S = reduction::ReductionStrategy;
  static const std::vector<ReductionCase> cases = [] {
    std::vector<ReductionCase> c;
    // ---- inner (row) reductions over the sweep of row lengths
    c.push_back({"inner_r1", sumOf(2, {1}), {tensorOf({1000, 1})}, S::InnerThread, 1});
    c.push_back({"inner_r4_many_rows", sumOf(2, {1}), {tensorOf({1 << 20, 4})}, S::InnerThread, 4});
    c.push_back({"inner_r7", sumOf(2, {1}), {tensorOf({333, 7})}, S::InnerThread, 1});
    c.push_back({"inner_r127", sumOf(2, {1}), {tensorOf({129, 127})}, S::InnerWarp, 1});
    c.push_back({"inner_r256_bf16",
                 sumOf(2, {1}, DT::BFloat16),
                 {tensorOf({1024, 256}, DT::BFloat16)},
                 S::InnerWarp,
                 8});
    c.push_back({"inner_r1000", sumOf(2, {1}), {tensorOf({64, 1000})}, S::InnerBlock, 4});
    c.push_back({"inner_r1000_one_row", sumOf(2, {1}), {tensorOf({1, 1000})}, S::InnerBlock, 4});
    c.push_back({"inner_r1024_fp16",
                 sumOf(2, {1}, DT::Float16),
                 {positiveOf({300, 1024}, DT::Float16)},
                 S::InnerWarp,
                 8});
    c.push_back({"inner_r4097", sumOf(2, {1}), {positiveOf({16, 4097})}, S::InnerBlock, 1});
    c.push_back({"inner_r65536", sumOf(2, {1}), {positiveOf({4, 65536})}, S::InnerGrid, 4});
    c.push_back({"inner_r65536_bf16",
                 sumOf(2, {1}, DT::BFloat16),
                 {positiveOf({3, 65536}, DT::BFloat16)},
                 S::InnerGrid,
                 8});
    c.push_back(
        {"inner_r2pow20_plus3", sumOf(2, {1}), {positiveOf({2, (1 << 20) + 3})}, S::InnerGrid, 1});
    c.push_back({"inner_max_r4096_rows2000",
                 fusionOf([](Fusion& f) { f.addOutput(max(makeSymbolicTensor(f, 2), {1})); }),
                 {tensorOf({2000, 4096})},
                 S::InnerBlock,
                 4});
    c.push_back(
        {"inner_min_int32",
         fusionOf([](Fusion& f) { f.addOutput(min(makeSymbolicTensor(f, 2, DT::Int32), {1})); }),
         {tensorOf({50, 300}, DT::Int32, -1000, 1000)},
         S::InnerWarp,
         4});
    c.push_back({"inner_misaligned",
                 sumOf(2, {1}),
                 {tensorOf({64, 1024})},
                 S::InnerBlock,
                 1,
                 /*data_alignment=*/4});
    c.push_back({"inner_padded_rows",
                 fusionOf([](Fusion& f) {
                   f.addOutput(sum(makeInputTensor(f, {.dtype = DT::Float32,
                                                       .sizes = {-1, -1},
                                                       .contiguity = {false, true}}),
                                   {1}));
                 }),
                 {[] {
                   SuiteInput in = tensorOf({96, 640});
                   in.gap_dim = 0;
                   in.gap_step = 2;
                   return in;
                 }()},
                 S::InnerBlock,
                 4});
    c.push_back({"inner_strided_elements",
                 fusionOf([](Fusion& f) {
                   f.addOutput(max(makeInputTensor(f, {.dtype = DT::Float32,
                                                       .sizes = {-1, -1},
                                                       .contiguity = {true, false}}),
                                   {1}));
                 }),
                 {[] {
                   SuiteInput in = tensorOf({80, 300});
                   in.gap_dim = 1;
                   in.gap_step = 3;
                   return in;
                 }()},
                 S::InnerWarp,
                 1});
    // ---- several reduced dims
    c.push_back({"inner_dims_0_2", sumOf(3, {0, 2}), {tensorOf({12, 33, 40})}, S::InnerWarp, 4});
    c.push_back({"inner_all_dims", sumOf(3, {}), {positiveOf({37, 129, 5})}, S::InnerGrid, 1});
    c.push_back(
        {"inner_dims_1_2_of_4d", sumOf(4, {2, 3}), {tensorOf({3, 5, 24, 64})}, S::InnerBlock, 4});
    c.push_back({"column_major_dim0",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeInputTensor(
                       f, {.dtype = DT::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
                   f.addOutput(sum(x, {0}));
                 }),
                 {[] {
                   SuiteInput in = tensorOf({300, 200});
                   in.allocation_order = {1, 0};
                   return in;
                 }()},
                 S::InnerWarp,
                 4});
    // ---- outer (column) reductions
    c.push_back({"outer_r1000_i64", sumOf(2, {0}), {tensorOf({1000, 64})}, S::OuterGrid, 1});
    c.push_back({"outer_r127_i33", sumOf(2, {0}), {tensorOf({127, 33})}, S::OuterBlock, 1});
    c.push_back({"outer_r7_i5000", sumOf(2, {0}), {tensorOf({7, 5000})}, S::OuterBlock, 4});
    c.push_back({"outer_r1_i300", sumOf(2, {0}), {tensorOf({1, 300})}, S::OuterThread, 4});
    c.push_back({"outer_r3_i1m", sumOf(2, {0}), {tensorOf({3, 1 << 20})}, S::OuterThread, 4});
    c.push_back({"outer_r4097_i96_bf16",
                 sumOf(2, {0}, DT::BFloat16),
                 {positiveOf({4097, 96}, DT::BFloat16)},
                 S::OuterGrid,
                 1});
    c.push_back({"outer_r65536_i16", sumOf(2, {0}), {positiveOf({65536, 16})}, S::OuterGrid, 1});
    c.push_back({"outer_r256_i4096_fp16",
                 sumOf(2, {0}, DT::Float16),
                 {positiveOf({256, 4096}, DT::Float16)},
                 S::OuterGrid,
                 1});
    c.push_back({"outer_dim1_of_3d", sumOf(3, {1}), {tensorOf({4, 500, 64})}, S::OuterGrid, 1});
    c.push_back(
        {"outer_dims_0_2_of_4d", sumOf(4, {0, 2}), {tensorOf({9, 20, 7, 48})}, S::OuterBlock, 4});
    // ---- keepdim, prologue and epilogue
    c.push_back({"inner_keepdim",
                 sumOf(2, {1}, DT::Float32, true),
                 {tensorOf({64, 513})},
                 S::InnerBlock,
                 1});
    c.push_back({"outer_keepdim_max",
                 fusionOf([](Fusion& f) { f.addOutput(max(makeSymbolicTensor(f, 2), {0}, true)); }),
                 {tensorOf({250, 130})},
                 S::OuterGrid,
                 1});
    c.push_back({"rms_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2, DT::BFloat16);
                   TensorView* xf = cast(x, DT::Float32);
                   TensorView* ms = mean(mul(xf, xf), {1});
                   f.addOutput(cast(sqrt(ms), DT::BFloat16));
                 }),
                 {tensorOf({128, 4096}, DT::BFloat16)},
                 S::InnerBlock,
                 8});
    c.push_back({"bias_sum_epilogue",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2);
                   TensorView* bias = makeSymbolicTensor(f, 1);
                   TensorView* s = sum(relu(add(x, broadcast(bias, {true, false}))), {1});
                   f.addOutput(div(s, 2.0));
                 }),
                 {tensorOf({96, 2048}), tensorOf({2048})},
                 S::InnerBlock,
                 4});
    c.push_back({"outer_bias_relu_fp16",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2, DT::Float16);
                   TensorView* bias = makeSymbolicTensor(f, 1, DT::Float16);
                   TensorView* y = relu(add(cast(x, DT::Float32),
                                            broadcast(cast(bias, DT::Float32), {true, false})));
                   f.addOutput(cast(sum(y, {0}), DT::Float16));
                 }),
                 {tensorOf({512, 1000}, DT::Float16), tensorOf({1000}, DT::Float16)},
                 S::OuterGrid,
                 1});
    // A layer norm backward's weight and bias gradients, with xhat computed from per-row
    // statistics (the segmenter recomputes it there rather than passing it as float32 rows):
    // dw = sum_rows(dy * (float(x) - mean) * rstd), db = sum_rows(dy).
    c.push_back({"outer_norm_weight_grads_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* dy = cast(makeSymbolicTensor(f, 2, DT::BFloat16), DT::Float32);
                   TensorView* x = cast(makeSymbolicTensor(f, 2, DT::BFloat16), DT::Float32);
                   TensorView* mean = broadcast(makeSymbolicTensor(f, 1), {false, true});
                   TensorView* rstd = broadcast(makeSymbolicTensor(f, 1), {false, true});
                   TensorView* xhat = mul(sub(x, mean), rstd);
                   f.addOutput(cast(sum(mul(dy, xhat), {0}), DT::BFloat16));
                   f.addOutput(cast(sum(dy, {0}), DT::BFloat16));
                 }),
                 {tensorOf({512, 1024}, DT::BFloat16), tensorOf({512, 1024}, DT::BFloat16),
                  tensorOf({512}), positiveOf({512})},
                 S::OuterGrid,
                 1});
    c.push_back({"row_scale_epilogue",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2);
                   TensorView* scale = makeSymbolicTensor(f, 1);
                   f.addOutput(mul(amax(abs(x), {1}), scale));
                 }),
                 {tensorOf({200, 768}), tensorOf({200})},
                 S::InnerBlock,
                 4});
    // ---- Welford
    c.push_back({"var_mean_inner",
                 fusionOf([](Fusion& f) {
                   VarMeanResult r = var_mean(makeSymbolicTensor(f, 2), {1});
                   f.addOutput(r.var);
                   f.addOutput(r.mean);
                 }),
                 {positiveOf({100, 2000})},
                 S::InnerBlock,
                 4});
    c.push_back({"var_mean_bf16_keepdim",
                 fusionOf([](Fusion& f) {
                   VarMeanResult r = var_mean(makeSymbolicTensor(f, 2, DT::BFloat16), {1}, 0, true);
                   f.addOutput(r.var);
                   f.addOutput(r.mean);
                 }),
                 {positiveOf({64, 4096}, DT::BFloat16)},
                 S::InnerBlock,
                 8});
    c.push_back({"var_outer",
                 fusionOf([](Fusion& f) { f.addOutput(var(makeSymbolicTensor(f, 2), {0})); }),
                 {positiveOf({3000, 40})},
                 S::OuterGrid,
                 1});
    c.push_back({"var_outer_many_columns",
                 fusionOf([](Fusion& f) { f.addOutput(var(makeSymbolicTensor(f, 2), {0})); }),
                 {positiveOf({17, 300000})},
                 S::OuterThread,
                 1});
    c.push_back({"var_mean_short_rows",
                 fusionOf([](Fusion& f) {
                   VarMeanResult r = var_mean(makeSymbolicTensor(f, 2), {1});
                   f.addOutput(r.var);
                   f.addOutput(r.mean);
                 }),
                 {positiveOf({300, 12})},
                 S::InnerWarp,
                 4});
    c.push_back({"inner_r24_two_lanes", sumOf(2, {1}), {tensorOf({500, 24})}, S::InnerWarp, 4});
    c.push_back({"var_mean_row_of_65536",
                 fusionOf([](Fusion& f) {
                   VarMeanResult r = var_mean(makeSymbolicTensor(f, 1), {0});
                   f.addOutput(r.var);
                   f.addOutput(r.mean);
                 }),
                 {positiveOf({65536})},
                 S::InnerGrid,
                 4});
    // ---- several reductions of one input
    c.push_back({"sum_and_max",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2);
                   f.addOutput(sum(x, {1}));
                   f.addOutput(max(x, {1}));
                 }),
                 {tensorOf({256, 1000})},
                 S::InnerBlock,
                 4});
    c.push_back({"sum_and_max_outer_bf16",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2, DT::BFloat16);
                   f.addOutput(sum(x, {0}));
                   f.addOutput(max(x, {0}));
                 }),
                 {positiveOf({640, 264}, DT::BFloat16)},
                 S::OuterGrid,
                 1});
    c.push_back({"var_and_sum_of_squares",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 2);
                   f.addOutput(var(x, {1}));
                   f.addOutput(sum(mul(x, x), {1}));
                 }),
                 {positiveOf({192, 3000})},
                 S::InnerBlock,
                 4});
    c.push_back({"mean_and_amax_outer_3d",
                 fusionOf([](Fusion& f) {
                   TensorView* x = makeSymbolicTensor(f, 3, DT::BFloat16);
                   f.addOutput(mean(x, {0}));
                   f.addOutput(amax(x, {0}));
                 }),
                 {positiveOf({300, 6, 40}, DT::BFloat16)},
                 S::OuterGrid,
                 1});
    return c;
  }();
  return cases;
}

inline const ReductionCase& findReductionCase(const std::string& name) {
  for (const ReductionCase& c : reductionCases())
    if (c.name == name) return c;
  throw std::runtime_error("no reduction case named " + name);
}

inline std::vector<std::string> reductionCaseNames() {
  std::vector<std::string> names;
  for (const ReductionCase& c : reductionCases()) names.push_back(c.name);
  return names;
}

/// The case as a ScheduledCase (for makeSuiteArguments).
inline ScheduledCase asSuiteCase(const ReductionCase& c) {
  return ScheduledCase{.name = c.name, .description = c.name, .build = c.build, .inputs = c.inputs};
}

/// What the heuristics see for these host arguments.
inline SchedulerRuntimeInfo runtimeInfoOf(const ReductionCase& c,
                                          const std::vector<EvaluatorArgument>& args) {
  return hostRuntimeInfo(args, c.data_alignment);
}

}  // namespace braze::test
