// insertResharding and the table of resharding steps (braze/host/resharding.h): what makes every
// Expr of a sharded fusion local to each device, and what each step communicates.

#include "braze/host/resharding.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "braze/error.h"
#include "braze/ir/stream_axes.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/shape.h"
#include "host/contraction_pairs.h"

namespace braze {

namespace {

using host_detail::DimPairs;

int64_t positionIn(const std::vector<IterDomain*>& dims, const IterDomain* id) {
  auto found = std::find(dims.begin(), dims.end(), id);
  return found == dims.end() ? -1 : found - dims.begin();
}

// `sharding` with mesh dim `mesh_dim` held as `want` holds it.
Sharding withDim(Sharding sharding, const Sharding& want, int64_t mesh_dim) {
  std::erase_if(sharding.axes, [&](const ShardedAxis& a) { return a.mesh_dim == mesh_dim; });
  std::erase_if(sharding.partial,
                [&](const PartialReduction& p) { return p.mesh_dim == mesh_dim; });
  if (std::optional<int64_t> axis = want.axisOver(mesh_dim))
    sharding.axes.push_back({*axis, mesh_dim});
  if (std::optional<OpKind> op = want.partialOver(mesh_dim))
    sharding.partial.push_back({mesh_dim, *op});
  std::sort(sharding.axes.begin(), sharding.axes.end(),
            [](const ShardedAxis& a, const ShardedAxis& b) { return a.mesh_dim < b.mesh_dim; });
  return sharding;
}

bool sameOver(const Sharding& a, const Sharding& b, int64_t mesh_dim) {
  return a.axisOver(mesh_dim) == b.axisOver(mesh_dim) &&
         a.partialOver(mesh_dim) == b.partialOver(mesh_dim);
}

// `tv` through one `set` per mesh dim on which its sharding differs from `want` (positions
// among `tv`'s dims without reductions): the tensor that holds it as `want` says.
TensorView* reshard(TensorView* tv, const Sharding& want, int64_t& added) {
  Sharding now = withoutReductions(*tv, *tv->sharding());
  for (int64_t d = 0; d < want.mesh.numDims(); ++d) {
    if (sameOver(now, want, d)) continue;
    now = withDim(now, want, d);
    TensorView* step = set(tv);
    step->setSharding(now);
    tv = step;
    ++added;
  }
  return tv;
}

// `tv` (on another mesh than `reader`'s output) sent to `mesh`: a `set` holding it as `tv`
// does, on `mesh` (a SendRecv step). Refused, naming both, unless the meshes have one shape.
TensorView* moveToMesh(TensorView* tv, const Expr& reader, const DeviceMesh& mesh, int64_t& added) {
  const Sharding& from = *tv->sharding();
  const auto describe = [&] {
    std::ostringstream os;
    os << reader.op() << " reads " << tv->name() << " on " << from.mesh.toString() << " and writes "
       << reader.output(0)->name() << " on " << mesh.toString();
    return os.str();
  };
  BRAZE_USER_CHECK(from.partial.empty())
      << describe() << ", but " << tv->name() << " holds partial sums there; complete them first";
  BRAZE_USER_CHECK(from.mesh.shape() == mesh.shape())
      << describe() << ": moving a tensor between meshes (send / receive) needs meshes of one "
      << "shape, device for device";
  Sharding moved = withoutReductions(*tv, from);
  moved.mesh = mesh;
  TensorView* step = set(tv);
  step->setSharding(moved);
  ++added;
  return step;
}

const Sharding& placed(const TensorView& tv) {
  BRAZE_USER_CHECK(tv.sharding().has_value())
      << tv.name() << " has no device mesh, but the fusion is sharded: give it one "
      << "(setDeviceMesh), or connect it to a placed tensor so that it takes its neighbours'";
  return *tv.sharding();
}

// The sharding input `input` of `expr` must have for `expr` to run on each device's parts alone
// (positions among the input's dims without reductions), given the output's sharding and the
// mesh dims over which `expr` makes partial results.
Sharding requiredInput(const Expr& expr, size_t input, const TensorView& out,
                       const std::vector<PartialReduction>& partial) {
  const auto* x = expr.input(input)->as<TensorView>();
  const Sharding& have = *x->sharding();
  const Sharding& produce = *out.sharding();
  Sharding need{produce.mesh, {}, {}};
  const DimPairs pairs = host_detail::exactPairs(expr, input, 0);
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  for (int64_t d = 0; d < produce.mesh.numDims(); ++d) {
    const bool reduced_here = std::any_of(
        partial.begin(), partial.end(), [&](const PartialReduction& p) { return p.mesh_dim == d; });
    if (reduced_here) {
      // Each device reduces its own part: a reduction keeps the input's split; every operand of
      // a contraction splits K alike.
      if (const IterDomain* k = host_detail::contractedDim(expr, input)) {
        need.axes.push_back({positionIn(dims, k), d});
      } else if (std::optional<int64_t> axis = have.axisOver(d)) {
        need.axes.push_back({axisWithoutReductions(*x, *axis), d});
      }
      continue;
    }
    std::optional<int64_t> axis = produce.axisOver(d);
    if (!axis) continue;
    const IterDomain* target = out.logical()[static_cast<size_t>(*axis)];
    for (const auto& [producer, consumer] : pairs) {
      if (consumer != target) continue;
      const int64_t position = positionIn(dims, producer);
      if (position >= 0 && producer->isIteration()) need.axes.push_back({position, d});
      break;
    }
  }
  return need;
}

// The mesh dims over which `expr` reduces an axis that an input splits: where it makes partial
// results, with the op that combines them.
std::vector<PartialReduction> partialDims(const Expr& expr) {
  std::vector<PartialReduction> partial;
  auto note = [&](int64_t mesh_dim, OpKind op) {
    if (std::none_of(partial.begin(), partial.end(),
                     [&](const PartialReduction& p) { return p.mesh_dim == mesh_dim; }))
      partial.push_back({mesh_dim, op});
  };
  const OpFamily family = familyOf(expr.op());
  for (size_t i = 0; i < expr.inputs().size(); ++i) {
    const auto* x = expr.input(i)->dynCast<TensorView>();
    if (x == nullptr) continue;
    const DimPairs pairs = host_detail::exactPairs(expr, i, 0);
    for (const ShardedAxis& sharded : x->sharding()->axes) {
      const IterDomain* dim = x->logical()[static_cast<size_t>(sharded.axis)];
      if (host_detail::contractedDim(expr, i) == dim) {
        BRAZE_USER_CHECK(expr.op() != OpKind::Linear || expr.inputs().size() < 3)
            << "the linear computing " << expr.output(0)->name() << " contracts over " << x->name()
            << " axis " << sharded.axis << ", which is split over "
            << meshDimName(sharded.mesh_dim, x->sharding()->mesh.numDims())
            << ", and adds a bias: every device would add it to its partial sum; add the bias "
               "after the linear";
        note(sharded.mesh_dim, OpKind::Sum);
        continue;
      }
      auto pair =
          std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == dim; });
      const bool reduced = pair != pairs.end() && pair->second->isReduction();
      if (!reduced && family != OpFamily::Scan) continue;
      if (family == OpFamily::Scan &&
          axisWithoutReductions(*x, sharded.axis) != expr.attribute<int64_t>("dim"))
        continue;
      BRAZE_USER_CHECK(family == OpFamily::Reduction)
          << "the " << expr.op() << " computing " << expr.output(0)->name() << " runs along "
          << x->name() << " axis " << sharded.axis << ", which is split over "
          << meshDimName(sharded.mesh_dim, x->sharding()->mesh.numDims())
          << "; only sum, prod, max and min combine across devices: keep that axis whole (shard "
             "another axis)";
      note(sharded.mesh_dim, expr.op());
    }
  }
  return partial;
}

void checkInputsCanBeSplit(const Fusion& fusion) {
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr || !tv->sharding()) continue;
    for (const ShardedAxis& sharded : tv->sharding()->axes) {
      const Scalar* extent = tv->logical()[static_cast<size_t>(sharded.axis)]->extent();
      BRAZE_USER_CHECK(!extent->isConstant())
          << "fusion input " << tv->name() << " axis " << sharded.axis << " is split over "
          << meshDimName(sharded.mesh_dim, tv->sharding()->mesh.numDims())
          << " but its extent is fixed at " << extent->name()
          << " in the definition, while each device passes its part: define that size as known "
             "only at run time (-1)";
    }
  }
}

}  // namespace

int64_t axisWithoutReductions(const TensorView& tv, int64_t axis) {
  int64_t position = 0;
  for (int64_t d = 0; d < axis; ++d) {
    if (!tv.logical()[static_cast<size_t>(d)]->isReduction()) ++position;
  }
  return position;
}

Sharding withoutReductions(const TensorView& tv, Sharding sharding) {
  for (ShardedAxis& axis : sharding.axes) axis.axis = axisWithoutReductions(tv, axis.axis);
  return sharding;
}

std::string_view toString(Communication::Kind kind) {
  switch (kind) {
    case Communication::Kind::Allgather:
      return "allgather";
    case Communication::Kind::LocalSlice:
      return "local_slice";
    case Communication::Kind::Allreduce:
      return "allreduce";
    case Communication::Kind::ReduceScatter:
      return "reduce_scatter";
    case Communication::Kind::AllToAll:
      return "all_to_all";
    case Communication::Kind::SendRecv:
      return "send_recv";
  }
  return "?";
}

std::string Communication::toString() const {
  std::ostringstream os;
  os << braze::toString(kind);
  if (kind == Kind::Allreduce || kind == Kind::ReduceScatter) os << " " << reduction;
  if (kind == Kind::AllToAll) {
    os << " axis " << input_axis << " to axis " << output_axis;
  } else if (input_axis >= 0) {
    os << " axis " << input_axis;
  } else if (output_axis >= 0) {
    os << " axis " << output_axis;
  }
  if (kind == Kind::SendRecv) {
    os << " from " << mesh.toString() << " to " << destination.toString();
    return os.str();
  }
  os << " over " << meshDimName(mesh_dim, mesh.numDims()) << " of " << mesh.toString();
  if (!allocation_order.empty()) {
    os << ", laid out";
    for (size_t d = 0; d < allocation_order.size(); ++d)
      os << (d ? ", " : " [") << allocation_order[d];
    os << "]";
  }
  return os.str();
}

std::optional<Communication> communicationOf(const Expr& expr) {
  if (expr.op() != OpKind::Set) return std::nullopt;
  const auto* in = expr.input(0)->dynCast<TensorView>();
  const auto* out = expr.output(0)->dynCast<TensorView>();
  if (in == nullptr || out == nullptr || !in->sharding() || !out->sharding()) return std::nullopt;
  const Sharding from = withoutReductions(*in, *in->sharding());
  const Sharding& to = *out->sharding();
  if (from == to) return std::nullopt;
  if (from.mesh != to.mesh) {
    Sharding moved = from;
    moved.mesh = to.mesh;
    BRAZE_INTERNAL_CHECK(moved == to) << "the step from " << in->name() << " to " << out->name()
                                      << " changes meshes and how they hold it at once";
    Communication c;
    c.kind = Communication::Kind::SendRecv;
    c.mesh = from.mesh;
    c.destination = to.mesh;
    return c;
  }
  std::optional<int64_t> dim;
  for (int64_t d = 0; d < to.mesh.numDims(); ++d) {
    if (sameOver(from, to, d)) continue;
    BRAZE_INTERNAL_CHECK(!dim) << "the resharding step " << out->name() << " changes two mesh dims";
    dim = d;
  }
  if (!dim) return std::nullopt;  // the same sharding, listed in another order
  Communication c;
  c.mesh = to.mesh;
  c.mesh_dim = *dim;
  const std::optional<int64_t> split_in = from.axisOver(*dim);
  const std::optional<int64_t> split_out = to.axisOver(*dim);
  if (std::optional<OpKind> op = from.partialOver(*dim)) {
    c.kind = split_out ? Communication::Kind::ReduceScatter : Communication::Kind::Allreduce;
    c.reduction = *op;
    c.output_axis = split_out.value_or(-1);
  } else if (split_in && split_out) {
    c.kind = Communication::Kind::AllToAll;
    c.input_axis = *split_in;
    c.output_axis = *split_out;
  } else if (split_in) {
    c.kind = Communication::Kind::Allgather;
    c.input_axis = *split_in;
  } else {
    c.kind = Communication::Kind::LocalSlice;
    c.output_axis = *split_out;
  }
  const std::vector<int64_t>& order = out->allocationOrder();
  if (!std::is_sorted(order.begin(), order.end())) c.allocation_order = order;
  return c;
}

int64_t insertResharding(Fusion& fusion) {
  checkInputsCanBeSplit(fusion);
  int64_t added = 0;
  const std::vector<Expr*> exprs = fusion.exprs();
  for (Expr* expr : exprs) {
    auto* out = expr->outputs().empty() ? nullptr : expr->output(0)->dynCast<TensorView>();
    if (out == nullptr) continue;
    const Sharding produce = placed(*out);
    std::map<TensorView*, TensorView*> replaced;
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* x = expr->input(i)->dynCast<TensorView>();
      if (x == nullptr || placed(*x).mesh == produce.mesh || replaced.count(x) != 0) continue;
      replaced[x] = moveToMesh(x, *expr, produce.mesh, added);
    }
    for (const auto& [x, moved] : replaced) expr->replaceInput(x, moved);
    replaced.clear();
    const std::vector<PartialReduction> partial = partialDims(*expr);
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* x = expr->input(i)->dynCast<TensorView>();
      if (x == nullptr || replaced.count(x) != 0) continue;
      TensorView* local = reshard(x, requiredInput(*expr, i, *out, partial), added);
      replaced[x] = local;
    }
    for (const auto& [x, local] : replaced) {
      if (local != x) expr->replaceInput(x, local);
    }
    if (partial.empty()) continue;
    // Each device reduces its parts: the output holds partial results over those mesh dims
    // (with the axes split there whole), and resharding steps complete what its readers see.
    for (Val* output : expr->outputs()) {
      auto* result = output->dynCast<TensorView>();
      if (result == nullptr) continue;
      const Sharding final_sharding = *result->sharding();
      Sharding partial_sharding = final_sharding;
      for (const PartialReduction& p : partial) {
        std::erase_if(partial_sharding.axes,
                      [&](const ShardedAxis& a) { return a.mesh_dim == p.mesh_dim; });
        partial_sharding.partial.push_back(p);
      }
      const std::vector<Expr*> readers(result->uses().begin(), result->uses().end());
      result->setSharding(partial_sharding);
      TensorView* complete = reshard(result, withoutReductions(*result, final_sharding), added);
      if (std::optional<StreamAxis> stream = result->streamAxis()) {
        // The completed value is what the user streamed: each slice is completed in the loop
        // that computes it, while the next slice computes.
        stream->axis = axisWithoutReductions(*result, stream->axis);
        for (TensorView* step = complete; step != result;
             step = step->definition()->input(0)->as<TensorView>())
          step->setStreamAxis(stream);
      }
      for (Expr* reader : readers) reader->replaceInput(result, complete);
      if (fusion.isOutput(result)) fusion.replaceOutput(result, complete);
    }
  }
  // An allreduce whose one reader keeps this device's part of it is a reduce-scatter: a
  // row-parallel matmul whose output a later op splits by rows sends 1/n of the bytes.
  for (Expr* expr : fusion.exprs()) {
    const std::optional<Communication> step = communicationOf(*expr);
    if (!step || step->kind != Communication::Kind::Allreduce) continue;
    auto* whole = expr->output(0)->as<TensorView>();
    if (fusion.isOutput(whole) || whole->uses().size() != 1) continue;
    Expr* reader = whole->uses().front();
    const std::optional<Communication> next = communicationOf(*reader);
    if (!next || next->kind != Communication::Kind::LocalSlice || next->mesh_dim != step->mesh_dim)
      continue;
    reader->replaceInput(whole, expr->input(0));
    // Out of the graph, so that the partial sums it read have no reader besides the step.
    expr->detach();
    --added;
  }
  return added;
}

std::vector<int64_t> localSizes(const TensorView& tv, const std::vector<int64_t>& global_sizes) {
  std::vector<int64_t> sizes = global_sizes;
  if (!tv.sharding()) return sizes;
  const Sharding& sharding = *tv.sharding();
  for (const ShardedAxis& sharded : sharding.axes) {
    const int64_t parts = sharding.mesh.size(sharded.mesh_dim);
    const int64_t axis = axisWithoutReductions(tv, sharded.axis);
    BRAZE_INTERNAL_CHECK(axis < static_cast<int64_t>(sizes.size()))
        << tv.name() << ": split axis " << sharded.axis << " out of range";
    int64_t& size = sizes[static_cast<size_t>(axis)];
    BRAZE_USER_CHECK(size % parts == 0)
        << tv.name() << " axis " << sharded.axis << " has " << size << " elements, split over "
        << meshDimName(sharded.mesh_dim, sharding.mesh.numDims()) << " of "
        << sharding.mesh.toString() << " into " << parts << " equal parts: make it a multiple of "
        << parts << " or shard another axis";
    size /= parts;
  }
  return sizes;
}

}  // namespace braze
