#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ir/kernel_template.h"

namespace braze {

/// One parameter of a generated kernel, in parameter order. Tensor parameters are passed as
/// `braze::Tensor<T, N, IndexT>` (runtime header: data pointer, then N sizes and N strides in
/// elements, all IndexT), scalars by value in their dtype (Index as IndexT), workspaces as a
/// plain pointer.
///
/// Tensor elements of dtype Index are stored as 64-bit integers (sizeInBytes(Index)), whatever
/// IndexT is. Output tensors and global buffers must be allocated contiguous in row-major
/// order (expanded dims materialized): generated kernels index them from their sizes and do
/// not read their strides. Input tensors are indexed through their strides, except along dims
/// the fusion declares contiguous.
struct KernelParameter {
  enum class Kind : uint8_t {
    InputTensor,   ///< a fusion input tensor; `fusion_position` is its input index
    OutputTensor,  ///< a fusion output tensor; `fusion_position` is its output index
    GlobalBuffer,  ///< an intermediate in global memory the executor allocates per launch
    InputScalar,   ///< a fusion scalar input; `fusion_position` is its input index
    Workspace,     ///< zero-initialized scratch (grid reductions, semaphores)
    /// A tensor map of fusion input `fusion_position` (`val` is that input), passed by value
    /// as `const __grid_constant__ braze::TensorMap`. It describes `tensor_map`'s box of the
    /// input; the kernel moves boxes with braze::tma. An input may have several.
    InputTensorMap,
    /// A tensor map of fusion output `fusion_position`, which the kernel stores boxes into.
    /// The output also has its OutputTensor parameter (which allocates it).
    OutputTensorMap,
  };
  Kind kind;
  const Val* val = nullptr;  ///< the tensor or scalar in the scheduled fusion (not Workspace)
  DataType dtype = DataType::Float32;
  int64_t rank = 0;  ///< tensor rank as passed (user-visible dims of `val`)
  int64_t fusion_position = -1;
  /// Workspace only: bytes needed, as an Index scalar of the scheduled fusion (evaluated at
  /// launch from the bound inputs), or constant.
  const Val* workspace_bytes = nullptr;
  /// GlobalBuffer only: the sizes to allocate (its logical extents without reductions), so
  /// that a kernel restored without its scheduled fusion (braze/runtime/kernel_recipe.h) can
  /// allocate it; `val` may then be null. Empty: the extents of `val`.
  std::vector<const Val*> buffer_sizes = {};
  /// InputTensorMap and OutputTensorMap only.
  TensorMapParameter tensor_map = {};
};

/// The launch geometry as expressions of the scheduled fusion's scalars: grid x/y/z and block
/// x/y/z. A null entry means 1. The executor evaluates them with the inputs' actual sizes.
struct LaunchExtents {
  std::array<const Val*, 3> grid = {nullptr, nullptr, nullptr};
  std::array<const Val*, 3> block = {nullptr, nullptr, nullptr};
  /// Dynamic shared memory in bytes (null: none).
  const Val* dynamic_shared_memory_bytes = nullptr;
  /// Thread-block cluster shape (sm_90+): the grid is made of clusters of this many CTAs per
  /// dim, launched together and sharing distributed shared memory. Constant per kernel.
  std::array<int64_t, 3> cluster = {1, 1, 1};
  /// Launched cooperatively: every block resident at once (Fusion::setCooperativeLaunch).
  bool cooperative = false;
};

/// What code generation hands to execution: the CUDA C++ of one kernel (including Braze's
/// runtime header text), its entry point, its parameters and how to launch it. The Vals it
/// refers to belong to the scheduled fusion it was generated from, which must outlive it.
struct GeneratedKernel {
  std::string source;
  std::string kernel_name;  ///< derived from the source's content, not from a counter
  std::vector<KernelParameter> parameters;
  LaunchExtents launch;
  DataType index_type = DataType::Int32;  ///< Int32 or Int64: what IndexT is in the source
  /// Launch-time checks the schedule relies on but could not prove at compile time (e.g. a
  /// vectorized access's divisibility), as bool scalar Vals of the scheduled fusion with the
  /// message to give when one is false.
  std::vector<std::pair<const Val*, std::string>> launch_checks;
  /// Tensor parameters accessed with vector loads or stores: the data pointer must be aligned
  /// to `bytes`.
  struct Alignment {
    size_t parameter;
    int64_t bytes;
    /// User-visible dims whose stride (in elements, times the element size) must also be a
    /// multiple of `bytes`: strides only known at launch that a vector access steps over.
    std::vector<int64_t> stride_dims = {};

    bool operator==(const Alignment&) const = default;
  };
  std::vector<Alignment> alignments;
  /// The launch bounds the source declares (Fusion::setLaunchBounds); the executor refuses a
  /// block larger than their max_threads_per_block, which the kernel was compiled for.
  std::optional<LaunchBounds> launch_bounds;
  /// Compiled for the architecture-specific target (sm_90a): a kernel template's wgmma or
  /// setmaxnreg needs it.
  bool arch_specific = false;
};

}  // namespace braze
