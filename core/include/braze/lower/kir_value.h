#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/iter_domain.h"

namespace braze {
class Val;
}

namespace braze::kir {

/// What a kernel-IR scalar is: the integer and boolean arithmetic of indices and predicates.
/// Tensor math (exp, add of floats, ...) is not a Value: it stays a fusion Expr that codegen
/// prints.
enum class ValueKind : uint8_t {
  Constant,  ///< int64 or bool
  Symbol,    ///< a name: loop index, thread index, tensor size or stride, scalar parameter
  Sum,       ///< constant + Σ terms; each term a Product or an atom
  Product,   ///< coefficient × Π factors (atoms)
  Div,       ///< truncating division (operands are non-negative wherever it is simplified)
  Mod,
  CeilDiv,
  Min,
  Max,
  Lt,
  Le,
  Eq,
  Ne,
  And,
  Or,
  Not,
  Select,  ///< operands: cond, if_true, if_false
  Load,    ///< an element of a tensor read as an index (index_select, gather)
};

/// Where a Symbol comes from, so that analyses can relate it back to the fusion.
enum class SymbolRole : uint8_t {
  LoopIndex,    ///< a serial/unrolled loop's variable
  ThreadIndex,  ///< threadIdx.* / blockIdx.* (see `parallel_type`)
  Extent,       ///< a tensor's extent (a fusion scalar, maybe an input) as the kernel reads it
  Stride,       ///< a tensor parameter's stride, known only at run time
  Other,        ///< anything else, e.g. a scalar input that may be negative (a select index)
};

class ValueNode;

/// An immutable, simplified integer/boolean expression of kernel IR. Building one through the
/// functions below simplifies it on the fly: constants fold, sums and products are kept as
/// canonical polynomials (so equal expressions compare equal), and division and modulo by a
/// factor that provably bounds the remainder disappear, e.g. `(i * 4 + j) / 4 -> i` and
/// `(i * 4 + j) % 4 -> j` when 0 <= j < 4, and `(x / e) * e + x % e -> x`, which is how
/// merged contiguous dimensions fold back into one index.
///
/// Index quantities are assumed non-negative where a rule needs it (loop and thread indices,
/// sizes, strides); rules that need it check it on the polynomial and otherwise keep the
/// operation as written.
class Value {
 public:
  Value() = default;
  explicit Value(std::shared_ptr<const ValueNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const ValueNode& node() const { return *node_; }
  ValueKind kind() const;

  bool isConstant() const;
  /// The constant as int64 (bools as 0/1), or nullopt.
  std::optional<int64_t> constantValue() const;
  bool isTrue() const;
  bool isFalse() const;
  bool isBool() const;

  /// Canonical structural key: equal keys mean equal expressions.
  const std::string& key() const;
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }

  /// C++ text with minimal parentheses ("blockIdx.x * 512 + threadIdx.x * 4 + i3").
  std::string toString() const;

 private:
  std::shared_ptr<const ValueNode> node_;
};

/// What a Symbol stands for; `bound` is an exclusive upper bound (its extent) when known.
struct SymbolInfo {
  SymbolRole role = SymbolRole::Other;
  ParallelType parallel_type = ParallelType::Serial;
  const Val* fusion_val = nullptr;  ///< Extent (or a scalar input): the fusion scalar it prints
  int64_t tensor_parameter = -1;    ///< Stride: which parameter
  int64_t dim = -1;                 ///< Stride: which dim
  Value bound = {};                 ///< 0 <= symbol < bound (undefined: no upper bound known)
  /// Orders terms when printing: smaller first (block and thread indices, then loops in
  /// creation order).
  int64_t order = 0;
};

class ValueNode {
 public:
  ValueKind kind = ValueKind::Constant;
  bool is_bool = false;
  int64_t constant = 0;  ///< Constant; Sum's constant term; Product's coefficient
  std::string name;      ///< Symbol text; Load's tensor text
  SymbolInfo symbol;
  std::vector<Value> operands;
  std::string key;
  std::optional<int64_t> lo;  ///< inclusive lower bound when known
  std::optional<int64_t> hi;  ///< inclusive upper bound when known
  int64_t order = 0;          ///< smallest symbol order inside (for printing order)
};

Value constant(int64_t value);
Value boolean(bool value);
Value symbol(std::string name, SymbolInfo info);
/// `tensor_text[index]` read as an index (the element is converted to the index type).
Value load(std::string tensor_text, Value index);

Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator+(const Value& a, int64_t b);
Value operator*(const Value& a, int64_t b);
Value div(const Value& a, const Value& b);
Value mod(const Value& a, const Value& b);
Value ceilDiv(const Value& a, const Value& b);
Value min(const Value& a, const Value& b);
Value max(const Value& a, const Value& b);
Value lt(const Value& a, const Value& b);
Value le(const Value& a, const Value& b);
Value ge(const Value& a, const Value& b);
Value eq(const Value& a, const Value& b);
Value ne(const Value& a, const Value& b);
Value logicalAnd(const Value& a, const Value& b);
Value logicalOr(const Value& a, const Value& b);
Value logicalNot(const Value& a);
Value select(const Value& cond, const Value& if_true, const Value& if_false);

/// Conjunction of all `values` (true when empty), without duplicates.
Value conjunction(const std::vector<Value>& values);

/// True when a < b can be proven from bounds and structure.
bool provablyLess(const Value& a, const Value& b);
/// True when every value `v` can take is >= 0.
bool isNonNegative(const Value& v);

/// Replaces Symbols (by key) and re-simplifies.
Value substitute(const Value& v, const std::map<std::string, Value>& replacements);
/// True when `v` mentions the Symbol `s`.
bool dependsOn(const Value& v, const Value& s);
/// Every Symbol inside `v`, in order of first appearance.
std::vector<Value> symbolsOf(const Value& v);

/// The terms of `v` seen as a polynomial: (coefficient, factors), plus its constant.
struct PolynomialTerm {
  int64_t coefficient;
  std::vector<Value> factors;
};
std::vector<PolynomialTerm> termsOf(const Value& v, int64_t* constant_out);

}  // namespace braze::kir
