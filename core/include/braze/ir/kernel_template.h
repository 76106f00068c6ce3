#pragma once

// A kernel its scheduler writes whole: the schedule of a fusion whose kernel is not a lowered
// loop nest (Fusion::setKernelTemplate). The matmul scheduler's warp-specialized GEMM is one:
// its pipeline of asynchronous copies and tensor-core groups is written once as CUDA with
// Braze's runtime machinery (braze::tma, braze::wgmma, ...), and the scheduler fills in the
// tile shape, dtypes and launch for each fusion. Code generation turns the template into a
// GeneratedKernel; compilation, caches, recipes, launches and graphs are then the same as for
// lowered kernels.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace braze {

class TensorView;
class Val;

/// How a tensor is described to the bulk copy engine (TMA) for a kernel that copies boxes of
/// it: the executor encodes the map from each run's tensor (address, sizes, strides) with this
/// box and layout (braze/driver/tensor_map.h has the rules).
struct TensorMapParameter {
  /// Shared-memory layout of a box; 128-byte swizzle is what wgmma reads without conflicts.
  enum class Swizzle : uint8_t { None, Bytes32, Bytes64, Bytes128 };
  /// The tensor's logical dims in the map's order, innermost first: {1, 0} for a row-major
  /// matrix. The first must have stride 1; every dim of the tensor appears once.
  std::vector<int64_t> dims;
  /// Elements one copy moves along each map dim, innermost first (1 to 256 each).
  std::vector<uint32_t> box;
  Swizzle swizzle = Swizzle::None;
  /// Elements outside the tensor read as NaN ("request zero" to the tensor cores) instead of
  /// zero. Floating-point dtypes only.
  bool fill_nan = false;

  bool operator==(const TensorMapParameter&) const = default;
};

struct KernelTemplate {
  enum class ParameterKind : uint8_t {
    Tensor,     ///< a fusion input or output as braze::Tensor<T, N, IndexT>
    TensorMap,  ///< a map of a fusion input or output, `const __grid_constant__ braze::TensorMap`
  };
  struct Parameter {
    ParameterKind kind = ParameterKind::Tensor;
    /// A fusion input or output (every output needs a Tensor parameter, which allocates it).
    TensorView* tensor = nullptr;
    TensorMapParameter tensor_map = {};  ///< TensorMap only
  };

  /// CUDA C++ of the kernel. Its entry point is spelled BRAZE_KERNEL_NAME (code generation
  /// names it after the source, as it names lowered kernels), IndexT is int, and every
  /// `braze::` name it uses brings its runtime header in front.
  std::string source;
  std::vector<Parameter> parameters;  ///< in the entry point's order
  /// Launch geometry as Index scalars of the fusion (extents and expressions of them); null: 1.
  std::array<Val*, 3> grid = {nullptr, nullptr, nullptr};
  std::array<Val*, 3> block = {nullptr, nullptr, nullptr};
  Val* dynamic_shared_memory_bytes = nullptr;
  std::array<int64_t, 3> cluster = {1, 1, 1};
  /// Conditions on the fusion's extents (Bool scalars) the kernel needs of every run, each with
  /// what to tell the user when a run breaks it: checked before each launch, as a lowered
  /// kernel's are (GeneratedKernel::launch_checks).
  std::vector<std::pair<Val*, std::string>> launch_checks;
  /// Compile for the architecture-specific target (sm_90a rather than sm_90): wgmma,
  /// setmaxnreg and multicast copies need it.
  bool arch_specific = false;

  /// The rest of the fusion, which code generation writes as the template's epilogue
  /// (braze/codegen/template_epilogue.h has the rules). The template computes `anchor`, a
  /// tensor of rank R, in fp32 registers and, for `vector` consecutive elements along its
  /// innermost dim, calls
  ///     braze_epilogue(i0, ..., i{R-1}, values BRAZE_EPILOGUE_ARGUMENTS);
  /// with `float values[vector]` and the first element's index. The function adds
  /// `accumulator_bias`, rounds to the anchor's dtype, applies every other expr of the fusion
  /// and stores every output. The template's entry point ends its parameters with
  /// BRAZE_EPILOGUE_PARAMETERS (the tensors and scalars the epilogue reads and writes, which
  /// code generation appends to the kernel's parameters). Calls must stay inside the anchor,
  /// with the innermost index a multiple of `vector`; the scheduler makes sure the innermost
  /// extent is one too (outputs are stored `vector` elements at a time).
  struct Epilogue {
    TensorView* anchor = nullptr;
    /// A 1-d fusion input along the anchor's innermost dim, added to the accumulator before
    /// it is rounded (linear's bias: part of the anchor's own definition); null: none.
    TensorView* accumulator_bias = nullptr;
    int64_t vector = 1;
    /// Tensors before the anchor that the template computes itself from fusion inputs, as it
    /// copies them in (the matmul kernel's operand casts): code generation writes nothing for
    /// their definitions, which may read fusion inputs only.
    std::vector<TensorView*> prologue;
  };
  std::optional<Epilogue> epilogue;

  /// The whole fusion written as a row program (braze/codegen/row_program.h has the rules and
  /// the struct code generation writes): for a template that owns the data movement of a
  /// normalization (rows staged in shared memory, partial results exchanged across a cluster)
  /// and leaves the arithmetic to the fusion. The template's entry point has BRAZE_ROW_PARAMETERS
  /// as its parameters (`parameters` stays empty) and builds
  /// `braze_row_program program{BRAZE_ROW_ARGUMENTS};`.
  /// A template has an epilogue or a row program, not both.
  struct RowProgram {
    /// Consecutive elements of a row each call of the program's element functions handles;
    /// the template keeps every row input's groups of `vector` aligned to their size.
    int64_t vector = 4;
    /// The template vouches that every input indexed along the columns only ([N], [1, N]:
    /// weights, biases) has stride 1 along them and starts aligned to `vector` of its elements
    /// (16 bytes at most): they are read a vector at a time, without strides.
    bool contiguous_columns = false;
    /// The template copies every column input's chunk into shared memory once (they are the
    /// same for every row) and passes it as `cols`; implies contiguous_columns.
    bool staged_columns = false;
    /// Bytes of zeroed scratch the template needs (an Index scalar of the fusion; null: none),
    /// the program's `workspace`: where a fusion reduces over its rows, the CTAs' column
    /// partials and the grid barrier's counters. It is zeroed once and reused by later
    /// launches, so counters must be zero again when the kernel returns.
    Val* workspace_bytes = nullptr;
    /// The template keeps, per element, the row reductions' operands that the outputs read
    /// again and that are costly to compute (softmax's exponentials: computed once, not twice):
    /// accumulate writes them to its `kept` array and store reads them (kKept of them). Only a
    /// template that calls accumulate and store with the same `kept` for the same elements (a
    /// thread's own elements, in registers) may ask for it.
    bool keep_reduction_operands = false;
  };
  std::optional<RowProgram> row_program;
};

}  // namespace braze
