// Kernel-IR scalars and their simplifier. Sums and products are kept as canonical polynomials
// over atoms (symbols, divisions, modulos, ...), so structurally equal index expressions have
// equal keys and like terms combine. The rules that matter for generated code:
//
//   (i * 4 + j) / 4  ->  i          when 0 <= j < 4        (a split walked back and forth)
//   (i * 4 + j) % 4  ->  j
//   (x / e) * e * s + (x % e) * s  ->  x * s              (contiguous merged dims fold)
//   i < e            ->  true       when i's bound is e    (no predicate for exact loops)

#include "braze/lower/kir_value.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "braze/error.h"

namespace braze::kir {

namespace {

using Node = ValueNode;

std::shared_ptr<Node> makeNode(ValueKind kind) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  return node;
}

// ---- bounds ----------------------------------------------------------------------------

std::optional<int64_t> checkedMul(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  __int128 r = static_cast<__int128>(*a) * *b;
  if (r > std::numeric_limits<int64_t>::max() || r < std::numeric_limits<int64_t>::min())
    return std::nullopt;
  return static_cast<int64_t>(r);
}

std::optional<int64_t> checkedAdd(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  __int128 r = static_cast<__int128>(*a) + *b;
  if (r > std::numeric_limits<int64_t>::max() || r < std::numeric_limits<int64_t>::min())
    return std::nullopt;
  return static_cast<int64_t>(r);
}

bool nonNegative(const Node& n) {
  return n.lo.has_value() && *n.lo >= 0;
}

// ---- keys and ordering -------------------------------------------------------------------

bool factorLess(const Value& a, const Value& b) {
  if (a.node().order != b.node().order) return a.node().order < b.node().order;
  return a.key() < b.key();
}

std::string joinKeys(const std::vector<Value>& values) {
  std::string key;
  for (const Value& v : values) {
    key += ' ';
    key += v.key();
  }
  return key;
}

int64_t minOrder(const std::vector<Value>& values) {
  int64_t order = std::numeric_limits<int64_t>::max();
  for (const Value& v : values) order = std::min(order, v.node().order);
  return order;
}

// ---- polynomials -------------------------------------------------------------------------

struct Term {
  int64_t coef = 0;
  std::vector<Value> factors;  // sorted by factorLess
  std::string mono;            // joinKeys(factors)
};

struct Poly {
  int64_t constant = 0;
  std::vector<Term> terms;
};

Term makeTerm(int64_t coef, std::vector<Value> factors) {
  std::sort(factors.begin(), factors.end(), factorLess);
  Term t{coef, std::move(factors), ""};
  t.mono = joinKeys(t.factors);
  return t;
}

Poly toPoly(const Value& v) {
  Poly p;
  const Node& n = v.node();
  switch (n.kind) {
    case ValueKind::Constant:
      p.constant = n.constant;
      break;
    case ValueKind::Sum:
      p.constant = n.constant;
      for (const Value& term : n.operands) {
        if (term.kind() == ValueKind::Product) {
          p.terms.push_back(makeTerm(term.node().constant, term.node().operands));
        } else {
          p.terms.push_back(makeTerm(1, {term}));
        }
      }
      break;
    case ValueKind::Product:
      p.terms.push_back(makeTerm(n.constant, n.operands));
      break;
    default:
      p.terms.push_back(makeTerm(1, {v}));
      break;
  }
  return p;
}

Value buildTerm(const Term& t) {
  if (t.coef == 1 && t.factors.size() == 1) return t.factors[0];
  auto node = makeNode(ValueKind::Product);
  node->constant = t.coef;
  node->operands = t.factors;
  node->key = "(* " + std::to_string(t.coef) + t.mono + ")";
  node->order = minOrder(t.factors);
  std::optional<int64_t> lo = t.coef;
  std::optional<int64_t> hi = t.coef;
  bool all_nonneg = true;
  for (const Value& f : t.factors) {
    if (!nonNegative(f.node())) all_nonneg = false;
    lo = checkedMul(lo, f.node().lo);
    hi = checkedMul(hi, f.node().hi);
  }
  if (all_nonneg) {
    if (t.coef >= 0) {
      node->lo = lo;
      node->hi = hi;
    } else {
      node->lo = hi;
      node->hi = lo;
    }
  }
  return Value(node);
}

void combineLikeTerms(Poly& p) {
  std::vector<Term> merged;
  for (Term& t : p.terms) {
    auto it =
        std::find_if(merged.begin(), merged.end(), [&](const Term& m) { return m.mono == t.mono; });
    if (it == merged.end()) {
      merged.push_back(std::move(t));
    } else {
      it->coef += t.coef;
    }
  }
  merged.erase(
      std::remove_if(merged.begin(), merged.end(), [](const Term& t) { return t.coef == 0; }),
      merged.end());
  p.terms = std::move(merged);
}

Poly scalePoly(const Poly& p, int64_t coef, const std::vector<Value>& factors) {
  Poly out;
  out.constant = 0;
  if (p.constant != 0) out.terms.push_back(makeTerm(p.constant * coef, factors));
  for (const Term& t : p.terms) {
    std::vector<Value> f = t.factors;
    f.insert(f.end(), factors.begin(), factors.end());
    out.terms.push_back(makeTerm(t.coef * coef, std::move(f)));
  }
  // A term without factors is a constant.
  std::vector<Term> kept;
  for (Term& t : out.terms) {
    if (t.factors.empty()) {
      out.constant += t.coef;
    } else {
      kept.push_back(std::move(t));
    }
  }
  out.terms = std::move(kept);
  return out;
}

void appendPoly(Poly& into, const Poly& p) {
  into.constant += p.constant;
  into.terms.insert(into.terms.end(), p.terms.begin(), p.terms.end());
}

// The monomial view of a divisor: coefficient and factors, when it is a single term.
bool asMonomial(const Value& v, int64_t* coef, std::vector<Value>* factors) {
  const Node& n = v.node();
  if (n.kind == ValueKind::Constant) {
    if (n.is_bool || n.constant <= 0) return false;
    *coef = n.constant;
    factors->clear();
    return true;
  }
  if (n.kind == ValueKind::Sum) return false;
  Poly p = toPoly(v);
  if (p.terms.size() != 1 || p.constant != 0 || p.terms[0].coef <= 0) return false;
  *coef = p.terms[0].coef;
  *factors = p.terms[0].factors;
  return true;
}

// Removes the multiset `part` from `whole`; false when not contained.
bool removeFactors(std::vector<Value>& whole, const std::vector<Value>& part) {
  std::vector<Value> rest = whole;
  for (const Value& f : part) {
    auto it = std::find(rest.begin(), rest.end(), f);
    if (it == rest.end()) return false;
    rest.erase(it);
  }
  whole = std::move(rest);
  return true;
}

Value fromPoly(Poly p);

// (x / b) * b * M + (x % b) * M  ->  x * M, repeatedly. b may be a sum (a padded extent,
// s + 3), whose expansion (x / b) * s * M + (x / b) * 3 * M must then be there term by term.
bool foldMerges(Poly& p) {
  for (size_t i = 0; i < p.terms.size(); ++i) {
    const Term& ti = p.terms[i];
    for (size_t k = 0; k < ti.factors.size(); ++k) {
      const Value& f = ti.factors[k];
      if (f.kind() != ValueKind::Mod) continue;
      const Value& x = f.node().operands[0];
      const Value& b = f.node().operands[1];
      const Value quotient = div(x, b);
      if (quotient.kind() != ValueKind::Div) continue;
      std::vector<Value> rest = ti.factors;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(k));
      std::vector<Value> with_quotient = rest;
      with_quotient.push_back(quotient);
      const Poly wanted = scalePoly(toPoly(b), ti.coef, with_quotient);
      if (wanted.constant != 0 || wanted.terms.empty()) continue;
      std::vector<size_t> matched = {i};
      for (const Term& w : wanted.terms) {
        const auto found = std::find_if(p.terms.begin(), p.terms.end(), [&](const Term& t) {
          return t.mono == w.mono && t.coef == w.coef;
        });
        if (found == p.terms.end()) break;
        const auto j = static_cast<size_t>(found - p.terms.begin());
        if (std::find(matched.begin(), matched.end(), j) != matched.end()) break;
        matched.push_back(j);
      }
      if (matched.size() != wanted.terms.size() + 1) continue;
      Poly folded = scalePoly(toPoly(x), ti.coef, rest);
      std::sort(matched.rbegin(), matched.rend());
      for (const size_t j : matched)
        p.terms.erase(p.terms.begin() + static_cast<std::ptrdiff_t>(j));
      appendPoly(p, folded);
      combineLikeTerms(p);
      return true;
    }
  }
  return false;
}

Value fromPoly(Poly p) {
  combineLikeTerms(p);
  while (foldMerges(p)) {
  }
  if (p.terms.empty()) return constant(p.constant);
  std::sort(p.terms.begin(), p.terms.end(), [](const Term& a, const Term& b) {
    const int64_t oa = minOrder(a.factors);
    const int64_t ob = minOrder(b.factors);
    if (oa != ob) return oa < ob;
    return a.mono < b.mono;
  });
  if (p.terms.size() == 1 && p.constant == 0) return buildTerm(p.terms[0]);
  auto node = makeNode(ValueKind::Sum);
  node->constant = p.constant;
  std::optional<int64_t> lo = p.constant;
  std::optional<int64_t> hi = p.constant;
  std::string key = "(+ " + std::to_string(p.constant);
  for (const Term& t : p.terms) {
    Value term = buildTerm(t);
    lo = checkedAdd(lo, term.node().lo);
    hi = checkedAdd(hi, term.node().hi);
    key += " " + term.key();
    node->operands.push_back(std::move(term));
  }
  node->key = key + ")";
  node->lo = lo;
  node->hi = hi;
  node->order = minOrder(node->operands);
  return Value(node);
}

bool polyNonNegative(const Poly& p) {
  if (p.constant < 0) return false;
  for (const Term& t : p.terms) {
    if (t.coef < 0) return false;
    for (const Value& f : t.factors)
      if (!nonNegative(f.node())) return false;
  }
  return true;
}

// Splits a non-negative polynomial into quotient * b + remainder where every term of the
// quotient is divisible by b. False when b is not a positive monomial.
bool splitByDivisor(const Poly& p, const Value& b, Poly* quotient, Poly* remainder) {
  int64_t b_coef = 0;
  std::vector<Value> b_factors;
  if (!asMonomial(b, &b_coef, &b_factors)) return false;
  *quotient = Poly{};
  *remainder = Poly{};
  if (b_factors.empty()) {
    quotient->constant = p.constant / b_coef;
    remainder->constant = p.constant % b_coef;
  } else {
    remainder->constant = p.constant;
  }
  for (const Term& t : p.terms) {
    std::vector<Value> rest = t.factors;
    if (t.coef % b_coef == 0 && removeFactors(rest, b_factors)) {
      quotient->terms.push_back(makeTerm(t.coef / b_coef, std::move(rest)));
    } else {
      remainder->terms.push_back(t);
    }
  }
  // A quotient term without factors is a constant.
  std::vector<Term> kept;
  for (Term& t : quotient->terms) {
    if (t.factors.empty()) {
      quotient->constant += t.coef;
    } else {
      kept.push_back(std::move(t));
    }
  }
  quotient->terms = std::move(kept);
  return true;
}

std::shared_ptr<Node> binaryNode(ValueKind kind, const Value& a, const Value& b, const char* tag) {
  auto node = makeNode(kind);
  node->operands = {a, b};
  node->key = std::string("(") + tag + " " + a.key() + " " + b.key() + ")";
  node->order = std::min(a.node().order, b.node().order);
  return node;
}

Value boolNode(ValueKind kind, std::vector<Value> operands, const char* tag) {
  auto node = makeNode(kind);
  node->is_bool = true;
  node->lo = 0;
  node->hi = 1;
  std::string key = std::string("(") + tag;
  for (const Value& v : operands) key += " " + v.key();
  node->key = key + ")";
  node->order = operands.empty() ? 0 : minOrder(operands);
  node->operands = std::move(operands);
  return Value(node);
}

}  // namespace

// ---- Value -------------------------------------------------------------------------------

ValueKind Value::kind() const {
  return node_->kind;
}
bool Value::isConstant() const {
  return node_->kind == ValueKind::Constant;
}
std::optional<int64_t> Value::constantValue() const {
  if (!isConstant()) return std::nullopt;
  return node_->constant;
}
bool Value::isTrue() const {
  return isConstant() && node_->is_bool && node_->constant != 0;
}
bool Value::isFalse() const {
  return isConstant() && node_->is_bool && node_->constant == 0;
}
bool Value::isBool() const {
  return node_->is_bool;
}
const std::string& Value::key() const {
  return node_->key;
}
bool Value::operator==(const Value& other) const {
  if (node_ == other.node_) return true;
  if (!node_ || !other.node_) return false;
  return node_->key == other.node_->key;
}

// ---- constructors ------------------------------------------------------------------------

Value constant(int64_t value) {
  auto node = makeNode(ValueKind::Constant);
  node->constant = value;
  node->lo = value;
  node->hi = value;
  node->key = std::to_string(value);
  node->order = std::numeric_limits<int64_t>::max();
  return Value(node);
}

Value boolean(bool value) {
  auto node = makeNode(ValueKind::Constant);
  node->is_bool = true;
  node->constant = value ? 1 : 0;
  node->lo = node->constant;
  node->hi = node->constant;
  node->key = value ? "true" : "false";
  node->order = std::numeric_limits<int64_t>::max();
  return Value(node);
}

Value symbol(std::string name, SymbolInfo info) {
  auto node = makeNode(ValueKind::Symbol);
  node->key = "$" + name;
  node->name = std::move(name);
  node->order = info.order;
  if (info.role != SymbolRole::Other) node->lo = 0;
  if (info.bound.defined()) {
    if (auto b = info.bound.constantValue()) node->hi = *b - 1;
  }
  node->symbol = std::move(info);
  return Value(node);
}

Value load(std::string tensor_text, Value index) {
  auto node = makeNode(ValueKind::Load);
  node->key = "(load " + tensor_text + " " + index.key() + ")";
  node->name = std::move(tensor_text);
  node->order = index.node().order;
  node->operands = {std::move(index)};
  return Value(node);
}

Value operator+(const Value& a, const Value& b) {
  BRAZE_INTERNAL_CHECK(a.defined() && b.defined()) << "kir: adding an undefined value";
  Poly p = toPoly(a);
  appendPoly(p, toPoly(b));
  return fromPoly(std::move(p));
}

Value operator-(const Value& a, const Value& b) {
  return a + b * -1;
}

Value operator*(const Value& a, const Value& b) {
  BRAZE_INTERNAL_CHECK(a.defined() && b.defined()) << "kir: multiplying an undefined value";
  const Poly pa = toPoly(a);
  const Poly pb = toPoly(b);
  Poly out;
  out.constant = pa.constant * pb.constant;
  auto add_scaled = [&](const Poly& p, int64_t coef, const std::vector<Value>& factors) {
    appendPoly(out, scalePoly(p, coef, factors));
  };
  if (pb.constant != 0) {
    for (const Term& t : pa.terms) out.terms.push_back(makeTerm(t.coef * pb.constant, t.factors));
  }
  for (const Term& t : pb.terms) {
    Poly pa_no_const = pa;
    pa_no_const.constant = 0;
    add_scaled(pa_no_const, t.coef, t.factors);
    if (pa.constant != 0) out.terms.push_back(makeTerm(t.coef * pa.constant, t.factors));
  }
  return fromPoly(std::move(out));
}

Value operator+(const Value& a, int64_t b) {
  return a + constant(b);
}
Value operator*(const Value& a, int64_t b) {
  return a * constant(b);
}

Value div(const Value& a, const Value& b) {
  BRAZE_INTERNAL_CHECK(a.defined() && b.defined()) << "kir: dividing an undefined value";
  const auto bc = b.constantValue();
  if (bc && *bc == 1) return a;
  BRAZE_INTERNAL_CHECK(!bc || *bc != 0) << "kir: division by the constant 0";
  if (auto ac = a.constantValue(); ac && bc) return constant(*ac / *bc);
  if (a == b) return constant(1);
  if (isNonNegative(a) && provablyLess(a, b)) return constant(0);
  if (a.kind() == ValueKind::Div && bc) {
    if (auto inner = a.node().operands[1].constantValue()) {
      return div(a.node().operands[0], constant(*inner * *bc));
    }
  }
  const Poly p = toPoly(a);
  Poly quotient;
  Poly remainder;
  if (polyNonNegative(p) && splitByDivisor(p, b, &quotient, &remainder) &&
      (!quotient.terms.empty() || quotient.constant != 0)) {
    const Value q = fromPoly(std::move(quotient));
    const Value r = fromPoly(std::move(remainder));
    return q + div(r, b);
  }
  auto node = binaryNode(ValueKind::Div, a, b, "/");
  if (nonNegative(a.node()) && bc && *bc > 0) {
    node->lo = *a.node().lo / *bc;
    if (a.node().hi) node->hi = *a.node().hi / *bc;
  } else if (nonNegative(a.node()) && nonNegative(b.node())) {
    node->lo = 0;
    node->hi = a.node().hi;
  }
  return Value(node);
}

Value mod(const Value& a, const Value& b) {
  BRAZE_INTERNAL_CHECK(a.defined() && b.defined()) << "kir: modulo of an undefined value";
  const auto bc = b.constantValue();
  if (bc && *bc == 1) return constant(0);
  BRAZE_INTERNAL_CHECK(!bc || *bc != 0) << "kir: modulo by the constant 0";
  if (auto ac = a.constantValue(); ac && bc) return constant(*ac % *bc);
  if (a == b) return constant(0);
  if (isNonNegative(a) && provablyLess(a, b)) return a;
  if (a.kind() == ValueKind::Mod) {
    if (a.node().operands[1] == b) return a;
    auto inner = a.node().operands[1].constantValue();
    if (inner && bc && *inner % *bc == 0) return mod(a.node().operands[0], b);
  }
  const Poly p = toPoly(a);
  Poly quotient;
  Poly remainder;
  if (polyNonNegative(p) && splitByDivisor(p, b, &quotient, &remainder) &&
      (!quotient.terms.empty() || quotient.constant != 0)) {
    return mod(fromPoly(std::move(remainder)), b);
  }
  auto node = binaryNode(ValueKind::Mod, a, b, "%");
  if (nonNegative(a.node())) {
    node->lo = 0;
    if (bc && *bc > 0) node->hi = *bc - 1;
    if (a.node().hi && (!node->hi || *a.node().hi < *node->hi)) node->hi = a.node().hi;
  }
  return Value(node);
}

Value ceilDiv(const Value& a, const Value& b) {
  const auto bc = b.constantValue();
  if (bc && *bc == 1) return a;
  if (auto ac = a.constantValue(); ac && bc && *bc > 0) return constant((*ac + *bc - 1) / *bc);
  auto node = binaryNode(ValueKind::CeilDiv, a, b, "ceildiv");
  if (nonNegative(a.node()) && bc && *bc > 0) {
    node->lo = 0;
    if (a.node().hi) node->hi = (*a.node().hi + *bc - 1) / *bc;
  } else if (nonNegative(a.node())) {
    node->lo = 0;
  }
  return Value(node);
}

Value min(const Value& a, const Value& b) {
  if (a == b) return a;
  auto ac = a.constantValue();
  auto bc = b.constantValue();
  if (ac && bc) return constant(std::min(*ac, *bc));
  if (provablyLess(a, b)) return a;
  if (provablyLess(b, a)) return b;
  auto node = binaryNode(ValueKind::Min, a, b, "min");
  if (a.node().lo && b.node().lo) node->lo = std::min(*a.node().lo, *b.node().lo);
  if (a.node().hi && b.node().hi) node->hi = std::min(*a.node().hi, *b.node().hi);
  return Value(node);
}

Value max(const Value& a, const Value& b) {
  if (a == b) return a;
  auto ac = a.constantValue();
  auto bc = b.constantValue();
  if (ac && bc) return constant(std::max(*ac, *bc));
  if (provablyLess(a, b)) return b;
  if (provablyLess(b, a)) return a;
  auto node = binaryNode(ValueKind::Max, a, b, "max");
  if (a.node().lo && b.node().lo) node->lo = std::max(*a.node().lo, *b.node().lo);
  if (a.node().hi && b.node().hi) node->hi = std::max(*a.node().hi, *b.node().hi);
  return Value(node);
}

Value lt(const Value& a, const Value& b) {
  if (auto ac = a.constantValue(), bc = b.constantValue(); ac && bc) return boolean(*ac < *bc);
  if (a == b) return boolean(false);
  if (provablyLess(a, b)) return boolean(true);
  if (a.node().lo && b.node().hi && *a.node().lo >= *b.node().hi) return boolean(false);
  return boolNode(ValueKind::Lt, {a, b}, "<");
}

Value le(const Value& a, const Value& b) {
  if (auto ac = a.constantValue(), bc = b.constantValue(); ac && bc) return boolean(*ac <= *bc);
  if (a == b) return boolean(true);
  if (provablyLess(a, b)) return boolean(true);
  if (a.node().hi && b.node().lo && *a.node().hi <= *b.node().lo) return boolean(true);
  if (a.node().lo && b.node().hi && *a.node().lo > *b.node().hi) return boolean(false);
  return boolNode(ValueKind::Le, {a, b}, "<=");
}

Value ge(const Value& a, const Value& b) {
  return le(b, a);
}

Value eq(const Value& a, const Value& b) {
  if (auto ac = a.constantValue(), bc = b.constantValue(); ac && bc) return boolean(*ac == *bc);
  if (a == b) return boolean(true);
  if (provablyLess(a, b) || provablyLess(b, a)) return boolean(false);
  return boolNode(ValueKind::Eq, {a, b}, "==");
}

Value ne(const Value& a, const Value& b) {
  return logicalNot(eq(a, b));
}

namespace {

Value junction(ValueKind kind, const std::vector<Value>& values) {
  const bool is_and = kind == ValueKind::And;
  std::vector<Value> kept;
  std::function<void(const Value&)> add = [&](const Value& v) {
    if (v.kind() == kind) {
      for (const Value& operand : v.node().operands) add(operand);
      return;
    }
    if (std::find(kept.begin(), kept.end(), v) == kept.end()) kept.push_back(v);
  };
  for (const Value& v : values) {
    BRAZE_INTERNAL_CHECK(v.defined()) << "kir: undefined operand of a conjunction";
    if (is_and ? v.isTrue() : v.isFalse()) continue;
    if (is_and ? v.isFalse() : v.isTrue()) return boolean(!is_and);
    add(v);
  }
  if (kept.empty()) return boolean(is_and);
  if (kept.size() == 1) return kept[0];
  return boolNode(kind, std::move(kept), is_and ? "&&" : "||");
}

}  // namespace

Value logicalAnd(const Value& a, const Value& b) {
  return junction(ValueKind::And, {a, b});
}
Value logicalOr(const Value& a, const Value& b) {
  return junction(ValueKind::Or, {a, b});
}
Value conjunction(const std::vector<Value>& values) {
  return junction(ValueKind::And, values);
}

Value logicalNot(const Value& a) {
  if (a.isConstant()) return boolean(a.constantValue().value() == 0);
  if (a.kind() == ValueKind::Not) return a.node().operands[0];
  return boolNode(ValueKind::Not, {a}, "!");
}

Value select(const Value& cond, const Value& if_true, const Value& if_false) {
  if (cond.isTrue()) return if_true;
  if (cond.isFalse()) return if_false;
  if (if_true == if_false) return if_true;
  auto node = makeNode(ValueKind::Select);
  node->is_bool = if_true.isBool() && if_false.isBool();
  node->operands = {cond, if_true, if_false};
  node->key = "(? " + cond.key() + " " + if_true.key() + " " + if_false.key() + ")";
  node->order = minOrder(node->operands);
  if (if_true.node().lo && if_false.node().lo)
    node->lo = std::min(*if_true.node().lo, *if_false.node().lo);
  if (if_true.node().hi && if_false.node().hi)
    node->hi = std::max(*if_true.node().hi, *if_false.node().hi);
  return Value(node);
}

bool isNonNegative(const Value& v) {
  return nonNegative(v.node());
}

bool provablyLess(const Value& a, const Value& b) {
  const Node& na = a.node();
  const Node& nb = b.node();
  if (na.hi && nb.lo && *na.hi < *nb.lo) return true;
  if (na.kind == ValueKind::Symbol && na.symbol.bound.defined() && na.symbol.bound == b)
    return true;
  if (na.kind == ValueKind::Mod && nonNegative(na.operands[0].node()) && na.operands[1] == b)
    return true;
  // x + c < y + d when x < y and c <= d, e.g. the last element of a loop against its bound.
  if (na.kind == ValueKind::Sum || nb.kind == ValueKind::Sum) {
    Poly pa = toPoly(a);
    Poly pb = toPoly(b);
    if ((pa.constant != 0 || pb.constant != 0) && pa.constant <= pb.constant) {
      pa.constant = 0;
      pb.constant = 0;
      return provablyLess(fromPoly(std::move(pa)), fromPoly(std::move(pb)));
    }
  }
  return false;
}

// ---- traversal ---------------------------------------------------------------------------

namespace {

Value rebuild(const Value& v, const std::vector<Value>& operands) {
  const Node& n = v.node();
  switch (n.kind) {
    case ValueKind::Constant:
    case ValueKind::Symbol:
      return v;
    case ValueKind::Sum: {
      Value sum = constant(n.constant);
      for (const Value& o : operands) sum = sum + o;
      return sum;
    }
    case ValueKind::Product: {
      Value product = constant(n.constant);
      for (const Value& o : operands) product = product * o;
      return product;
    }
    case ValueKind::Div:
      return div(operands[0], operands[1]);
    case ValueKind::Mod:
      return mod(operands[0], operands[1]);
    case ValueKind::CeilDiv:
      return ceilDiv(operands[0], operands[1]);
    case ValueKind::Min:
      return min(operands[0], operands[1]);
    case ValueKind::Max:
      return max(operands[0], operands[1]);
    case ValueKind::Lt:
      return lt(operands[0], operands[1]);
    case ValueKind::Le:
      return le(operands[0], operands[1]);
    case ValueKind::Eq:
      return eq(operands[0], operands[1]);
    case ValueKind::Ne:
      return ne(operands[0], operands[1]);
    case ValueKind::And:
      return conjunction(operands);
    case ValueKind::Or: {
      Value result = boolean(false);
      for (const Value& o : operands) result = logicalOr(result, o);
      return result;
    }
    case ValueKind::Not:
      return logicalNot(operands[0]);
    case ValueKind::Select:
      return select(operands[0], operands[1], operands[2]);
    case ValueKind::Load:
      return load(n.name, operands[0]);
  }
  return v;
}

}  // namespace

Value substitute(const Value& v, const std::map<std::string, Value>& replacements) {
  if (!v.defined()) return v;
  const Node& n = v.node();
  if (n.kind == ValueKind::Symbol) {
    auto it = replacements.find(v.key());
    return it == replacements.end() ? v : it->second;
  }
  if (n.operands.empty()) return v;
  std::vector<Value> operands;
  operands.reserve(n.operands.size());
  bool changed = false;
  for (const Value& o : n.operands) {
    operands.push_back(substitute(o, replacements));
    if (operands.back() != o) changed = true;
  }
  return changed ? rebuild(v, operands) : v;
}

bool dependsOn(const Value& v, const Value& s) {
  if (v == s) return true;
  for (const Value& o : v.node().operands)
    if (dependsOn(o, s)) return true;
  return false;
}

std::vector<Value> symbolsOf(const Value& v) {
  std::vector<Value> out;
  std::function<void(const Value&)> visit = [&](const Value& x) {
    if (x.kind() == ValueKind::Symbol) {
      if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
      return;
    }
    for (const Value& o : x.node().operands) visit(o);
  };
  visit(v);
  return out;
}

std::vector<PolynomialTerm> termsOf(const Value& v, int64_t* constant_out) {
  const Poly p = toPoly(v);
  if (constant_out != nullptr) *constant_out = p.constant;
  std::vector<PolynomialTerm> terms;
  for (const Term& t : p.terms) terms.push_back({t.coef, t.factors});
  return terms;
}

// ---- printing ----------------------------------------------------------------------------

namespace {

int precedence(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Or:
      return 1;
    case ValueKind::And:
      return 2;
    case ValueKind::Eq:
    case ValueKind::Ne:
      return 3;
    case ValueKind::Lt:
    case ValueKind::Le:
      return 4;
    case ValueKind::Sum:
      return 5;
    case ValueKind::Product:
      return v.node().constant < 0 ? 5 : 6;
    case ValueKind::Div:
    case ValueKind::Mod:
      return 6;
    case ValueKind::Not:
      return 7;
    case ValueKind::Constant:
      return v.node().constant < 0 && !v.isBool() ? 7 : 8;
    default:
      return 8;
  }
}

std::string print(const Value& v);

std::string wrap(const Value& v, int min_precedence) {
  const std::string text = print(v);
  return precedence(v) < min_precedence ? "(" + text + ")" : text;
}

std::string printTerm(int64_t coef, const std::vector<Value>& factors) {
  if (factors.size() == 1 && coef == 1) return wrap(factors[0], 6);
  std::string text;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (i > 0) text += " * ";
    // Division and modulo inside a product read better with their own parentheses.
    text += wrap(factors[i], 7);
  }
  if (coef != 1) text += " * " + std::to_string(coef);
  return text;
}

std::string print(const Value& v) {
  const Node& n = v.node();
  switch (n.kind) {
    case ValueKind::Constant:
      if (n.is_bool) return n.constant ? "true" : "false";
      return std::to_string(n.constant);
    case ValueKind::Symbol:
      return n.name;
    case ValueKind::Product:
      if (n.constant < 0) return "-" + printTerm(-n.constant, n.operands);
      return printTerm(n.constant, n.operands);
    case ValueKind::Sum: {
      std::string text;
      bool first = true;
      for (const Value& term : n.operands) {
        int64_t coef = 1;
        std::vector<Value> factors = {term};
        if (term.kind() == ValueKind::Product) {
          coef = term.node().constant;
          factors = term.node().operands;
        }
        if (first) {
          text += coef < 0 ? "-" + printTerm(-coef, factors) : printTerm(coef, factors);
        } else {
          text += coef < 0 ? " - " + printTerm(-coef, factors) : " + " + printTerm(coef, factors);
        }
        first = false;
      }
      if (n.constant > 0) text += " + " + std::to_string(n.constant);
      if (n.constant < 0) text += " - " + std::to_string(-n.constant);
      return text;
    }
    case ValueKind::Div:
      return wrap(n.operands[0], 8) + " / " + wrap(n.operands[1], 8);
    case ValueKind::Mod:
      return wrap(n.operands[0], 8) + " % " + wrap(n.operands[1], 8);
    case ValueKind::CeilDiv:
      return "braze::ceilDiv(" + print(n.operands[0]) + ", " + print(n.operands[1]) + ")";
    case ValueKind::Min:
      return "braze::min(" + print(n.operands[0]) + ", " + print(n.operands[1]) + ")";
    case ValueKind::Max:
      return "braze::max(" + print(n.operands[0]) + ", " + print(n.operands[1]) + ")";
    case ValueKind::Lt:
      return wrap(n.operands[0], 5) + " < " + wrap(n.operands[1], 5);
    case ValueKind::Le:
      return wrap(n.operands[0], 5) + " <= " + wrap(n.operands[1], 5);
    case ValueKind::Eq:
      return wrap(n.operands[0], 4) + " == " + wrap(n.operands[1], 4);
    case ValueKind::Ne:
      return wrap(n.operands[0], 4) + " != " + wrap(n.operands[1], 4);
    case ValueKind::And:
    case ValueKind::Or: {
      const bool is_and = n.kind == ValueKind::And;
      std::string text;
      for (size_t i = 0; i < n.operands.size(); ++i) {
        if (i > 0) text += is_and ? " && " : " || ";
        text += wrap(n.operands[i], is_and ? 3 : 2);
      }
      return text;
    }
    case ValueKind::Not:
      return "!" + wrap(n.operands[0], 8);
    case ValueKind::Select:
      return "(" + print(n.operands[0]) + " ? " + print(n.operands[1]) + " : " +
             print(n.operands[2]) + ")";
    case ValueKind::Load:
      return "((IndexT)" + n.name + "[" + print(n.operands[0]) + "])";
  }
  return "?";
}

}  // namespace

std::string Value::toString() const {
  if (!node_) return "<undefined>";
  return print(*this);
}

}  // namespace braze::kir
