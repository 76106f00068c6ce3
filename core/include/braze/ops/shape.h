#pragma once

#include <optional>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ops/operand.h"

namespace braze {

/// Shape and data-movement builders. Dims may be negative (counted from the end) wherever a
/// dim is taken; sizes may be constants or Index/int scalar Vals. Each builder validates its
/// arguments and names the op, the argument, the tensor and the dim in its errors.

/// Inserts Broadcast dims: `is_broadcast_dim` has one entry per output dim; false entries take
/// the input's dims in order (so exactly rank(x) entries must be false).
TensorView* broadcast(TensorView* x, const std::vector<bool>& is_broadcast_dim);
/// JAX's broadcast_in_dim: x's dim i becomes output dim broadcast_dims[i] (strictly
/// increasing); other output dims are broadcasts expanded to `shape`; x's size-1 broadcast dims
/// may be expanded too.
TensorView* broadcast_in_dim(TensorView* x, const std::vector<Operand>& shape,
                             const std::vector<int64_t>& broadcast_dims);
/// Expands Broadcast dims to `sizes` without copying (-1 keeps a dim); Iteration dims must
/// keep their size.
TensorView* expand(TensorView* x, const std::vector<Operand>& sizes);
/// Same elements, new shape; one entry may be -1 and is inferred. Constant sizes are checked
/// against a constant element count at definition time, symbolic ones when evaluated.
TensorView* reshape(TensorView* x, const std::vector<Operand>& shape);
/// Output dim i is input dim dims[i].
TensorView* permute(TensorView* x, const std::vector<int64_t>& dims);
TensorView* transpose(TensorView* x, int64_t dim0, int64_t dim1);
/// Removes the listed dims, each of which must be a Broadcast dim or have constant size 1.
TensorView* squeeze(TensorView* x, const std::vector<int64_t>& dims);
/// Inserts a Broadcast dim at `dim` (in -(rank+1) .. rank).
TensorView* unsqueeze(TensorView* x, int64_t dim);
/// Merges dims start_dim..end_dim into one (a reshape).
TensorView* flatten(TensorView* x, int64_t start_dim = 0, int64_t end_dim = -1);

/// One dim of a slice, with Python semantics: negative start/stop count from the end, both
/// are clamped to [0, size]; a missing stop means the end. `step` must be a positive
/// constant.
struct SliceRange {
  Operand start = int64_t{0};
  std::optional<Operand> stop = std::nullopt;
  Operand step = int64_t{1};
};
/// Slices every dim by `ranges` (one entry per dim; shorter lists leave trailing dims whole).
///
/// With `manual_normalization` (nvFuser's keyword of the same name), the bounds are taken as
/// already normalized, 0 <= start <= stop <= size, and no normalization expressions are added:
/// the output's extent is ceil_div(stop - start, step) of exactly the scalars given. Constant
/// bounds that break the rule are an Error; symbolic ones are trusted. A fusion's repr writes
/// symbolic slices this way, so that rebuilding it does not normalize the bounds twice.
TensorView* slice(TensorView* x, const std::vector<SliceRange>& ranges,
                  bool manual_normalization = false);
/// Slices dim `dim` only.
TensorView* slice(TensorView* x, int64_t dim, Operand start, std::optional<Operand> stop,
                  Operand step = int64_t{1});

/// torch.nn.functional.pad with mode "constant": `widths` lists (left, right) pairs starting
/// from the last dim; negative widths crop. `value` fills the new elements.
TensorView* pad(TensorView* x, const std::vector<Operand>& widths, Operand value = 0.0);
/// Concatenates along `dim`; all tensors have the same rank and dtype (after promotion) and
/// agree on every other dim.
TensorView* cat(const std::vector<TensorView*>& xs, int64_t dim);
/// x[..., index, ...] along `dim`; the dim is removed. Negative index counts from the end.
TensorView* select(TensorView* x, int64_t dim, Operand index);
/// Rows of x along `dim` picked by a 1-D integer tensor: out.size(dim) = index.size(0).
TensorView* index_select(TensorView* x, int64_t dim, TensorView* index);
/// numpy.take along `dim` with an integer index of any rank: x's dim `dim` is replaced by the
/// index's dims, out[a..., i..., b...] = x[a..., index[i...], b...]. index_select is its 1-D
/// case (the same OpKind::IndexSelect).
TensorView* take(TensorView* x, int64_t dim, TensorView* index);
/// numpy's take_along_axis / torch.gather: index has x's rank; out has index's shape;
/// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1.
TensorView* gather(TensorView* x, int64_t dim, TensorView* index);
/// torch.scatter without reduce: a copy of x where out[i][index[i][j][k]][k] = src[i][j][k] for
/// dim 1, over index's positions (negative ones count from the end). index, src and x have one
/// rank; index is no larger than src in any dim, nor than x except at `dim`; src has x's dtype.
/// Where index repeats a position, the last write in row-major order of index wins (torch leaves
/// it unspecified). The executor cache runs it as matches over the index (scatter_as_matches.h),
/// in place when the result is written into x (Fusion::aliasOutputToInput).
TensorView* scatter(TensorView* x, int64_t dim, TensorView* index, TensorView* src);

/// torch.nn.functional.embedding's forward, as nvFuser's embedding_fwd: out[i..., :] =
/// weight[input[i...], :], of shape input.shape + [weight.size(1)] (take(weight, 0, input)).
/// `weight` is 2-D, `input` an integer tensor of any rank. padding_idx, scale_grad_by_freq and
/// sparse only change the gradient and norm_type only matters with max_norm, so the forward
/// checks and ignores them; max_norm (torch renormalizes the looked-up rows of weight in place)
/// is refused with an error: renormalize the weight before the fusion instead.
struct EmbeddingOptions {
  std::optional<Operand> padding_idx = std::nullopt;
  std::optional<Operand> max_norm = std::nullopt;
  std::optional<Operand> norm_type = std::nullopt;
  std::optional<Operand> scale_grad_by_freq = std::nullopt;
  std::optional<Operand> sparse = std::nullopt;
};
TensorView* embedding_fwd(TensorView* input, TensorView* weight,
                          const EmbeddingOptions& options = {});

/// A copy of x: same shape (reduced dims dropped), same dtype, same values; nvFuser's set. It is
/// the OpKind::Set that scheduling's cacheBefore / cacheAfter / cacheFork make, so every
/// scheduler that accepts those copies accepts it. Useful to give an input or another output a
/// tensor of its own as an output, or to mark where a value is materialized.
TensorView* set(TensorView* x);
/// nvFuser's segment_set: a copy of x whose producer and readers run in different kernels; the
/// segmenter never puts them in one segment, so the value goes through global memory (to split a
/// fusion where a scheduler would not, or to materialize a tensor on purpose).
TensorView* segment_set(TensorView* x);
/// nvFuser's stride_order: a copy of x laid out in memory so that dim i's stride is the
/// stride_order[i]-th smallest (0: the innermost, stride 1; [1, 0] is row-major for rank 2,
/// [0, 1] column-major), dense. A fusion output made by it is returned with those strides.
TensorView* stride_order(TensorView* x, const std::vector<int64_t>& stride_order);

/// torch.triu over the last two dims of x (rank >= 2; leading dims are batches): keeps the
/// elements with col - row >= diagonal and gives 0 (false for bool) elsewhere; diagonal 0 keeps
/// the main diagonal, positive ones drop diagonals above it, negative ones keep diagonals below.
/// Any dtype; the result has x's dtype. Built from existing ops, not an OpKind of its own:
/// where(iota(cols) - iota(rows) >= diagonal, x, 0) with the iotas broadcast over the last two
/// dims, so the reference evaluator, codegen and definition files need nothing new for it.
TensorView* triu(TensorView* x, int64_t diagonal = 0);

/// A tensor of `shape` filled with `value`, converted to `dtype`.
TensorView* full(Fusion& fusion, const std::vector<Operand>& shape, Operand value, DataType dtype);
TensorView* zeros(Fusion& fusion, const std::vector<Operand>& shape, DataType dtype);
TensorView* ones(Fusion& fusion, const std::vector<Operand>& shape, DataType dtype);
/// [start, start + step, ..., start + (length - 1) * step], 1-D.
TensorView* iota(Fusion& fusion, Operand length, Operand start = int64_t{0},
                 Operand step = int64_t{1}, DataType dtype = DataType::Int64);
/// [start, end) by step, as torch.arange; length = ceil((end - start) / step); step != 0.
TensorView* arange(Fusion& fusion, Operand start, Operand end, Operand step = int64_t{1},
                   DataType dtype = DataType::Int64);

}  // namespace braze
