#include "braze/ops/operand.h"

#include "braze/error.h"

namespace braze {

bool Operand::isTensor() const {
  return val_ != nullptr && val_->isA<TensorView>();
}

TypedOperand Operand::typed() const {
  if (val_ == nullptr) return {dtype(), OperandKind::Literal};
  return {dtype(), isTensor() ? OperandKind::Tensor : OperandKind::Scalar};
}

DataType Operand::dtype() const {
  return val_ != nullptr ? val_->dtype() : naturalDataType(constant_);
}

Val* Operand::materialize(Fusion& fusion, std::string_view op, std::string_view argument) const {
  if (val_ == nullptr) return fusion.constant(constant_, naturalDataType(constant_));
  BRAZE_USER_CHECK(&val_->fusion() == &fusion)
      << op << ": " << argument << " (" << val_->name()
      << ") belongs to another fusion; build every operand of one op in the same fusion";
  // An IterDomain is a Val, but it is a dimension, not a value an op can compute with.
  BRAZE_USER_CHECK(!val_->isA<IterDomain>())
      << op << ": " << argument << " is the IterDomain " << val_->name()
      << ", not a value; pass its extent() to compute with its size";
  return val_;
}

Fusion& fusionOf(std::string_view op, std::initializer_list<Operand> operands) {
  const Val* first = nullptr;
  for (const Operand& operand : operands) {
    if (!operand.isVal()) continue;
    if (first == nullptr) {
      first = operand.val();
      continue;
    }
    BRAZE_USER_CHECK(&operand.val()->fusion() == &first->fusion())
        << op << ": operands " << first->name() << " and " << operand.val()->name()
        << " belong to different fusions; build every operand of one op in the same fusion";
  }
  BRAZE_USER_CHECK(first != nullptr)
      << op << ": every operand is a constant, so there is no fusion to build the op in; make "
      << "one operand a value of the fusion, e.g. fusion.constant(value, dtype)";
  return first->fusion();
}

}  // namespace braze
