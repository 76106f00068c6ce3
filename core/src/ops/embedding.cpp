// embedding_fwd: torch.nn.functional.embedding's forward as one take along the rows of weight,
// so that every layer (evaluator, schedulers, lowering, definition files) handles it as the
// indexing op it is:
//
//   embedding_fwd(T0: int64[i0{s0}, i1{s1}], T1: bf16[i2{s2}, i3{s3}])
//     T2: bf16[i4{s0}, i5{s1}, i6{s3}] = index_select(T1, T0, dim=0)
//
// The options that only shape the gradient are checked for their dtype and otherwise ignored.

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"

namespace braze {

namespace {

using ops_detail::tensorLabel;

// Checks that an option, when given, is a value the forward could have been handed by torch.
void checkOption(const std::optional<Operand>& option, std::string_view name,
                 bool (*valid)(DataType), std::string_view expected) {
  if (!option) return;
  BRAZE_USER_CHECK(!option->isTensor())
      << "embedding_fwd: " << name << " must be a scalar or None, not the tensor "
      << option->val()->name();
  BRAZE_USER_CHECK(valid(option->dtype())) << "embedding_fwd: " << name << " has dtype "
                                           << option->dtype() << "; it must be " << expected;
}

bool isIndexDtype(DataType dtype) {
  return isIntegral(dtype);
}
bool isNumber(DataType dtype) {
  return isIntegral(dtype) || isFloatingPoint(dtype);
}
bool isFlag(DataType dtype) {
  return isBoolean(dtype);
}

}  // namespace

TensorView* embedding_fwd(TensorView* input, TensorView* weight, const EmbeddingOptions& options) {
  BRAZE_USER_CHECK(input != nullptr) << "embedding_fwd: the input (indices) tensor is null";
  BRAZE_USER_CHECK(weight != nullptr) << "embedding_fwd: the weight tensor is null";
  BRAZE_USER_CHECK(&input->fusion() == &weight->fusion())
      << "embedding_fwd: the input " << input->name() << " and the weight " << weight->name()
      << " belong to different fusions";
  BRAZE_USER_CHECK(weight->rank() == 2)
      << "embedding_fwd: the weight " << tensorLabel(weight) << " has rank " << weight->rank()
      << " but must be 2-D (num_embeddings, embedding_dim)";
  BRAZE_USER_CHECK(isIntegral(input->dtype()))
      << "embedding_fwd: the input " << tensorLabel(input) << " has dtype " << input->dtype()
      << "; indices must be int32 or int64";
  BRAZE_USER_CHECK(!options.max_norm)
      << "embedding_fwd: max_norm is not supported: torch renormalizes the looked-up rows of "
         "weight in place, which a fusion does not do to its inputs. Pass None and renormalize "
         "the weight before the fusion (torch.embedding_renorm_)";
  checkOption(options.padding_idx, "padding_idx", isIndexDtype, "an integer");
  checkOption(options.norm_type, "norm_type", isNumber, "a number");
  checkOption(options.scale_grad_by_freq, "scale_grad_by_freq", isFlag, "a bool");
  checkOption(options.sparse, "sparse", isFlag, "a bool");
  if (options.padding_idx) {
    // As torch: a constant padding_idx must name a row of weight.
    const Operand& padding_idx = *options.padding_idx;
    const auto* scalar = padding_idx.isVal() ? padding_idx.val()->dynCast<Scalar>() : nullptr;
    const bool known = !padding_idx.isVal() || (scalar != nullptr && scalar->isConstant());
    const Scalar* rows = weight->logicalNoReductions()[0]->logicalExtent();
    if (known && rows->isConstant()) {
      const int64_t p =
          scalar != nullptr ? scalar->constantInt().value_or(0) : toInt64(padding_idx.constant());
      const int64_t n = rows->constantInt().value_or(0);
      BRAZE_USER_CHECK(p >= -n && p < n)
          << "embedding_fwd: padding_idx " << p << " is not a row of the weight "
          << tensorLabel(weight) << "; it must be in " << -n << " .. " << n - 1;
    }
  }
  return take(weight, 0, input);
}

}  // namespace braze
