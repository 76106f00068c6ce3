#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ir/sharding.h"

namespace braze {

/// What one resharding step does to a tensor: it changes how one mesh dim holds it. The step is
/// a `set` whose input and output shardings differ on that dim only (insertResharding makes
/// them); the host program runs it as a Communicate instruction. Axes are positions in the
/// tensor's dims (reduction dims dropped), the same for the set's input and output.
///
///   input over the dim     | output over the dim    | step
///   -----------------------+------------------------+-------------------------------------------
///   axis a split           | replicated             | Allgather along a
///   replicated             | axis a split           | LocalSlice: each device keeps its part of
///                          |                        |   a (every device holds the whole input)
///   partial (a reduction)  | replicated             | Allreduce with the reduction's op
///   partial (a reduction)  | axis a split           | ReduceScatter along a
///   axis a split           | axis b split           | AllToAll: split along b, gathered along a
///   on mesh A              | the same, on mesh B    | SendRecv: the device at each position of
///                          |                        |   A sends its part to B's at that position
///
/// SendRecv moves a tensor between two meshes of one shape (pipeline stages); `mesh` is the
/// source and `destination` the other, and no mesh dim changes. The meshes may share devices: a
/// device on both sends one part and receives another, or keeps its part where it holds the same
/// position of both (host::sendRecvRoles).
struct Communication {
  enum class Kind : uint8_t { Allgather, LocalSlice, Allreduce, ReduceScatter, AllToAll, SendRecv };
  Kind kind = Kind::Allgather;
  DeviceMesh mesh = DeviceMesh::ofSize(1);
  /// SendRecv: the mesh that receives.
  DeviceMesh destination = DeviceMesh::ofSize(1);
  int64_t mesh_dim = 0;
  /// Allgather: the axis gathered; AllToAll: the axis the input is split along.
  int64_t input_axis = -1;
  /// LocalSlice, ReduceScatter, AllToAll: the axis the output is split along.
  int64_t output_axis = -1;
  /// Allreduce, ReduceScatter: how parts combine (Sum, Prod, Max, Min).
  OpKind reduction = OpKind::Sum;
  /// How the parts and the result lie in memory: dims from outermost to innermost (the step's
  /// output's allocation order, layoutCommunicatedBuffers'); empty: row-major.
  std::vector<int64_t> allocation_order;

  /// "allgather axis 0 over DIDx of mesh{0, 1}", "allreduce Sum over DIDx of mesh{0, 1}".
  std::string toString() const;
};

std::string_view toString(Communication::Kind kind);

/// The resharding step `expr` is (a `set` whose input and output shardings differ on one mesh
/// dim), or nullopt for any other Expr.
std::optional<Communication> communicationOf(const Expr& expr);

/// Makes every Expr of a placed fusion (takeShardings, then propagateShardings) local to each
/// device, by putting resharding steps (communicationOf) where shardings change:
/// - an input whose sharding over a mesh dim differs from what the Expr needs there (its
///   output's sharding carried back through the dims it maps, or for a contraction whose K is
///   split, K split alike on every operand) is read through one `set` per changed mesh dim;
/// - an Expr that reduces over an axis split over a mesh dim (a reduction, or a matmul or linear
///   whose K is split) computes partial results there: its output becomes partial over that dim
///   and a `set` after it completes the value its readers see (an allreduce, or a
///   reduce-scatter where the output is split over the same dim).
/// - an input on another mesh than the Expr's output is first moved there (SendRecv), when the
///   meshes have one shape.
/// Refused, naming the tensors: a tensor left without a mesh, operands on meshes of different
/// shapes, a Welford or scan over a split axis,
/// and a fusion input split along a dim whose extent the definition fixes (define it with a
/// size known at run time). Returns the number of resharding steps added.
int64_t insertResharding(Fusion& fusion);

/// The sizes of each device's part of `tv` (its sharding) when the whole tensor has
/// `global_sizes` (its dims, reductions dropped): each split axis divided by its mesh dim's
/// size. Refused, naming the tensor and the axis, when a split axis does not divide evenly.
std::vector<int64_t> localSizes(const TensorView& tv, const std::vector<int64_t>& global_sizes);

/// The position among a tensor's dims with reductions dropped of its logical axis `axis`.
int64_t axisWithoutReductions(const TensorView& tv, int64_t axis);

/// `sharding` of `tv` (positions in its logical domain) with positions among its dims without
/// reductions: the sharding a `set` of `tv` has when it changes nothing.
Sharding withoutReductions(const TensorView& tv, Sharding sharding);

}  // namespace braze
