#include "braze/ir/iter_domain.h"

#include "braze/ir/fusion.h"
#include "braze/ir/scalar.h"

namespace braze {

std::string_view toString(IterType type) {
  switch (type) {
    case IterType::Iteration:
      return "iteration";
    case IterType::Reduction:
      return "reduction";
    case IterType::Broadcast:
      return "broadcast";
  }
  return "?";
}

std::string_view toString(ParallelType type) {
  switch (type) {
    case ParallelType::Serial:
      return "Serial";
    case ParallelType::BIDx:
      return "BIDx";
    case ParallelType::BIDy:
      return "BIDy";
    case ParallelType::BIDz:
      return "BIDz";
    case ParallelType::TIDx:
      return "TIDx";
    case ParallelType::TIDy:
      return "TIDy";
    case ParallelType::TIDz:
      return "TIDz";
    case ParallelType::Vectorize:
      return "Vectorize";
    case ParallelType::Unroll:
      return "Unroll";
    case ParallelType::Unswitch:
      return "Unswitch";
    case ParallelType::Stream:
      return "Stream";
    case ParallelType::DIDx:
      return "DIDx";
    case ParallelType::DIDy:
      return "DIDy";
  }
  return "?";
}

bool isThreadDim(ParallelType type) {
  return type == ParallelType::TIDx || type == ParallelType::TIDy || type == ParallelType::TIDz;
}

bool isBlockDim(ParallelType type) {
  return type == ParallelType::BIDx || type == ParallelType::BIDy || type == ParallelType::BIDz;
}

std::ostream& operator<<(std::ostream& os, IterType type) {
  return os << toString(type);
}
std::ostream& operator<<(std::ostream& os, ParallelType type) {
  return os << toString(type);
}

IterDomain::IterDomain(Fusion& fusion, Scalar* extent, IterType iter_type, Scalar* expanded_extent)
    : Val(fusion, StatementKind::IterDomain, DataType::Index),
      extent_(extent),
      expanded_extent_(expanded_extent),
      iter_type_(iter_type) {
  BRAZE_INTERNAL_CHECK(extent_ != nullptr) << "IterDomain needs an extent";
  BRAZE_INTERNAL_CHECK(expanded_extent_ == nullptr || iter_type_ == IterType::Broadcast)
      << "only a broadcast IterDomain can be expanded";
}

std::string IterDomain::name() const {
  const char prefix = iter_type_ == IterType::Iteration   ? 'i'
                      : iter_type_ == IterType::Reduction ? 'r'
                                                          : 'b';
  std::string text = prefix + std::to_string(number()) + "{" + extent_->name();
  if (expanded_extent_) text += " ex " + expanded_extent_->name();
  text += "}";
  if (parallel_type_ != ParallelType::Serial) text += ":" + std::string(toString(parallel_type_));
  if (reversed_) text += ":reversed";
  return text;
}

Statement* IterDomain::cloneInto(Fusion& target, const CloneMap& map) const {
  auto* copy = target.create<IterDomain>(map[extent_], iter_type_, map[expanded_extent_]);
  copy->parallelize(parallel_type_);
  copy->setReversed(reversed_);
  return copy;
}

}  // namespace braze
