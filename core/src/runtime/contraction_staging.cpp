#include "runtime/contraction_staging.h"

#include <array>

#include "braze/eval/argument_binding.h"
#include "braze/eval/strided_layout.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"

namespace braze::runtime_detail {
namespace {

constexpr int64_t kRowAlignmentBytes = 16;

bool isContraction(const Expr& expr) {
  return expr.op() == OpKind::Linear || expr.op() == OpKind::Matmul;
}

// The K dim of contraction operand `operand` (0: a, 1: b), or -1 when it has none to copy
// along (a vector operand: a matrix-vector product is not a tensor-core kernel's work).
int64_t kDimOf(const Expr& contraction, size_t operand) {
  const auto* tv = contraction.input(operand)->dynCast<TensorView>();
  if (tv == nullptr || tv->rank() < 2) return -1;
  if (operand == 0) return tv->rank() - 1;
  // linear's weight is [N, K]; matmul's b is [..., K, N].
  return contraction.op() == OpKind::Linear ? tv->rank() - 1 : tv->rank() - 2;
}

// Whether a tensor-core kernel can copy `tensor` (operand `tv`) in rows along the dim `tv` is
// stored innermost: that dim of unit stride, every other stride a multiple of 16 bytes, the
// data on a 16-byte boundary. Dims of size 1 are never stepped over.
bool copyableInRows(const TensorView& tv, const TensorArgumentInfo& tensor,
                    int64_t data_alignment) {
  if (data_alignment < kRowAlignmentBytes) return false;
  const std::vector<int64_t>& order = tv.allocationOrder();
  const auto inner = static_cast<size_t>(order.empty() ? tv.rank() - 1 : order.back());
  const int64_t bytes = sizeInBytes(tensor.dtype);
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] == 1) continue;
    if (d == inner ? tensor.strides[d] != 1 : tensor.strides[d] * bytes % kRowAlignmentBytes != 0)
      return false;
  }
  return true;
}

// The segment of `contraction` alone and what a scheduler knows of it for `context`.
struct ContractionSegment {
  Segment segment;
  SchedulerRuntimeInfo info;
};

ContractionSegment contractionSegment(const Fusion& fusion, const Expr* contraction,
                                      const RunContext& context) {
  const std::array<const Expr*, 1> exprs = {contraction};
  Segment segment = extractSegment(fusion, exprs);
  SchedulerRuntimeInfo info = segmentRuntimeInfo(fusion, segment, context);
  return {std::move(segment), std::move(info)};
}

// Contraction operand `tv` as this run lays it out: a fusion input's argument, or the dense
// buffer an earlier kernel writes (on a 16-byte boundary); alignment 0 when unknown.
std::pair<TensorArgumentInfo, int64_t> operandLayout(const Fusion& fusion, const TensorView* tv,
                                                     const RunContext& context) {
  const int64_t position = fusion.inputIndex(tv);
  if (position >= 0) {
    const auto at = static_cast<size_t>(position);
    const auto* argument = std::get_if<TensorArgumentInfo>(&context.arguments[at]);
    return {argument != nullptr ? *argument : TensorArgumentInfo{},
            argument != nullptr ? context.data_alignments[at] : 0};
  }
  TensorArgumentInfo buffer;
  buffer.dtype = tv->dtype();
  for (const IterDomain* id : tv->logicalNoReductions()) {
    const std::optional<ScalarValue> extent = context.extents->evaluate(id->logicalExtent());
    if (!extent) return {buffer, 0};
    buffer.sizes.push_back(toInt64(*extent));
  }
  buffer.strides = denseStrides(buffer.sizes, tv->allocationOrder());
  return {buffer, kRowAlignmentBytes};
}

// Which operands of one contraction are copied, and whether K is padded.
struct Staging {
  const Expr* contraction = nullptr;
  std::array<bool, 2> copied = {false, false};
  bool pad_k = false;
};

// Copies operand `operand` of `contraction` (in the fusion being rewritten) K-innermost, its K
// padded with zeros to a multiple of 16 bytes when `pad_k`, and makes the contraction read it.
void stageOperand(Expr& contraction, size_t operand, bool pad_k) {
  auto* tv = contraction.input(operand)->as<TensorView>();
  const int64_t rank = tv->rank();
  const int64_t k_dim = kDimOf(contraction, operand);
  TensorView* staged = tv;
  // A cast of a fusion input is staged from that input and cast after: the pointwise kernel
  // pads fusion inputs only.
  const Expr* def = tv->definition();
  const bool cast_of_input =
      def != nullptr && def->op() == OpKind::Cast && tv->fusion().isInput(def->input(0));
  if (cast_of_input) staged = def->input(0)->as<TensorView>();
  if (pad_k) {
    Val* k = tv->logicalNoReductions()[static_cast<size_t>(k_dim)]->logicalExtent();
    const int64_t per_row = kRowAlignmentBytes / sizeInBytes(tv->dtype());
    Val* width = sub(mul(ceil_div(k, per_row), per_row), k);
    // (left, right) pairs from the last dim back to K's.
    std::vector<Operand> widths(static_cast<size_t>(2 * (rank - k_dim)), int64_t{0});
    widths.back() = width;
    staged = pad(staged, widths);
  }
  if (cast_of_input) staged = cast(staged, tv->dtype());
  // K's stride is the smallest; the other dims keep their row-major order.
  std::vector<int64_t> order(static_cast<size_t>(rank));
  order[static_cast<size_t>(k_dim)] = 0;
  int64_t next = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (d != k_dim) order[static_cast<size_t>(d)] = next++;
  }
  staged = stride_order(staged, order);
  contraction.replaceInput(tv, staged);
}

// A contraction like `contraction` of its (staged) operands, in its place: its result's K is
// the staged operands' K, which every consumer of the old result now reads.
Expr* rebuildContraction(Fusion& fusion, Expr& contraction) {
  auto* a = contraction.input(0)->as<TensorView>();
  auto* b = contraction.input(1)->as<TensorView>();
  auto* old = contraction.output(0)->as<TensorView>();
  TensorView* rebuilt = nullptr;
  if (contraction.op() == OpKind::Linear) {
    TensorView* bias =
        contraction.inputs().size() > 2 ? contraction.input(2)->dynCast<TensorView>() : nullptr;
    rebuilt = linear(a, b, bias);
  } else {
    rebuilt = matmul(a, b);
  }
  const std::vector<Expr*> uses = old->uses();
  for (Expr* use : uses) use->replaceInput(old, rebuilt);
  if (fusion.isOutput(old)) fusion.replaceOutput(old, rebuilt);
  contraction.detach();
  return rebuilt->definition();
}

}  // namespace

RunContext contextForCopy(const RunContext& context, const Fusion& copy) {
  RunContext rebound = context;
  rebound.extents = std::make_shared<ExpressionEvaluator>();
  validateAndBindArguments(copy, context.arguments, "FusionExecutorCache::run", *rebound.extents);
  return rebound;
}

std::optional<StagedContractions> stageContractionOperands(const Fusion& fusion,
                                                           const RunContext& context,
                                                           const SchedulerRegistry& registry) {
  std::vector<Staging> stagings;
  for (const Expr* expr : fusion.exprs()) {
    if (!isContraction(*expr) || kDimOf(*expr, 0) < 0 || kDimOf(*expr, 1) < 0) continue;
    Staging staging{.contraction = expr};
    std::array<TensorArgumentInfo, 2> layouts;
    bool known = true;
    for (size_t operand = 0; operand < 2; ++operand) {
      const auto [layout, alignment] =
          operandLayout(fusion, expr->input(operand)->as<TensorView>(), context);
      layouts[operand] = layout;
      known = known && alignment > 0;
      staging.copied[operand] =
          alignment > 0 &&
          !copyableInRows(*expr->input(operand)->as<TensorView>(), layout, alignment);
    }
    if (!known || !(staging.copied[0] || staging.copied[1])) continue;
    // A scheduler that reads such operands as they are is better than a copy.
    const ContractionSegment found = contractionSegment(fusion, expr, context);
    if (registry.choose(*found.segment.fusion, found.info).accepted()) continue;
    const int64_t k = layouts[0].sizes[static_cast<size_t>(kDimOf(*expr, 0))];
    staging.pad_k = k * sizeInBytes(layouts[0].dtype) % kRowAlignmentBytes != 0;
    if (staging.pad_k) staging.copied = {true, true};
    // One tensor as both operands (linear(x, x)) is copied once, which must suit both.
    if (expr->input(0) == expr->input(1) && kDimOf(*expr, 0) != kDimOf(*expr, 1)) continue;
    stagings.push_back(staging);
  }
  if (stagings.empty()) return std::nullopt;

  StagedContractions result;
  CloneMap map;
  result.fusion = fusion.clone(&map);
  std::vector<const Expr*> staged_contractions;
  for (const Staging& staging : stagings) {
    Expr* copy = map[staging.contraction];
    const bool same_tensor = copy->input(0) == copy->input(1);
    result.key += (result.key.empty() ? "" : "; ") + std::string(toString(copy->op())) + " " +
                  copy->output(0)->name() + ":";
    for (size_t operand = 0; operand < 2; ++operand) {
      if (!staging.copied[operand]) continue;
      result.key += operand == 0 ? " a" : " b";
      if (operand == 1 && same_tensor && staging.copied[0]) continue;  // replaced with a's
      stageOperand(*copy, operand, staging.pad_k);
    }
    if (staging.pad_k) result.key += ", K padded";
    staged_contractions.push_back(rebuildContraction(*result.fusion, *copy));
  }
  // Only worth it when some scheduler takes every contraction so staged.
  const RunContext copy_context = contextForCopy(context, *result.fusion);
  for (const Expr* contraction : staged_contractions) {
    const ContractionSegment found = contractionSegment(*result.fusion, contraction, copy_context);
    if (!registry.choose(*found.segment.fusion, found.info).accepted()) return std::nullopt;
  }
  return result;
}

}  // namespace braze::runtime_detail
