#include "matmul_scheduler.h"

#include <algorithm>
#include <limits>

#include "braze/codegen/template_epilogue.h"
#include "braze/ops/elementwise.h"
#include "gemm_template.h"

namespace braze::matmul_scheduler {

namespace {

// The fusion's one contraction (linear or matmul), or null when there are none or several.
const Expr* onlyContraction(const Fusion& fusion) {
  const Expr* found = nullptr;
  for (const Expr* expr : fusion.exprs()) {
    if (expr->op() != OpKind::Linear && expr->op() != OpKind::Matmul) continue;
    if (found != nullptr) return nullptr;
    found = expr;
  }
  return found;
}

// Linear's bias, or null without one.
TensorView* biasOf(const Expr& linear) {
  return linear.inputs().size() > 2 ? linear.input(2)->dynCast<TensorView>() : nullptr;
}

bool denseRowMajor(const TensorView* tv) {
  const auto& contiguity = tv->contiguity();
  const bool dense = std::all_of(contiguity.begin(), contiguity.end(),
                                 [](const std::optional<bool>& c) { return c.value_or(false); });
  const std::vector<int64_t>& order = tv->allocationOrder();
  bool row_major = true;
  for (size_t d = 0; d < order.size(); ++d) row_major = row_major && order[d] == int64_t(d);
  return dense && row_major;
}

constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  const Expr* expr = onlyContraction(fusion);
  if (expr == nullptr) return "the fusion has no linear, or several contractions";
  if (expr->op() != OpKind::Linear)
    return "matmul(a, b) is not supported yet; linear(x, weight) with weight [N, K] is";
  const auto* x = expr->input(0)->dynCast<TensorView>();
  const auto* weight = expr->input(1)->dynCast<TensorView>();
  const auto* out = expr->output(0)->as<TensorView>();
  if (x == nullptr || weight == nullptr || !fusion.isInput(x) || !fusion.isInput(weight))
    return "the operands of linear must be inputs of the fusion (prologues are not fused)";
  const TensorView* bias = biasOf(*expr);
  if (expr->inputs().size() > 2 && (bias == nullptr || !fusion.isInput(bias) || bias->rank() != 1))
    return "linear's bias must be a 1-d input of the fusion, [N]";
  if (x->rank() != 2 || weight->rank() != 2)
    return "linear of " + std::to_string(x->rank()) + "-d by " + std::to_string(weight->rank()) +
           "-d operands; only x [M, K] by weight [N, K] is supported yet";
  if (x->dtype() != weight->dtype() || out->dtype() != x->dtype() ||
      (x->dtype() != DataType::BFloat16 && x->dtype() != DataType::Float16))
    return "linear in " + std::string(toString(x->dtype())) + " by " +
           std::string(toString(weight->dtype())) + "; bf16 or fp16 operands of one dtype only";
  if (!denseRowMajor(x) || !denseRowMajor(weight))
    return "the operands must be declared dense and row-major (K innermost)";
  if (!fusion.outputAliases().empty()) return "an output written into an input";
  if (auto problem = templateEpilogueProblem(fusion, out, bias)) return "epilogue: " + *problem;
  return std::nullopt;
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (!(info.device.arch.major == 9 && info.device.arch.minor == 0))
    return "the kernel uses wgmma and setmaxnreg of sm_90a; the device is " +
           info.device.arch.toString();
  if (info.device.max_shared_memory_per_block_optin < gemmSharedBytes(GemmShape{}))
    return "the device offers " + std::to_string(info.device.max_shared_memory_per_block_optin) +
           " bytes of shared memory per block; the kernel's ring needs " +
           std::to_string(gemmSharedBytes(GemmShape{}));
  const Expr* expr = onlyContraction(fusion);
  BRAZE_USER_CHECK(expr != nullptr) << "matmul: canScheduleRunTime of a fusion it refuses";
  const auto argument = [&](const Val* input) {
    const size_t at = static_cast<size_t>(fusion.inputIndex(input));
    return at < info.arguments.size() ? std::get_if<TensorArgumentInfo>(&info.arguments[at])
                                      : nullptr;
  };
  const TensorArgumentInfo* x = argument(expr->input(0));
  const TensorArgumentInfo* weight = argument(expr->input(1));
  if (x == nullptr || weight == nullptr || x->sizes.size() != 2 || weight->sizes.size() != 2)
    return "linear takes two 2-d tensors";
  const int64_t m = x->sizes[0], k = x->sizes[1], n = weight->sizes[0];
  if (m == 0 || n == 0 || k == 0) return "an empty operand";
  if (k % 8 != 0)
    return "K = " + std::to_string(k) +
           " is not a multiple of 8: the copy engine needs rows of a multiple of 16 bytes";
  if (n % 2 != 0) return "N = " + std::to_string(n) + " is odd; the kernel stores pairs";
  if (m * k > kMaxElements || n * k > kMaxElements || m * n > kMaxElements)
    return "an operand or the result has 2^31 elements or more (32-bit offsets)";
  for (const Val* operand : {expr->input(0), expr->input(1)}) {
    const size_t at = static_cast<size_t>(fusion.inputIndex(operand));
    if (vectorAlignment(info, at) < 16)
      return "input " + std::to_string(at) + " does not start on a 16-byte boundary";
  }
  if (const TensorView* bias = biasOf(*expr); bias != nullptr && !bias->axis(0)->isBroadcast()) {
    const TensorArgumentInfo* values = argument(bias);
    if (values == nullptr || values->sizes.size() != 1 || values->sizes[0] != n)
      return "linear's bias has " +
             (values != nullptr && values->sizes.size() == 1 ? std::to_string(values->sizes[0])
                                                             : std::string("other")) +
             " elements; N = " + std::to_string(n);
  }
  return std::nullopt;
}

MatmulParams computeHeuristics([[maybe_unused]] const Fusion& fusion,
                               const SchedulerRuntimeInfo& info) {
  // One tile shape for now: 128 x 256 x 64 in 4 stages reaches 0.95-1.04x cuBLAS from 4096^3
  // up on an H100 (benchmarks/RESULTS.md). Persistent blocks, one per SM, so that each
  // block's next tile loads during its epilogue. Small and skinny shapes and split-K are the
  // next heuristics.
  MatmulParams params;
  params.ctas = info.device.sm_count;
  return params;
}

void schedule(Fusion& fusion, const MatmulParams& params) {
  BRAZE_USER_CHECK(params.tile_m == 128 && params.tile_k == 64)
      << "matmul: the kernel template's tile is 128 rows (two consumer warp groups of 64) by "
         "64 deep (one 128-byte swizzled row of bf16); params ask for "
      << params.tile_m << " x " << params.tile_k;
  BRAZE_USER_CHECK(params.tile_n >= 8 && params.tile_n <= 256 && params.tile_n % 8 == 0)
      << "matmul: tile_n = " << params.tile_n << "; wgmma's N is a multiple of 8 up to 256";
  BRAZE_USER_CHECK(params.stages >= 2 && params.group_m >= 1 && params.ctas >= 0)
      << "matmul: " << params.stages << " stages, groups of " << params.group_m << " tile rows and "
      << params.ctas << " blocks; at least 2, 1 and 0";
  const Expr* expr = onlyContraction(fusion);
  BRAZE_USER_CHECK(expr != nullptr && expr->op() == OpKind::Linear)
      << "matmul: schedule() of a fusion canScheduleCompileTime refuses";
  auto* x = expr->input(0)->as<TensorView>();
  auto* weight = expr->input(1)->as<TensorView>();
  auto* out = expr->output(0)->as<TensorView>();
  GemmShape shape{params.tile_m, params.tile_n,  params.tile_k,
                  params.stages, params.group_m, x->dtype() == DataType::Float16};
  BRAZE_USER_CHECK(gemmSharedBytes(shape) <= 227 * 1024)
      << "matmul: a ring of " << params.stages << " stages needs " << gemmSharedBytes(shape)
      << " bytes of shared memory; an sm_90 block has 227 KiB";
  const auto map = [&](int64_t rows) {
    return TensorMapParameter{
        .dims = {1, 0},
        .box = {static_cast<uint32_t>(params.tile_k), static_cast<uint32_t>(rows)},
        .swizzle = TensorMapParameter::Swizzle::Bytes128};
  };
  using Kind = KernelTemplate::ParameterKind;
  KernelTemplate kernel;
  kernel.source = gemmTemplateSource(shape);
  kernel.parameters = {{Kind::TensorMap, x, map(params.tile_m)},
                       {Kind::TensorMap, weight, map(params.tile_n)},
                       {Kind::Tensor, x, {}},
                       {Kind::Tensor, weight, {}}};
  kernel.epilogue =
      KernelTemplate::Epilogue{.anchor = out, .accumulator_bias = biasOf(*expr), .vector = 2};
  Val* tiles = mul(ceil_div(weight->axis(0)->extent(), Operand(params.tile_n)),
                   ceil_div(x->axis(0)->extent(), Operand(params.tile_m)));
  kernel.grid[0] = params.ctas > 0 ? minimum(tiles, fusion.constantIndex(params.ctas)) : tiles;
  kernel.block[0] = fusion.constantIndex(384);
  kernel.dynamic_shared_memory_bytes = fusion.constantIndex(gemmSharedBytes(shape));
  kernel.arch_specific = true;
  fusion.setKernelTemplate(std::move(kernel));
}

}  // namespace braze::matmul_scheduler
