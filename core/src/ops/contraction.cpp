// matmul and linear. The output's logical domain is the result's dims followed by one Reduction
// IterDomain for the contracted dim K (the extent of the first operand's last dim):
//
//   matmul(T0: float32[i0{s0}, i1{s1}, i2{s2}], T1: float32[i3{s2}, i4{s3}])
//     T2: float32[i5{s0}, i6{s1}, i7{s3}, r8{s2}] = matmul(T0, T1)
//   linear(T0: float32[i0{s0}, i1{s1}], T1: float32[i2{s2}, i3{s1}])
//     T2: float32[i4{s0}, i5{s2}, r6{s1}] = linear(T0, T1)

#include <algorithm>

#include "braze/ops/contraction.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

using ops_detail::iterDomainOfExtent;
using ops_detail::shapeText;
using ops_detail::tensorLabel;

std::string describeOperand(const TensorView* tv) {
  return tensorLabel(tv) + " " + shapeText(tv);
}

void checkOperand(std::string_view op, std::string_view argument, const TensorView* tv,
                  const TensorView* first) {
  BRAZE_USER_CHECK(tv != nullptr) << op << ": " << argument << " is null";
  BRAZE_USER_CHECK(&tv->fusion() == &first->fusion())
      << op << ": " << argument << " " << tv->name() << " belongs to another fusion than "
      << first->name();
  BRAZE_USER_CHECK(isFloatingPoint(tv->dtype()))
      << op << ": " << argument << " " << tensorLabel(tv) << " has dtype " << tv->dtype() << "; "
      << op << " needs floating operands (float16, bfloat16, float32 or float64)";
  BRAZE_USER_CHECK(tv->dtype() == first->dtype())
      << op << ": " << argument << " " << tensorLabel(tv) << " has dtype " << tv->dtype() << " but "
      << tensorLabel(first) << " has dtype " << first->dtype()
      << "; cast the operands to one dtype first";
}

bool hasSizeOne(const IterDomain* id) {
  return (id->isBroadcast() && !id->hasExpandedExtent()) ||
         id->logicalExtent()->isConstantEqualTo(1);
}

// Both sizes are constants and differ.
bool differ(const IterDomain* a, const IterDomain* b) {
  const std::optional<int64_t> x = a->logicalExtent()->constantInt();
  const std::optional<int64_t> y = b->logicalExtent()->constantInt();
  return x && y && *x != *y;
}

IterDomain* contractedDim(IterDomain* k) {
  return k->fusion().create<IterDomain>(k->logicalExtent(), IterType::Reduction);
}

TensorView* contraction(OpKind op, std::vector<Val*> inputs, DataType dtype,
                        std::vector<IterDomain*> domain) {
  Fusion& fusion = inputs[0]->fusion();
  auto* y = fusion.create<TensorView>(dtype, std::move(domain));
  fusion.create<Expr>(op, std::move(inputs), std::vector<Val*>{y});
  return y;
}

}  // namespace

TensorView* matmul(TensorView* a, TensorView* b) {
  BRAZE_USER_CHECK(a != nullptr) << "matmul: a is null";
  checkOperand("matmul", "a", a, a);
  checkOperand("matmul", "b", b, a);
  BRAZE_USER_CHECK(a->rank() >= 1 && b->rank() >= 1)
      << "matmul of " << describeOperand(a) << " and " << describeOperand(b)
      << ": both operands need at least one dim; use mul for a 0-d operand";
  const std::vector<IterDomain*> da = a->logicalNoReductions();
  const std::vector<IterDomain*> db = b->logicalNoReductions();
  IterDomain* ka = da.back();
  IterDomain* kb = db.size() == 1 ? db[0] : db[db.size() - 2];
  BRAZE_USER_CHECK(!differ(ka, kb))
      << "matmul of " << describeOperand(a) << " and " << describeOperand(b)
      << ": the inner sizes differ (" << ka->logicalExtent()->name() << " vs "
      << kb->logicalExtent()->name() << "); a's last dim must equal b's "
      << (db.size() == 1 ? "only" : "second-to-last") << " dim";

  // Batch dims: everything before the last two dims, broadcast from the right.
  const size_t batch_a = da.size() >= 2 ? da.size() - 2 : 0;
  const size_t batch_b = db.size() >= 2 ? db.size() - 2 : 0;
  const size_t batch = std::max(batch_a, batch_b);
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i < batch; ++i) {
    IterDomain* x = i + batch_a >= batch ? da[i + batch_a - batch] : nullptr;
    IterDomain* y = i + batch_b >= batch ? db[i + batch_b - batch] : nullptr;
    IterDomain* chosen = x;
    if (x == nullptr || (y != nullptr && hasSizeOne(x))) {
      chosen = y;
    } else if (y != nullptr && !hasSizeOne(y)) {
      BRAZE_USER_CHECK(!differ(x, y))
          << "matmul of " << describeOperand(a) << " and " << describeOperand(b) << ": batch dim "
          << i << " has sizes " << x->logicalExtent()->name() << " and "
          << y->logicalExtent()->name()
          << ", which do not broadcast; batch sizes must match or be 1";
    }
    domain.push_back(iterDomainOfExtent(a->fusion(), chosen->logicalExtent()));
  }
  // A 1-D operand gets no row (a) or column (b) dim in the result, as in torch.matmul.
  if (da.size() >= 2)
    domain.push_back(iterDomainOfExtent(a->fusion(), da[da.size() - 2]->logicalExtent()));
  if (db.size() >= 2) domain.push_back(iterDomainOfExtent(a->fusion(), db.back()->logicalExtent()));
  domain.push_back(contractedDim(ka));
  return contraction(OpKind::Matmul, {a, b}, a->dtype(), std::move(domain));
}

TensorView* linear(TensorView* x, TensorView* weight, TensorView* bias) {
  BRAZE_USER_CHECK(x != nullptr) << "linear: x is null";
  checkOperand("linear", "x", x, x);
  checkOperand("linear", "weight", weight, x);
  if (bias != nullptr) checkOperand("linear", "bias", bias, x);
  BRAZE_USER_CHECK(x->rank() >= 1)
      << "linear: x " << describeOperand(x) << " is 0-d; x needs a last dim of size K";
  BRAZE_USER_CHECK(weight->rank() == 1 || weight->rank() == 2)
      << "linear: weight " << describeOperand(weight) << " has rank " << weight->rank()
      << "; weight must be [N, K] or [K]";
  const std::vector<IterDomain*> dx = x->logicalNoReductions();
  const std::vector<IterDomain*> dw = weight->logicalNoReductions();
  BRAZE_USER_CHECK(!differ(dx.back(), dw.back()))
      << "linear of x " << describeOperand(x) << " and weight " << describeOperand(weight)
      << ": K differs (" << dx.back()->logicalExtent()->name() << " vs "
      << dw.back()->logicalExtent()->name() << "); x's last dim must equal weight's last dim";
  if (bias != nullptr) {
    const int64_t max_rank = weight->rank() == 2 ? 1 : 0;
    BRAZE_USER_CHECK(bias->rank() <= max_rank)
        << "linear: bias " << describeOperand(bias) << " has rank " << bias->rank()
        << "; with weight " << describeOperand(weight) << " the bias must be "
        << (max_rank == 1 ? "[N] or 0-d" : "0-d");
    if (bias->rank() == 1) {
      IterDomain* n = bias->logicalNoReductions()[0];
      BRAZE_USER_CHECK(!differ(n, dw[0]))
          << "linear: bias " << describeOperand(bias)
          << " does not match N = " << dw[0]->logicalExtent()->name() << " of weight "
          << describeOperand(weight);
    }
  }
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i + 1 < dx.size(); ++i) {
    domain.push_back(iterDomainOfExtent(x->fusion(), dx[i]->logicalExtent()));
  }
  if (dw.size() == 2) domain.push_back(iterDomainOfExtent(x->fusion(), dw[0]->logicalExtent()));
  domain.push_back(contractedDim(dx.back()));
  std::vector<Val*> inputs{x, weight};
  if (bias != nullptr) inputs.push_back(bias);
  return contraction(OpKind::Linear, std::move(inputs), x->dtype(), std::move(domain));
}

}  // namespace braze
