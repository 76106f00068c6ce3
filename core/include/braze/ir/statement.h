#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "braze/error.h"
#include "braze/ir/attribute.h"
#include "braze/ir/data_type.h"
#include "braze/ir/op_kind.h"

namespace braze {

class CloneMap;
class Fusion;
class Expr;

enum class StatementKind : uint8_t { Scalar, IterDomain, TensorView, Expr };

/// A node of the IR. Every Statement is owned by exactly one Fusion, which numbers it with a
/// dense id in creation order; ids are stable for the life of the Fusion and are the order in
/// which a clone recreates statements.
class Statement {
 public:
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  virtual ~Statement() = default;

  Fusion& fusion() const { return *fusion_; }
  int64_t id() const { return id_; }
  StatementKind statementKind() const { return kind_; }
  bool isVal() const { return kind_ != StatementKind::Expr; }
  bool isExpr() const { return kind_ == StatementKind::Expr; }

  /// LLVM-style RTTI: each class says which statements it covers through `classof`.
  template <typename T>
  bool isA() const {
    return T::classof(this);
  }
  /// Checked downcast; a wrong type is an internal error.
  template <typename T>
  T* as() {
    BRAZE_INTERNAL_CHECK(isA<T>()) << "statement " << id_ << " is not the requested kind";
    return static_cast<T*>(this);
  }
  template <typename T>
  const T* as() const {
    BRAZE_INTERNAL_CHECK(isA<T>()) << "statement " << id_ << " is not the requested kind";
    return static_cast<const T*>(this);
  }
  template <typename T>
  T* dynCast() {
    return isA<T>() ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* dynCast() const {
    return isA<T>() ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  Statement(Fusion& fusion, StatementKind kind);

  /// Recreates this statement in `target`, mapping every statement it refers to through
  /// `map` (which already holds every statement of a smaller id). Used by Fusion::clone.
  virtual Statement* cloneInto(Fusion& target, const CloneMap& map) const = 0;

 private:
  friend class Fusion;
  Fusion* fusion_;
  int64_t id_ = -1;
  StatementKind kind_;
};

/// A value: a scalar, an IterDomain or a TensorView. A Val is defined by at most one Expr and
/// used by any number of them.
class Val : public Statement {
 public:
  static bool classof(const Statement* s) { return s->isVal(); }

  DataType dtype() const { return dtype_; }
  Expr* definition() const { return definition_; }
  const std::vector<Expr*>& uses() const { return uses_; }

  /// Per-kind number: TensorView 3 is "T3", symbolic scalar 2 is "s2". Dense within a Fusion.
  int64_t number() const { return number_; }
  /// The printer's short name ("T3", "s2", "i5"); a constant prints as its value.
  virtual std::string name() const = 0;

 protected:
  Val(Fusion& fusion, StatementKind kind, DataType dtype);

 private:
  friend class Fusion;
  friend class Expr;
  DataType dtype_;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
  int64_t number_ = -1;
};

/// One operation: an OpKind with ordered inputs, outputs and named attributes. Expr is
/// deliberately generic; OpKind's table documents what each op carries. Creating an Expr sets
/// it as the definition of its outputs and adds it to the uses of its inputs.
class Expr : public Statement {
 public:
  static bool classof(const Statement* s) { return s->isExpr(); }

  Expr(Fusion& fusion, OpKind op, std::vector<Val*> inputs, std::vector<Val*> outputs,
       std::vector<Attribute> attributes = {});

  OpKind op() const { return op_; }
  const std::vector<Val*>& inputs() const { return inputs_; }
  const std::vector<Val*>& outputs() const { return outputs_; }
  Val* input(size_t i) const;
  Val* output(size_t i) const;
  const std::vector<Attribute>& attributes() const { return attributes_; }

  /// Rewires this Expr to read `replacement` wherever it read `old`, keeping the uses of both
  /// consistent. Only scheduling calls this (cache and rFactor primitives).
  void replaceInput(Val* old, Val* replacement);
  /// Makes `replacement` (which has no definition) an output in place of `old`, which is left
  /// without a definition. Only scheduling calls this (cacheBefore).
  void replaceOutput(Val* old, Val* replacement);
  /// Takes this Expr out of the graph: its inputs forget it as a use, its outputs lose it as
  /// their definition, and it keeps no inputs or outputs, so no traversal reaches it and a
  /// clone copies it empty. Only scheduling calls this (rewrites that redefine a tensor).
  void detach();

  bool hasAttribute(std::string_view name) const;
  /// The attribute's value; a missing name or wrong type is an internal error.
  template <typename T>
  const T& attribute(std::string_view name) const {
    const AttributeValue& value = findAttribute(name);
    const T* typed = std::get_if<T>(&value);
    BRAZE_INTERNAL_CHECK(typed != nullptr)
        << "attribute '" << name << "' of " << op_ << " has another type";
    return *typed;
  }

 private:
  friend class Fusion;
  /// Creates the copy without inputs and outputs: after scheduling rewired an Expr (cache
  /// primitives), it may refer to Vals created after it, so Fusion::clone connects every copy
  /// with restoreEdges once all statements exist.
  Statement* cloneInto(Fusion& target, const CloneMap& map) const override;
  void restoreEdges(const Expr& original, const CloneMap& map);
  const AttributeValue& findAttribute(std::string_view name) const;

  OpKind op_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  std::vector<Attribute> attributes_;
};

}  // namespace braze
