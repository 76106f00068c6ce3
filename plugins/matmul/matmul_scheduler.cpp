#include "matmul_scheduler.h"

#include <algorithm>
#include <limits>
#include <variant>

#include "braze/codegen/template_epilogue.h"
#include "braze/ops/elementwise.h"
#include "braze/sched/runtime_arguments.h"
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
TensorView* biasOf(const Expr& contraction) {
  if (contraction.op() != OpKind::Linear) return nullptr;
  return contraction.inputs().size() > 2 ? contraction.input(2)->dynCast<TensorView>() : nullptr;
}

// The contraction as the kernel sees it: A [(batch,) M, K] and B, with B's K and N dims
// (linear's weight is [N, K]; matmul's b is [(batch,) K, N]).
struct Operands {
  TensorView* a = nullptr;  ///< the contraction's operands (16-bit)
  TensorView* b = nullptr;
  /// The fusion inputs the kernel copies: a and b, or the fp32 inputs of casts to them, which
  /// the kernel converts as it copies them in (GemmLayout::a_convert, b_convert).
  TensorView* a_source = nullptr;
  TensorView* b_source = nullptr;
  TensorView* out = nullptr;
  TensorView* bias = nullptr;  ///< linear's, or null
  int64_t b_k_dim = 0;
  /// a (b) is a transpose of a_source (b_source): layout's A dims and b_k_dim, b_n_dim say
  /// which of the source's dims are M, N and K.
  bool a_transposed = false;
  bool b_transposed = false;
  GemmLayout layout;
};

// Which of `tv`'s dims is stored innermost.
int64_t innermostDim(const TensorView* tv) {
  const std::vector<int64_t>& order = tv->allocationOrder();
  return order.empty() ? tv->rank() - 1 : order.back();
}

// Whether an operand is stored K-major (false) or MN-major (true), or why neither.
std::variant<bool, std::string> mnMajor(const TensorView* tv, const char* name, int64_t k_dim,
                                        int64_t mn_dim) {
  const int64_t inner = innermostDim(tv);
  if (inner == k_dim) return false;
  if (inner == mn_dim) return true;
  return std::string(name) +
         " is stored with its batch dim innermost; the kernel copies rows "
         "along K or along " +
         (std::string(name) == "a" ? "M" : "N");
}

// Whether `expr` swaps the last two dims of its input and keeps the others in place.
bool swapsLastTwoDims(const Expr& expr) {
  if (expr.op() != OpKind::Permute) return false;
  const auto& perm = expr.attribute<std::vector<int64_t>>("perm");
  const auto rank = static_cast<int64_t>(perm.size());
  if (rank < 2) return false;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t expected = d == rank - 2 ? rank - 1 : d == rank - 1 ? rank - 2 : d;
    if (perm[static_cast<size_t>(d)] != expected) return false;
  }
  return true;
}

// The fusion input the kernel copies for an operand: the operand itself; the input of a
// transpose of its last two dims to it that nothing else reads (the kernel copies the input's
// tiles with its rows and columns swapped: a transposed operand is the other major-ness of the
// same storage, so no copy is made first); or the fp32 input of a cast to it that nothing else
// reads (the kernel converts it as it copies it in); or why none.
struct OperandSource {
  TensorView* tensor = nullptr;
  bool transposed = false;
};
std::variant<OperandSource, std::string> sourceOf(const Fusion& fusion, TensorView* operand,
                                                  const char* name) {
  if (operand == nullptr) return std::string(name) + " is not a tensor";
  if (fusion.isInput(operand)) return OperandSource{operand};
  const Expr* def = operand->definition();
  const std::string prologue = std::string(name) + " (" + operand->name() + ") is computed by " +
                               std::string(toString(def->op()));
  if (def->op() == OpKind::Permute) {
    auto* source = def->input(0)->dynCast<TensorView>();
    if (!swapsLastTwoDims(*def))
      return prologue +
             " moving a batch dim; the kernel reads an operand transposed in its "
             "last two dims only";
    if (source == nullptr || !fusion.isInput(source))
      return prologue + " of an intermediate; the kernel reads a transposed fusion input only";
    if (operand->uses().size() != 1 || fusion.isOutput(operand))
      return prologue +
             ", which other ops read too; the kernel reads the transposed view for "
             "the contraction only";
    return OperandSource{source, true};
  }
  if (def->op() != OpKind::Cast)
    return prologue +
           "; the kernel fuses a cast or a transpose of an input before the contraction, no "
           "other prologue";
  auto* source = def->input(0)->dynCast<TensorView>();
  if (source == nullptr || !fusion.isInput(source))
    return prologue + " of an intermediate; the kernel fuses a cast of a fusion input only";
  if (source->dtype() != DataType::Float32)
    return prologue + " from " + std::string(toString(source->dtype())) +
           "; the kernel converts fp32 operands only";
  if (operand->uses().size() != 1 || fusion.isOutput(operand))
    return prologue +
           ", which other ops read too; the kernel converts it in shared memory, "
           "for the contraction only";
  return OperandSource{source};
}

std::variant<Operands, std::string> operandsOf(const Fusion& fusion) {
  const Expr* expr = onlyContraction(fusion);
  if (expr == nullptr) return std::string("the fusion has no linear or matmul, or several");
  Operands ops;
  ops.a = expr->input(0)->dynCast<TensorView>();
  ops.b = expr->input(1)->dynCast<TensorView>();
  ops.out = expr->output(0)->as<TensorView>();
  const bool is_linear = expr->op() == OpKind::Linear;
  auto a_source = sourceOf(fusion, ops.a, "a");
  if (auto* problem = std::get_if<std::string>(&a_source)) return *problem;
  auto b_source = sourceOf(fusion, ops.b, "b");
  if (auto* problem = std::get_if<std::string>(&b_source)) return *problem;
  ops.a_source = std::get<OperandSource>(a_source).tensor;
  ops.b_source = std::get<OperandSource>(b_source).tensor;
  ops.a_transposed = std::get<OperandSource>(a_source).transposed;
  ops.b_transposed = std::get<OperandSource>(b_source).transposed;
  ops.bias = biasOf(*expr);
  if (is_linear && expr->inputs().size() > 2 &&
      (ops.bias == nullptr || !fusion.isInput(ops.bias) || ops.bias->rank() != 1))
    return std::string("linear's bias must be a 1-d input of the fusion, [N]");
  const int64_t a_rank = ops.a->rank(), b_rank = ops.b->rank();
  constexpr int64_t kMaxRank = 2 + kMaxBatchDims;
  if (a_rank < 2 || a_rank > kMaxRank || b_rank < 2 || b_rank > (is_linear ? 2 : kMaxRank))
    return std::string(is_linear ? "linear" : "matmul") + " of " + std::to_string(a_rank) +
           "-d by " + std::to_string(b_rank) + "-d operands; the kernel takes " +
           (is_linear ? "x [..., M, K] by weight [N, K]" : "a [..., M, K] by b [..., K, N]") +
           (a_rank < 2 || b_rank < 2
                ? " (a matrix-vector product is memory-bound: not this kernel's work)"
                : " with at most " + std::to_string(kMaxBatchDims) +
                      " batch dims (the copy engine's maps have five dims): reshape some into "
                      "one before the contraction");
  if (ops.a->dtype() != ops.b->dtype() || ops.out->dtype() != ops.a->dtype() ||
      (ops.a->dtype() != DataType::BFloat16 && ops.a->dtype() != DataType::Float16))
    return std::string(toString(ops.a->dtype())) + " by " + std::string(toString(ops.b->dtype())) +
           " operands; bf16 or fp16 operands of one dtype only";
  // B's K and N dims, and A's, as dims of the tensors the kernel copies: a transposed
  // operand's last two are its source's swapped.
  ops.b_k_dim = is_linear ? 1 : b_rank - 2;
  int64_t b_n_dim = is_linear ? 0 : b_rank - 1;
  if (ops.b_transposed) std::swap(ops.b_k_dim, b_n_dim);
  ops.layout.a_rank = static_cast<int>(a_rank);
  ops.layout.b_rank = static_cast<int>(b_rank);
  ops.layout.b_n_dim = static_cast<int>(b_n_dim);
  ops.layout.a_m_dim = static_cast<int>(a_rank - (ops.a_transposed ? 1 : 2));
  ops.layout.a_k_dim = static_cast<int>(a_rank - (ops.a_transposed ? 2 : 1));
  ops.layout.batch_dims = static_cast<int>(ops.out->logicalNoReductions().size()) - 2;
  auto a_major = mnMajor(ops.a_source, "a", ops.layout.a_k_dim, ops.layout.a_m_dim);
  if (auto* problem = std::get_if<std::string>(&a_major)) return *problem;
  auto b_major = mnMajor(ops.b_source, "b", ops.b_k_dim, ops.layout.b_n_dim);
  if (auto* problem = std::get_if<std::string>(&b_major)) return *problem;
  ops.layout.a_mn_major = std::get<bool>(a_major);
  ops.layout.b_mn_major = std::get<bool>(b_major);
  ops.layout.a_convert = ops.a_source != ops.a && !ops.a_transposed;
  ops.layout.b_convert = ops.b_source != ops.b && !ops.b_transposed;
  if ((ops.layout.a_convert && ops.layout.a_mn_major) ||
      (ops.layout.b_convert && ops.layout.b_mn_major))
    return std::string("a cast of an operand stored M- or N-major (") +
           (ops.layout.a_convert && ops.layout.a_mn_major ? "a" : "b") +
           "); the kernel converts K-major operands only";
  return ops;
}

constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

struct ProblemSize {
  int64_t m = 0, n = 0, k = 0, batches = 1;
};

// The run's M, N, K and batch count; nullopt when the arguments' ranks differ from the
// definition's.
std::optional<ProblemSize> problemSize(const Fusion& fusion, const Operands& ops,
                                       const SchedulerRuntimeInfo& info) {
  const TensorArgumentInfo* a = tensorArgumentOf(fusion, info.arguments, ops.a_source);
  const TensorArgumentInfo* b = tensorArgumentOf(fusion, info.arguments, ops.b_source);
  if (a == nullptr || b == nullptr || a->sizes.size() != size_t(ops.layout.a_rank) ||
      b->sizes.size() != size_t(ops.layout.b_rank))
    return std::nullopt;
  ProblemSize size{.m = a->sizes[size_t(ops.layout.a_m_dim)],
                   .n = b->sizes[size_t(ops.layout.b_n_dim)],
                   .k = a->sizes[size_t(ops.layout.a_k_dim)]};
  // The result's batch dims: the operands' leading dims, lined up from the right.
  for (int j = 0; j < ops.layout.batch_dims; ++j) {
    const int ja = j - (ops.layout.batch_dims - (ops.layout.a_rank - 2));
    const int jb = j - (ops.layout.batch_dims - (ops.layout.b_rank - 2));
    size.batches *=
        std::max(ja >= 0 ? a->sizes[size_t(ja)] : 1, jb >= 0 ? b->sizes[size_t(jb)] : 1);
  }
  return size;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The operands the kernel computes itself (casts it converts as it copies their inputs in,
// transposes it copies swapped).
std::vector<TensorView*> prologueOf(const Operands& ops) {
  std::vector<TensorView*> prologue;
  if (ops.layout.a_convert || ops.a_transposed) prologue.push_back(ops.a);
  if (ops.layout.b_convert || ops.b_transposed) prologue.push_back(ops.b);
  return prologue;
}

// The output the kernel can store through shared memory (MatmulParams::tma_store): the
// fusion's first, when its elements are 16-bit (stmatrix moves 16-bit pairs).
const TensorView* stagedOutput(const Fusion& fusion) {
  const auto* out = fusion.outputs().front()->dynCast<TensorView>();
  return out != nullptr && sizeInBytes(out->dtype()) == 2 ? out : nullptr;
}

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  auto found = operandsOf(fusion);
  if (auto* problem = std::get_if<std::string>(&found)) return *problem;
  const Operands& ops = std::get<Operands>(found);
  if (!fusion.outputAliases().empty()) return "an output written into an input";
  if (auto problem = templateEpilogueProblem(fusion, ops.out, ops.bias, prologueOf(ops)))
    return "epilogue: " + *problem;
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
  auto found = operandsOf(fusion);
  BRAZE_USER_CHECK(std::holds_alternative<Operands>(found))
      << "matmul: canScheduleRunTime of a fusion it refuses";
  const Operands& ops = std::get<Operands>(found);
  const auto argument = [&](const Val* input) {
    return tensorArgumentOf(fusion, info.arguments, input);
  };
  const std::optional<ProblemSize> size = problemSize(fusion, ops, info);
  if (!size) return "the operands' ranks differ from the definition's";
  const auto [m, n, k, batches] = *size;
  if (m == 0 || n == 0 || k == 0 || batches == 0) return "an empty operand";
  if (batches * m * n > kMaxElements || batches * m * k > kMaxElements ||
      n * k * batches > kMaxElements)
    return "an operand or the result has 2^31 elements or more (32-bit offsets)";
  // The copy engine reads rows: the innermost dim contiguous, every other stride a multiple
  // of 16 bytes, the start aligned to 16 bytes.
  for (const TensorView* operand : {ops.a_source, ops.b_source}) {
    const size_t at = static_cast<size_t>(fusion.inputIndex(operand));
    const int64_t row_elements = 16 / sizeInBytes(operand->dtype());
    const TensorArgumentInfo& values = *argument(operand);
    const auto inner = static_cast<size_t>(innermostDim(operand));
    if (values.sizes[inner] != 1 && values.strides[inner] != 1)
      return "input " + std::to_string(at) + " (" + operand->name() + ") has stride " +
             std::to_string(values.strides[inner]) + " along dim " + std::to_string(inner) +
             ", which the kernel copies as contiguous rows; pass it with that dim contiguous";
    for (size_t d = 0; d < values.sizes.size(); ++d) {
      if (d == inner || values.sizes[d] == 1 || values.strides[d] % row_elements == 0) continue;
      return "input " + std::to_string(at) + " (" + operand->name() + ") has stride " +
             std::to_string(values.strides[d]) + " along dim " + std::to_string(d) +
             ", not a multiple of " + std::to_string(row_elements) +
             " elements: the copy engine needs 16-byte row strides (" + values.description + ")";
    }
    if (vectorAlignment(info, at) < 16)
      return "input " + std::to_string(at) + " does not start on a 16-byte boundary";
  }
  // Converting in the kernel reads an fp32 operand from L2 once per tile that uses it: b once
  // per 128-row tile of C in every batch, a once per tile column (256 wide at most). On an H200
  // it paid only where that is once (1.05-1.09x of a cast kernel and a bf16 GEMM); read twice
  // it ran at 0.31-0.75x, more often at 0.17-0.52x (benchmarks/RESULTS.md). Refused beyond one
  // read, so the cast runs as its own kernel first.
  // Both converted, the converter warps halve the pace (0.50x at 128 x 256 x 8192): the
  // segmenter then casts one of them first.
  if (ops.layout.a_convert && ops.layout.b_convert)
    return "a and b are both cast from fp32; the kernel converts one operand at the pace of the "
           "K loop, not two (measured 0.50x of casting first)";
  const int64_t b_reads = batches * ceilDiv(m, 128), a_reads = ceilDiv(n, 256);
  if ((ops.layout.b_convert && b_reads > 1) || (ops.layout.a_convert && a_reads > 1)) {
    const bool b_fault = ops.layout.b_convert && b_reads > 1;
    return std::string(b_fault ? "b" : "a") +
           " is cast from fp32, and the kernel would read its fp32 tiles " +
           std::to_string(b_fault ? b_reads : a_reads) + " times (once per tile along " +
           (b_fault ? "M and the batch" : "N") + "); a cast kernel first reads them once";
  }
  if (ops.bias != nullptr && !ops.bias->axis(0)->isBroadcast()) {
    const TensorArgumentInfo* values = argument(ops.bias);
    if (values == nullptr || values->sizes.size() != 1 || values->sizes[0] != n)
      return "linear's bias has " +
             (values != nullptr && values->sizes.size() == 1 ? std::to_string(values->sizes[0])
                                                             : std::string("other")) +
             " elements; N = " + std::to_string(n);
  }
  return std::nullopt;
}

MatmulParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  auto found = operandsOf(fusion);
  BRAZE_USER_CHECK(std::holds_alternative<Operands>(found))
      << "matmul: computeHeuristics of a fusion it refuses";
  const std::optional<ProblemSize> size = problemSize(fusion, std::get<Operands>(found), info);
  BRAZE_USER_CHECK(size.has_value()) << "matmul: computeHeuristics of arguments it refuses";
  // The tile's width and the K split minimize a time model in units of one 128 x 64 x 64 step:
  // waves x tile_n x (efficiency of that width) x (K steps per CTA + the tile's fill and
  // epilogue), plus the split's exchange of partial sums. 128 x 256 is the widest wgmma tile
  // and the most efficient (it reads the least shared memory per flop: 0.95-1.04x cuBLAS from
  // 4096^3 up, benchmarks/RESULTS.md); narrower tiles and split K pay off when the widest
  // leaves most SMs idle, on small and skinny problems.
  struct Width {
    int64_t tile_n;
    double efficiency;
  };
  constexpr Width kWidths[] = {{256, 1.0}, {192, 1.03}, {128, 1.1}, {64, 1.3}};
  constexpr double kStepsPerTile = 2.0;   // the ring's fill and the epilogue
  constexpr double kStepsPerPeer = 0.5;   // reading one peer's partial sums
  constexpr double kStepsPerSplit = 1.0;  // the split's three cluster barriers
  const int64_t sms = std::max<int64_t>(1, info.device.sm_count);
  // Clusters that run at once: a cluster's CTAs share a GPU processing cluster (16-18 SMs on
  // an H100 or H200), so clusters of 4 and 8 fit fewer than sms / 4 and sms / 8 at a time with
  // one CTA per SM. Measured on an H200 (benchmarks/RESULTS.md): 32 clusters of 4 take two
  // waves, 16 of 4 and 64 of 2 one.
  const auto concurrent_clusters = [&](int64_t split) {
    return split <= 2 ? sms / split : sms / (split + split / 2);
  };
  const int64_t k_tiles = ceilDiv(size->k, 64);
  const GemmLayout& layout = std::get<Operands>(found).layout;
  MatmulParams best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const Width& width : kWidths) {
    // The staging ring of converted operands leaves wide tiles too few stages.
    if (maxGemmStages(width.tile_n, false, layout) < 3) continue;
    const int64_t tiles = size->batches * ceilDiv(size->m, 128) * ceilDiv(size->n, width.tile_n);
    for (const int64_t split : {1, 2, 4, 8}) {
      // A split must fit one wave of clusters, and give each CTA a K range that fills the ring.
      if (split > 1 && (tiles > concurrent_clusters(split) || k_tiles < 4 * split)) continue;
      const double waves = static_cast<double>(ceilDiv(tiles * split, sms));
      double steps = static_cast<double>(ceilDiv(k_tiles, split)) + kStepsPerTile;
      if (split > 1) steps += kStepsPerSplit + kStepsPerPeer * static_cast<double>(split - 1);
      const double cost = waves * static_cast<double>(width.tile_n) * width.efficiency * steps;
      if (cost >= best_cost) continue;
      best_cost = cost;
      best.tile_n = width.tile_n;
      best.split_k = split;
    }
  }
  // The first output leaves through shared memory in bulk copies that overlap the next tile
  // (the copy engine needs 16-byte row strides: N a multiple of 8). The split's epilogue
  // gathers scattered column groups and stores from registers.
  best.tma_store = best.split_k == 1 && size->n % 8 == 0 && stagedOutput(fusion) != nullptr &&
                           maxGemmStages(best.tile_n, true, layout) >= 3
                       ? 1
                       : 0;
  best.stages = maxGemmStages(best.tile_n, best.tma_store != 0, layout);
  best.epilogue_vector = size->n % 2 == 0 ? 2 : 1;
  // The epilogue loads pairs of inputs with unit innermost stride, even strides elsewhere and
  // a 4-byte aligned start (the pairs it reads start at even columns): one load instead of two.
  // Columns taken one at a time (an odd N) load nothing in pairs.
  const Operands& ops = std::get<Operands>(found);
  for (size_t k = 0; best.epilogue_vector == 2 && k < info.arguments.size() && k < 64; ++k) {
    const Val* input = fusion.inputs()[k];
    if (input == ops.a_source || input == ops.b_source || input == ops.bias) continue;
    const auto* tensor = std::get_if<TensorArgumentInfo>(&info.arguments[k]);
    if (tensor == nullptr || tensor->sizes.empty() ||
        tensor->strides.size() != tensor->sizes.size() || tensor->strides.back() != 1 ||
        vectorAlignment(info, k) < 2 * sizeInBytes(tensor->dtype))
      continue;
    bool even = true;
    for (size_t d = 0; d + 1 < tensor->strides.size(); ++d)
      even = even && (tensor->sizes[d] == 1 || tensor->strides[d] % 2 == 0);
    if (even) best.vector_inputs |= int64_t{1} << k;
  }
  // Pairs of CTAs sharing B (cluster_m = 2) are not chosen: on an H200 they ran as fast as
  // single CTAs from 1024 x 4096 x 4096 to 8192^3 (benchmarks/RESULTS.md); halving B's reads
  // from L2 does not shorten a kernel that L2 keeps fed.
  // Persistent blocks, one per SM, so that a block's next tile loads during its epilogue; a
  // split takes one tile per cluster.
  best.ctas = best.split_k > 1 ? 0 : sms;
  return best;
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
  const bool split = params.split_k > 1;
  BRAZE_USER_CHECK(
      (params.split_k == 1 || params.split_k == 2 || params.split_k == 4 || params.split_k == 8) &&
      (!split || params.ctas == 0))
      << "matmul: split_k = " << params.split_k << " with " << params.ctas
      << " blocks; a split is 1, 2, 4 or 8 CTAs of a cluster, each cluster on one tile (ctas 0)";
  const bool pair = params.cluster_m == 2;
  BRAZE_USER_CHECK(
      (params.cluster_m == 1 || params.cluster_m == 2) &&
      (!pair || (!split && (params.tile_n == 128 || params.tile_n == 256) && params.ctas % 2 == 0)))
      << "matmul: cluster_m = " << params.cluster_m << " with split_k = " << params.split_k
      << ", tile_n = " << params.tile_n << " and " << params.ctas
      << " blocks; pairs sharing B take no split, tiles 128 or 256 wide and an even block count";
  BRAZE_USER_CHECK((params.epilogue_vector == 1 || params.epilogue_vector == 2) &&
                   (params.epilogue_vector == 2 || params.tma_store == 0))
      << "matmul: epilogue_vector = " << params.epilogue_vector
      << " with tma_store = " << params.tma_store
      << "; 1 or 2 columns per epilogue call, and 2 with tma_store";
  BRAZE_USER_CHECK((params.tma_store == 0 || params.tma_store == 1) &&
                   (params.tma_store == 0 || (!split && stagedOutput(fusion) != nullptr)))
      << "matmul: tma_store = " << params.tma_store << " with split_k = " << params.split_k
      << "; 0 or 1, and 1 needs no split and a 16-bit first output ("
      << fusion.outputs().front()->name() << " is " << toString(fusion.outputs().front()->dtype())
      << ")";
  auto found = operandsOf(fusion);
  BRAZE_USER_CHECK(std::holds_alternative<Operands>(found))
      << "matmul: schedule() of a fusion canScheduleCompileTime refuses";
  const Operands& ops = std::get<Operands>(found);
  BRAZE_USER_CHECK(!pair || ops.layout.b_rank <= 3)
      << "matmul: cluster_m = 2 with b of rank " << ops.layout.b_rank
      << "; pairs multicast B's copies, which take one batch dim at most";
  BRAZE_USER_CHECK(!pair || !ops.layout.b_convert)
      << "matmul: cluster_m = 2 with b converted from fp32 (" << ops.b_source->name()
      << "); pairs multicast B's copies as stored";
  BRAZE_USER_CHECK(!ops.layout.b_mn_major || params.tile_n % 64 == 0)
      << "matmul: tile_n = " << params.tile_n
      << " with b stored N-major; its tile is copied in boxes of 64 columns";
  GemmShape shape{params.tile_m,
                  params.tile_n,
                  params.tile_k,
                  params.stages,
                  params.group_m,
                  ops.a->dtype() == DataType::Float16,
                  ops.layout,
                  params.split_k,
                  params.cluster_m,
                  params.tma_store != 0,
                  static_cast<uint64_t>(params.vector_inputs),
                  params.epilogue_vector};
  BRAZE_USER_CHECK(gemmSharedBytes(shape) <= kSharedBytesPerBlock)
      << "matmul: a ring of " << params.stages << " stages needs " << gemmSharedBytes(shape)
      << " bytes of shared memory; an sm_90 block has 227 KiB";
  // A split's partial sums (2 x 128 threads x tile_n / 2 floats) reuse the ring.
  BRAZE_USER_CHECK(!split || 512 * params.tile_n <= gemmSharedBytes(shape) - 1024)
      << "matmul: the partial sums of a " << params.tile_n << "-wide tile do not fit a ring of "
      << params.stages << " stages";
  // K-major: boxes of 64 K by the tile's rows (32 K of a converted fp32 operand: 128-byte
  // rows); MN-major: boxes of 64 rows by 64 K. Batch dims are the map's outer dims, innermost
  // first, one batch per box.
  const auto map = [&](const TensorView* tv, bool mn_major, int64_t k_dim, int64_t mn_dim,
                       int64_t rows) {
    const auto box_rows = static_cast<uint32_t>(mn_major ? 64 : rows);
    const auto box_k = static_cast<uint32_t>(128 / sizeInBytes(tv->dtype()));
    TensorMapParameter parameter{.dims = {k_dim, mn_dim},
                                 .box = {box_k, box_rows},
                                 .swizzle = TensorMapParameter::Swizzle::Bytes128};
    if (mn_major) {
      std::swap(parameter.dims[0], parameter.dims[1]);
      std::swap(parameter.box[0], parameter.box[1]);
    }
    for (int64_t d = tv->rank() - 3; d >= 0; --d) {
      parameter.dims.push_back(d);
      parameter.box.push_back(1);
    }
    return parameter;
  };
  const int64_t a_rank = ops.layout.a_rank;
  using Kind = KernelTemplate::ParameterKind;
  KernelTemplate kernel;
  kernel.source = gemmTemplateSource(shape);
  kernel.parameters = {{Kind::TensorMap, ops.a_source,
                        map(ops.a_source, ops.layout.a_mn_major, ops.layout.a_k_dim,
                            ops.layout.a_m_dim, params.tile_m)},
                       {Kind::TensorMap, ops.b_source,
                        map(ops.b_source, ops.layout.b_mn_major, ops.b_k_dim, ops.layout.b_n_dim,
                            params.tile_n / params.cluster_m)},
                       {Kind::Tensor, ops.a_source, {}},
                       {Kind::Tensor, ops.b_source, {}}};
  if (shape.tma_store) {
    // C's map, after B's: boxes of 64 rows by 64 columns (128 bytes), one batch each.
    auto* c = fusion.outputs().front()->as<TensorView>();
    TensorMapParameter parameter{.swizzle = TensorMapParameter::Swizzle::Bytes128};
    for (int64_t d = c->rank() - 1; d >= 0; --d) {
      parameter.dims.push_back(d);
      parameter.box.push_back(d >= c->rank() - 2 ? 64 : 1);
    }
    kernel.parameters.insert(kernel.parameters.begin() + 2, {Kind::TensorMap, c, parameter});
  }
  kernel.epilogue = KernelTemplate::Epilogue{.anchor = ops.out,
                                             .accumulator_bias = ops.bias,
                                             .vector = params.epilogue_vector,
                                             .prologue = prologueOf(ops)};
  const std::vector<IterDomain*> result = ops.out->logicalNoReductions();
  const size_t rank = result.size();
  // Tiles of the grid, a pair's two tiles counted as one.
  Val* tiles = mul(ceil_div(result[rank - 1]->extent(), Operand(params.tile_n)),
                   ceil_div(result[rank - 2]->extent(), Operand(params.tile_m * params.cluster_m)));
  for (size_t d = 0; d + 2 < rank; ++d) tiles = mul(tiles, result[d]->extent());
  if (split) {
    kernel.grid[0] = mul(tiles, fusion.constantIndex(params.split_k));
    kernel.cluster = {params.split_k, 1, 1};
  } else {
    Val* ctas = mul(tiles, fusion.constantIndex(params.cluster_m));
    kernel.grid[0] = params.ctas > 0 ? minimum(ctas, fusion.constantIndex(params.ctas)) : ctas;
    kernel.cluster = {params.cluster_m, 1, 1};
  }
  // Pairs of columns would leave an odd N's last column unstored.
  if (params.epilogue_vector == 2) {
    kernel.launch_checks.emplace_back(
        eq(remainder(result[rank - 1]->extent(), int64_t{2}), int64_t{0}),
        "epilogue_vector = 2 stores columns in pairs, and N is odd; schedule with "
        "epilogue_vector = 1 (the heuristics choose it for an odd N)");
  }
  kernel.block[0] = fusion.constantIndex(384);
  kernel.dynamic_shared_memory_bytes = fusion.constantIndex(gemmSharedBytes(shape));
  kernel.arch_specific = true;
  fusion.setKernelTemplate(std::move(kernel));
}

}  // namespace braze::matmul_scheduler
