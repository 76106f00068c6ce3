// layoutCommunicatedBuffers: the split axis of a communicated buffer outermost in memory.
//
// NCCL gathers and scatters consecutive blocks, block k for rank k. A part split along axis a
// of a row-major [B, S, H] tensor (a = S) is B strided runs, so the collectives would pack the
// parts into blocks before the transfer (reduce-scatter) or unpack them after it (allgather),
// one more pass over the buffer. With S outermost in memory ([S, B, H]) each part is one block
// and the whole tensor is the blocks in rank order: the producing kernel writes that layout and
// the reading kernel reads it, with H still innermost, so neither moves more bytes.

#include "braze/host/communication_layout.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "braze/host/resharding.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/shape.h"

namespace braze {

namespace {

// `order` with `axis` moved to the front, or nullopt where that changes nothing or would move
// the innermost non-broadcast dim (a transpose for the kernels on either side).
std::optional<std::vector<int64_t>> axisOutermost(const TensorView& tv, int64_t axis) {
  const std::vector<IterDomain*> dims = tv.logicalNoReductions();
  const std::vector<int64_t>& order = tv.allocationOrder();
  std::vector<int64_t> iterating;  // dims in memory order, broadcasts left out
  for (int64_t d : order) {
    if (!dims[static_cast<size_t>(d)]->isBroadcast()) iterating.push_back(d);
  }
  if (iterating.empty() || iterating.front() == axis || iterating.back() == axis)
    return std::nullopt;
  std::vector<int64_t> moved = {axis};
  for (int64_t d : order) {
    if (d != axis) moved.push_back(d);
  }
  return moved;
}

// stride_order's argument for allocation order `order`: each dim's stride rank, 0 innermost.
std::vector<int64_t> strideRanks(const std::vector<int64_t>& order) {
  std::vector<int64_t> ranks(order.size());
  for (size_t position = 0; position < order.size(); ++position)
    ranks[static_cast<size_t>(order[position])] = static_cast<int64_t>(order.size() - 1 - position);
  return ranks;
}

}  // namespace

int64_t layoutCommunicatedBuffers(Fusion& fusion) {
  int64_t laid_out = 0;
  for (Expr* expr : fusion.exprs()) {
    const std::optional<Communication> step = communicationOf(*expr);
    if (!step) continue;
    int64_t axis = -1;
    if (step->kind == Communication::Kind::Allgather) axis = step->input_axis;
    if (step->kind == Communication::Kind::ReduceScatter) axis = step->output_axis;
    if (axis < 0) continue;
    auto* in = expr->input(0)->as<TensorView>();
    auto* out = expr->output(0)->as<TensorView>();
    if (in->streamAxis() || out->streamAxis() || fusion.isOutput(out)) continue;
    // Between two compute regions only: a step feeding another (the mesh dims of a 2-D mesh in
    // turn) takes its parts row-major.
    const bool step_before = in->definition() != nullptr && communicationOf(*in->definition());
    const bool step_after = std::any_of(out->uses().begin(), out->uses().end(),
                                        [](const Expr* use) { return communicationOf(*use); });
    if (step_before || step_after) continue;
    const std::optional<std::vector<int64_t>> order = axisOutermost(*out, axis);
    if (!order) continue;
    // The producer writes the part in that order; the step reads it and writes its result so.
    TensorView* laid = stride_order(in, strideRanks(*order));
    laid->setSharding(withoutReductions(*in, *in->sharding()));
    expr->replaceInput(in, laid);
    std::vector<std::optional<bool>> contiguity;
    for (const IterDomain* id : out->logicalNoReductions())
      contiguity.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
    out->setLayout(*order, std::move(contiguity));
    ++laid_out;
  }
  return laid_out;
}

}  // namespace braze
