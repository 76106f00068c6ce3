// Sharding and takeShardings: a definition's device meshes and DIDx / DIDy axes as tensor
// attributes.

#include "braze/ir/sharding.h"

#include <algorithm>
#include <sstream>

#include "braze/error.h"
#include "braze/ir/fusion.h"
#include "ir/loop_axis_origin.h"

namespace braze {

std::optional<int64_t> Sharding::axisOver(int64_t mesh_dim) const {
  for (const ShardedAxis& sharded : axes) {
    if (sharded.mesh_dim == mesh_dim) return sharded.axis;
  }
  return std::nullopt;
}

std::optional<OpKind> Sharding::partialOver(int64_t mesh_dim) const {
  for (const PartialReduction& pending : partial) {
    if (pending.mesh_dim == mesh_dim) return pending.op;
  }
  return std::nullopt;
}

std::string Sharding::toString() const {
  std::ostringstream os;
  os << mesh.toString();
  if (isReplicated()) os << " replicated";
  for (size_t i = 0; i < axes.size(); ++i) {
    os << (i > 0 ? "," : "") << " axis " << axes[i].axis << " over "
       << meshDimName(axes[i].mesh_dim, mesh.numDims());
  }
  for (size_t i = 0; i < partial.size(); ++i) {
    os << (i > 0 || !axes.empty() ? "," : "") << " partial " << braze::toString(partial[i].op)
       << " over " << meshDimName(partial[i].mesh_dim, mesh.numDims());
  }
  return os.str();
}

std::string_view meshDimName(int64_t mesh_dim, int64_t mesh_dims) {
  return mesh_dim == mesh_dims - 1 ? "DIDx" : "DIDy";
}

namespace {

bool isDeviceDim(ParallelType type) {
  return type == ParallelType::DIDx || type == ParallelType::DIDy;
}

// The mesh dim a DID parallel type names on `mesh`, checked.
int64_t meshDimOf(ParallelType type, const DeviceMesh& mesh, const std::string& where) {
  if (type == ParallelType::DIDx) return mesh.numDims() - 1;
  BRAZE_USER_CHECK(mesh.numDims() == 2)
      << where << " is DIDy, but " << mesh.toString()
      << " has one dim; DIDy shards over the first dim of a 2-D mesh (use DIDx here)";
  return 0;
}

// Where `tv`'s Stream loop axis comes from (a logical axis, or the outer axis of a split of
// one), if it has one; takeStreamAxes checks the rest.
std::optional<ir_detail::LoopAxisOrigin> streamOrigin(const TensorView* tv) {
  for (const IterDomain* id : tv->loop()) {
    if (id->parallelType() != ParallelType::Stream) continue;
    const ir_detail::LoopAxisOriginOrReason origin = ir_detail::loopAxisOrigin(tv, id);
    BRAZE_USER_CHECK(origin.origin.has_value())
        << ir_detail::tensorLabel(tv) << " has a stream axis (" << id->name()
        << ") beside its sharded axes, but it is " << origin.reason
        << "; stream over another logical axis, or the outer axis of a split of one";
    return origin.origin;
  }
  return std::nullopt;
}

// The sharded axes `tv`'s loop domain asks for, checked: each DID loop axis is the outer axis of
// a split of a logical axis by the size of its mesh dim (or the logical axis itself when that dim
// has one device), and nothing else of the loop domain is scheduled.
std::vector<ShardedAxis> shardedAxesOf(const TensorView* tv, const DeviceMesh& mesh,
                                       bool keep_single_device_dims = false) {
  const std::vector<IterDomain*>& logical = tv->logical();
  const std::vector<IterDomain*>& loop = tv->loop();
  std::vector<ShardedAxis> axes;
  std::vector<IterDomain*> expected = logical;
  for (size_t position = 0; position < loop.size(); ++position) {
    const IterDomain* id = loop[position];
    if (!isDeviceDim(id->parallelType())) continue;
    const std::string where = ir_detail::tensorLabel(tv) + " loop axis " +
                              std::to_string(position) + " (" + id->name() + ")";
    BRAZE_USER_CHECK(!tv->hasRoot()) << where << " is sharded, but " << tv->name()
                                     << " is an rFactor producer; shard a tensor of the definition";
    const int64_t mesh_dim = meshDimOf(id->parallelType(), mesh, where);
    const int64_t parts = mesh.size(mesh_dim);
    const ir_detail::LoopAxisOriginOrReason origin = ir_detail::loopAxisOrigin(tv, id);
    BRAZE_USER_CHECK(origin.origin.has_value())
        << where << " is " << id->parallelType() << ", but it is " << origin.reason
        << ". Shard the outer axis of a split of a logical axis (tv->split(axis, " << parts
        << ", false), then parallelize that axis)";
    const ShardedAxis sharded{origin.origin->logical_axis, mesh_dim};
    if (origin.origin->split == nullptr) {
      BRAZE_USER_CHECK(parts == 1)
          << where << " is " << id->parallelType() << " over " << mesh.toString() << " (" << parts
          << " devices along that dim) without a split; split the axis in " << parts
          << " first: tv->split(" << sharded.axis << ", " << parts
          << ", false), then parallelize the outer axis";
    } else {
      const std::optional<int64_t> factor = origin.origin->constant_factor;
      const bool by_count = origin.origin->by_count;
      BRAZE_USER_CHECK(by_count && factor == parts)
          << where << " is " << id->parallelType() << " over " << mesh.toString() << ", which has "
          << parts << " devices along that dim, but it is the outer axis of a split "
          << (by_count ? "in " : "by ")
          << (factor ? std::to_string(*factor) : std::string("a symbolic factor"))
          << (by_count ? " parts" : " elements per part") << "; split in exactly " << parts
          << " parts: tv->split(axis, " << parts << ", false)";
      ir_detail::replaceBySplit(expected, tv, *origin.origin);
    }
    const IterDomain* logical_id = logical[static_cast<size_t>(sharded.axis)];
    BRAZE_USER_CHECK(!logical_id->isReduction())
        << where << " is sharded, but logical axis " << sharded.axis << " of " << tv->name()
        << " is the axis it reduces over: a reduction over a sharded axis becomes a collective "
           "(an allreduce or reduce-scatter), which the multi-device runtime lowers, not yet";
    BRAZE_USER_CHECK(logical_id->isIteration())
        << where << " is sharded, but logical axis " << sharded.axis << " of " << tv->name()
        << " is a " << logical_id->iterType() << " axis with one element; shard an axis with "
        << "elements";
    for (const ShardedAxis& other : axes) {
      BRAZE_USER_CHECK(other.mesh_dim != mesh_dim)
          << ir_detail::tensorLabel(tv) << " shards axes " << other.axis << " and " << sharded.axis
          << " over the same mesh dim (" << id->parallelType() << "); each mesh dim splits one "
          << "axis";
      BRAZE_USER_CHECK(other.axis != sharded.axis)
          << ir_detail::tensorLabel(tv) << " shards axis " << sharded.axis
          << " over two mesh dims; split it over "
          << "one dim, or merge the mesh";
    }
    // A mesh dim of one device holds the whole axis: nothing is split, so nothing is sent
    // (unless asked to plan its steps anyway: a one-GPU run of the step paths).
    if (parts > 1 || keep_single_device_dims) axes.push_back(sharded);
  }
  // A stream axis may stand beside the sharded ones (another logical axis, or the outer axis of
  // a split of one): the multi-device runtime runs its loop, resharding steps inside.
  if (std::optional<ir_detail::LoopAxisOrigin> stream = streamOrigin(tv)) {
    if (stream->split != nullptr) ir_detail::replaceBySplit(expected, tv, *stream);
  }
  BRAZE_USER_CHECK(loop == expected)
      << ir_detail::tensorLabel(tv)
      << " has sharded axes and other scheduling on its loop domain; a definition "
      << "schedules only its sharding and stream axis (the schedulers do the rest)";
  for (size_t i = 0; i < loop.size(); ++i) {
    const ParallelType type = loop[i]->parallelType();
    BRAZE_USER_CHECK(type == ParallelType::Serial || type == ParallelType::Stream ||
                     isDeviceDim(type))
        << ir_detail::tensorLabel(tv) << " loop axis " << i << " (" << loop[i]->name() << ") is "
        << type << " beside its device mesh; a definition parallelizes only its sharded axes "
        << "and a stream axis";
  }
  std::sort(axes.begin(), axes.end(),
            [](const ShardedAxis& a, const ShardedAxis& b) { return a.mesh_dim < b.mesh_dim; });
  return axes;
}

}  // namespace

std::optional<Sharding> requestedSharding(const TensorView& tv) {
  if (!tv.sharding()) return std::nullopt;
  Sharding sharding = *tv.sharding();
  const std::vector<IterDomain*>& loop = tv.loop();
  if (std::any_of(loop.begin(), loop.end(),
                  [](const IterDomain* id) { return isDeviceDim(id->parallelType()); }))
    sharding.axes = shardedAxesOf(&tv, sharding.mesh);
  return sharding;
}

std::vector<TensorView*> takeShardings(Fusion& fusion, bool keep_single_device_dims) {
  std::vector<TensorView*> meshed;
  for (TensorView* tv : fusion.allTensors()) {
    const std::vector<IterDomain*>& loop = tv->loop();
    const bool has_device_dim = std::any_of(loop.begin(), loop.end(), [](const IterDomain* id) {
      return isDeviceDim(id->parallelType());
    });
    if (!tv->sharding()) {
      BRAZE_USER_CHECK(!has_device_dim)
          << ir_detail::tensorLabel(tv)
          << " has a DIDx or DIDy axis but no device mesh; give it one first "
          << "(tv->setDeviceMesh(mesh))";
      continue;
    }
    if (has_device_dim) {
      Sharding sharding = *tv->sharding();
      sharding.axes = shardedAxesOf(tv, sharding.mesh, keep_single_device_dims);
      const std::optional<ir_detail::LoopAxisOrigin> stream = streamOrigin(tv);
      for (IterDomain* id : loop) {
        if (isDeviceDim(id->parallelType()) || id->parallelType() == ParallelType::Stream)
          id->parallelize(ParallelType::Serial);
      }
      tv->setLoop(tv->logical());
      tv->setSharding(std::move(sharding));
      if (stream) {
        // The stream axis alone, for takeStreamAxes to take.
        if (stream->split != nullptr)
          tv->split(stream->logical_axis, *stream->constant_factor, !stream->by_count);
        tv->parallelize(stream->logical_axis, ParallelType::Stream);
      }
    }
    meshed.push_back(tv);
  }
  return meshed;
}

}  // namespace braze
