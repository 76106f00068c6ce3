#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/device_mesh.h"
#include "braze/ir/op_kind.h"

namespace braze {

class Fusion;
class TensorView;

/// A logical axis of a tensor split into equal parts over one dim of its mesh: part i lives on
/// the devices at position i along that dim. The definition keeps global (unsharded) sizes.
struct ShardedAxis {
  int64_t axis = 0;      ///< position in the tensor's logical domain
  int64_t mesh_dim = 0;  ///< the mesh dim it is split over
  bool operator==(const ShardedAxis&) const = default;
};

/// A tensor whose values on each device are partial results of a reduction over an axis split
/// over mesh dim `mesh_dim`: the devices along that dim hold parts that `op` (Sum, Prod, Max,
/// Min) combines into the value (an allreduce or reduce-scatter completes it). Only the
/// multi-device passes make such tensors (insertResharding), never a user.
struct PartialReduction {
  int64_t mesh_dim = 0;
  OpKind op = OpKind::Sum;
  bool operator==(const PartialReduction&) const = default;
};

/// How a tensor is spread over devices: its mesh, and the axes split over the mesh's dims; with
/// no axes it is replicated on every device of the mesh.
///
/// A user writes it as nvFuser's direct frontend does: `tv->setDeviceMesh(mesh)`, then
/// `tv->split(axis, mesh.size(), false)` and `tv->parallelize(axis, ParallelType::DIDx)` on the
/// outer axis (so any axis can be sharded, not only the outermost); DIDx is the mesh's last dim,
/// DIDy the first of a 2-D mesh. takeShardings turns that into this attribute before
/// segmentation.
struct Sharding {
  DeviceMesh mesh;
  std::vector<ShardedAxis> axes;          ///< by mesh dim, at most one axis per dim
  std::vector<PartialReduction> partial;  ///< by mesh dim; never over a dim an axis is split over

  bool isReplicated() const { return axes.empty() && partial.empty(); }
  /// The axis split over `mesh_dim`, if any.
  std::optional<int64_t> axisOver(int64_t mesh_dim) const;
  /// The reduction pending over `mesh_dim`, if any.
  std::optional<OpKind> partialOver(int64_t mesh_dim) const;
  /// "mesh{0, 1} axis 1 over DIDx", "mesh{0, 1} replicated", "mesh{0, 1} partial Sum over DIDx".
  std::string toString() const;
  bool operator==(const Sharding&) const = default;
};

/// The ParallelType name of mesh dim `mesh_dim` of a mesh with `mesh_dims` dims: "DIDx" for the
/// last, "DIDy" for the first of two.
std::string_view meshDimName(int64_t mesh_dim, int64_t mesh_dims);

/// The sharding `tv` has (its attribute, with the axes its loop domain asks for, checked as
/// takeShardings checks them), or nullopt for a tensor without a mesh.
std::optional<Sharding> requestedSharding(const TensorView& tv);

/// For every tensor of `fusion` with a device mesh: records the axes its loop domain
/// parallelizes as ParallelType::DIDx / DIDy in its Sharding and resets the loop domain to the
/// logical domain, so that the definition is unscheduled again for segmentation. Refuses,
/// naming the tensor and the axis: a DID axis on a tensor without a mesh, DIDy on a 1-D mesh,
/// a DID axis that is not the outer axis of a split of a logical axis by its mesh dim's size
/// (or the logical axis itself when that dim has one device), a reduced or broadcast axis,
/// and any other scheduling beside it. A stream axis on another logical axis (or the outer axis
/// of a split of one) stays on the loop domain for takeStreamAxes: the multi-device runtime runs
/// its loop with the resharding steps inside. An axis over a mesh dim of one device is not
/// recorded (that device holds it whole), unless `keep_single_device_dims`: then its steps are
/// planned as on a larger mesh, with teams of one, so that one GPU runs every step path.
/// Returns the tensors with a mesh.
std::vector<TensorView*> takeShardings(Fusion& fusion, bool keep_single_device_dims = false);

}  // namespace braze
