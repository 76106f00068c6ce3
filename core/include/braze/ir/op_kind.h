#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace braze {

/// Every operation an Expr can perform. An Expr is generic (op, inputs, outputs, named
/// attributes), so cloning, hashing, printing and serialization work the same for all ops; this
/// table is the contract for what each op's inputs, outputs and attributes are.
///
/// Elementwise ops (Unary, Binary, Ternary families) work on tensors and on scalars alike; a
/// scalar operand of a tensor op is broadcast. Their output has the promoted dtype documented
/// on each op builder.
///
///   family    | inputs                         | outputs            | attributes
///   ----------+--------------------------------+--------------------+---------------------------
///   Unary     | x                              | y                  | Gelu: "approximate"
///             |                                |                    |   ("none" | "tanh")
///   Cast      | x                              | y (target dtype)   |
///   Binary    | a, b                           | y                  |
///   Ternary   | Where: cond, a, b; Clamp: x, lo, hi; Lerp: start, end, weight;
///             | Addcmul: x, t1, t2, value  (x + value * t1 * t2)
///   Reduction | x                              | y (reduced axes    | "axes": int64 list,
///             |                                |  kept as Reduction |   ascending, into x's
///             |                                |  IterDomains)      |   non-reduction dims
///   Welford   | x                              | avg, m2, n         | "axes" as above
///   Scan      | x                              | y (x's shape; each | "dim": int64, into x's
///             |                                |  element combines  |   dims; the combining op
///             |                                |  x's prefix along  |   is the OpKind (cumsum:
///             |                                |  dim, inclusive)   |   add, cummax: maximum)
///   Broadcast | x                              | y                  | "flags": bool list over
///             |                                |                    |   y's dims, true = new
///   Expand    | x                              | y (expanded        |
///             |                                |  extents in its    |
///             |                                |  Broadcast dims)   |
///   Reshape   | x                              | y (extents in its  |
///             |                                |  logical domain)   |
///   Permute   | x                              | y                  | "perm": y dim i is x dim
///             |                                |                    |   perm[i]
///   Squeeze   | x                              | y                  | "flags": bool list over
///             |                                |                    |   x's dims, true = removed
///   Slice     | x, then per dim start, step    | y                  |
///             |   (2 * rank Index scalars;     |                    |
///             |   y's extents give the count)  |                    |
///   Pad       | x, value, then per dim left,   | y                  |
///             |   right (2 * rank Index        |                    |
///             |   scalars, may be negative)    |                    |
///   Cat       | x0, x1, ...                    | y                  | "dim"
///   Select    | x, index (Index scalar)        | y (dim removed)    | "dim"
///   IndexSelect | x, index (1-D int tensor)    | y                  | "dim"
///   Gather    | x, index (int tensor of x's    | y (index's shape)  | "dim"
///             |   rank; take_along_axis)       |                    |
///   Scatter   | x, index (int tensor), src     | y (x's shape)      | "dim"
///             |   (index, src, x of one rank)  |                    |
///   Full      | value                          | y (extents in its  |
///             |                                |  logical domain)   |
///   Iota      | start, step                    | y (1-D)            |
///   Uniform   | minval, maxval, rng_seed,      | y (extents in its  |
///             |   rng_offset (Int64 scalars)   |  logical domain)   |
///   Normal    | mean, std, rng_seed, rng_offset| y (as Uniform)     |
///             | element k (row-major linear index of y's logical domain) is a pure function of
///             | (rng_seed, rng_offset, k) through Philox-4x32-10; see ops/random.h
///   Matmul    | a, b                           | y                  |
///   Linear    | x, weight [, bias]             | y                  |
///   Set       | x                              | y (same shape and  |
///             |                                |  dtype; a copy)    |
///             | made by cacheBefore / cacheAfter / cacheFork, or by the user op set(x)
///   SegmentSet | x                             | y (a copy)         |
///             | y goes through global memory: its producer and its readers run in different
///             | kernels (inside one segment it is extracted as a Set)
///   StrideOrder | x                            | y (a copy laid out | "stride_order": int64
///             |                                |  in memory by the  |   list, nvFuser's: dim i's
///             |                                |  attribute)        |   stride is the
///             |                                |                    |   stride_order[i]-th
///             |                                |                    |   smallest (0: innermost)
///
/// IterDomain transforms relate a tensor's loop domain to its logical domain. They are Exprs
/// over IterDomains, reached through IterDomain::definition(), never through Fusion::exprs():
///
///   Split     | in, factor (Index scalar)      | outer, inner       | "inner_split": the factor
///             |                                |                    |   is inner's extent (else
///             |                                |                    |   outer's)
///   Merge     | outer, inner                   | out                |
///
/// Extents of tensors are scalar Vals reached through each TensorView's domain, not through
/// Expr inputs; they may have scalar definitions of their own (for example the extent of a
/// slice).
enum class OpKind : uint8_t {
  // Unary
  Neg,
  Abs,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sigmoid,
  Relu,
  Gelu,
  Silu,
  Erf,
  Erfc,
  Floor,
  Ceil,
  Round,
  Trunc,
  Sign,
  IsNan,
  IsInf,
  IsFinite,
  Signbit,  ///< torch.signbit: the sign bit (true for -0.0 and negative nan); x < 0 for integers.
  LogicalNot,
  BitwiseNot,
  Cast,
  // Binary
  Add,
  Sub,
  Mul,
  Div,  ///< C semantics: truncating for integers, true division for floats.
  TrueDiv,
  Remainder,  ///< Python's %: the result takes the divisor's sign.
  Fmod,       ///< C's fmod: the result takes the dividend's sign.
  CeilDiv,    ///< Integer ceil(a / b) for positive b; used by extent arithmetic.
  Pow,
  Maximum,
  Minimum,
  Atan2,
  Gcd,        ///< torch.gcd: integers only; non-negative (see gcd in ops/elementwise.h).
  Nextafter,  ///< std::nextafter in the operands' dtype (float32 or float64 only).
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LeftShift,
  RightShift,         ///< Arithmetic: the sign fills the vacated bits.
  LogicalRightShift,  ///< Logical: zeros fill the vacated bits of the two's-complement value.
  // Ternary
  Where,
  Clamp,
  Lerp,
  Addcmul,
  // Reductions
  Sum,
  Prod,
  Max,
  Min,
  Welford,
  // Scans (inclusive prefix along one dim)
  Cumsum,
  Cumprod,
  Cummax,  ///< Running maximum; nan propagates from where it first appears.
  Cummin,  ///< Running minimum; nan propagates from where it first appears.
  // Shape
  Broadcast,
  Expand,
  Reshape,
  Permute,
  Squeeze,
  Slice,
  Pad,
  Cat,
  Select,
  IndexSelect,
  Gather,
  Scatter,  ///< torch.scatter without reduce: a copy of x with src written at index's positions.
  // Factories
  Full,
  Iota,
  Uniform,  ///< Counter-based: [minval, maxval) from Philox-4x32-10 of (seed, offset, index).
  Normal,   ///< Counter-based: Box-Muller of two Philox-4x32-10 words of (seed, offset, index).
  // Contractions
  Matmul,
  Linear,
  // Memory: a copy, made by cacheBefore / cacheAfter / cacheFork (between memory types) or by
  // the user op set(x).
  Set,
  SegmentSet,   ///< A copy whose producer and consumers the segmenter puts in different kernels.
  StrideOrder,  ///< A copy whose output is laid out in the "stride_order" attribute's order.
  // IterDomain transforms (scheduling); they never appear in Fusion::exprs().
  Split,
  Merge,
};

enum class OpFamily : uint8_t {
  Unary,
  Cast,
  Binary,
  Ternary,
  Reduction,
  Welford,
  Scan,
  Shape,
  Factory,
  Contraction,
  Memory,
  Transform,
};

/// The printer's and the user API's spelling: "add", "sum", "index_select", ...
std::string_view toString(OpKind op);
std::ostream& operator<<(std::ostream& os, OpKind op);
std::optional<OpKind> parseOpKind(std::string_view name);

OpFamily familyOf(OpKind op);
bool isElementwise(OpKind op);  ///< Unary, Cast, Binary and Ternary families.
/// The number of inputs of an elementwise op (Addcmul: 4); 0 for any other op.
int elementwiseArity(OpKind op);
/// Comparisons, logical ops, isnan/isinf/isfinite/signbit: results are bool.
bool producesBool(OpKind op);
/// The reduction whose combine and identity a scan applies at each step (Cumsum: Sum, Cumprod:
/// Prod, Cummax: Max, Cummin: Min); nullopt for any other op.
std::optional<OpKind> scanCombiner(OpKind scan);

inline constexpr int kNumOpKinds = static_cast<int>(OpKind::Merge) + 1;

}  // namespace braze
