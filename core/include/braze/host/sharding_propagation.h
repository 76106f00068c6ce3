#pragma once

#include <cstdint>

namespace braze {

class Fusion;

/// Gives the tensors of a sharded definition that the user left without a mesh the sharding
/// their neighbours imply, as the multi-device runtime needs every tensor placed:
/// - forward, in definition order: a tensor computed from placed tensors takes the mesh of its
///   first input with sharded axes (else its first placed input), and each of that input's
///   sharded axes on the dim the op pairs exactly
///   with it (an axis the op reduces over is not carried: the result is a partial sum that a
///   collective completes); mesh dims that input leaves whole take the other inputs' split
///   axes on the same mesh;
/// - then backward, from the outputs: an unplaced input of an op whose outputs are placed takes
///   the first placed output's mesh and the sharded axes that map back to its dims.
/// Matmul and linear pair their batch, M and N dims (the weight's N shards the output's N).
/// Tensors the user placed keep their sharding. Run after takeShardings. Returns the number of
/// tensors placed.
int64_t propagateShardings(Fusion& fusion);

}  // namespace braze
