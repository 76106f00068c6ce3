#pragma once

// The initial value and the combining step of Sum, Prod, Max and Min in the evaluator's held
// types (bool, wrapping int64, double). Reductions and scans (which combine with their
// scanCombiner) share them, so a running cumsum ends where sum ends. Internal to the
// evaluator.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "braze/ir/data_type.h"
#include "braze/ir/op_kind.h"

namespace braze::eval_detail {

/// The value an accumulator of reduction `op` starts from, for a result of `dtype`.
template <typename T>
T identityOf(OpKind op, DataType dtype) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == OpKind::Prod || op == OpKind::Min;  // and / all
  } else if constexpr (std::is_same_v<T, int64_t>) {
    const bool narrow = dtype == DataType::Int32;
    switch (op) {
      case OpKind::Prod:
        return 1;
      case OpKind::Max:
        return narrow ? std::numeric_limits<int32_t>::lowest() : std::numeric_limits<T>::lowest();
      case OpKind::Min:
        return narrow ? std::numeric_limits<int32_t>::max() : std::numeric_limits<T>::max();
      default:
        return 0;
    }
  } else {
    switch (op) {
      case OpKind::Prod:
        return 1.0;
      case OpKind::Max:
        return -INFINITY;
      case OpKind::Min:
        return INFINITY;
      default:
        return 0.0;
    }
  }
}

/// One step of reduction `op`: the accumulator `acc` combined with the element `v`.
template <typename T>
T combine(OpKind op, T acc, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == OpKind::Sum || op == OpKind::Max ? (acc || v) : (acc && v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Wrap instead of overflowing into undefined behavior.
    const auto a = static_cast<uint64_t>(acc);
    const auto b = static_cast<uint64_t>(v);
    switch (op) {
      case OpKind::Sum:
        return static_cast<int64_t>(a + b);
      case OpKind::Prod:
        return static_cast<int64_t>(a * b);
      case OpKind::Max:
        return std::max(acc, v);
      default:
        return std::min(acc, v);
    }
  } else {
    switch (op) {
      case OpKind::Sum:
        return acc + v;
      case OpKind::Prod:
        return acc * v;
      // nan propagates: once the accumulator is nan it stays nan.
      case OpKind::Max:
        return std::isnan(v) || v > acc ? v : acc;
      default:
        return std::isnan(v) || v < acc ? v : acc;
    }
  }
}

}  // namespace braze::eval_detail
