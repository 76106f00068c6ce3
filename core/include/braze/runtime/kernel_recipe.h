#pragma once

// A generated kernel's contract with execution (its parameters, launch geometry, launch-time
// checks and alignments) in terms of the segment's inputs rather than of the scheduled
// fusion's Vals. A runtime keeps one per segment with its decisions
// (braze/runtime/decision_store.h), so that a later process runs the stored kernel without
// asking the scheduler to schedule or lowering it again: the recipe is rebuilt as scalar
// expressions on an unscheduled copy of the segment, whose inputs and outputs are the scheduled
// fusion's.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "braze/codegen/generated_kernel.h"
#include "braze/ir/attribute.h"
#include "braze/ir/op_kind.h"

namespace braze {

/// Scalar expressions over a fusion's inputs: a DAG whose nodes come after their operands.
struct ScalarFormulas {
  struct Node {
    enum class Kind : uint8_t {
      Constant,     ///< `value`
      InputExtent,  ///< the logical extent of dim `dim` (reductions excluded) of input `input`
      InputScalar,  ///< scalar input `input`
      Op,           ///< `op` (an elementwise op) over earlier nodes `operands`
    };
    Kind kind = Kind::Constant;
    DataType dtype = DataType::Index;
    ScalarValue value = int64_t{0};
    int64_t input = -1;
    int64_t dim = -1;
    OpKind op = OpKind::Add;
    std::vector<int32_t> operands = {};
    std::vector<Attribute> attributes = {};

    bool operator==(const Node&) const = default;
  };
  std::vector<Node> nodes;

  bool operator==(const ScalarFormulas&) const = default;
};

/// GeneratedKernel with every Val replaced by a node of `formulas` (-1: none), and the content
/// address of its compiled kernel in the kernel store.
struct KernelRecipe {
  std::string kernel_key;  ///< kernelKey of the compiled kernel (braze/runtime/kernel_store.h)
  std::string kernel_name;
  DataType index_type = DataType::Int32;
  struct Parameter {
    KernelParameter::Kind kind = KernelParameter::Kind::InputTensor;
    DataType dtype = DataType::Float32;
    int64_t rank = 0;
    int64_t fusion_position = -1;
    int32_t workspace_bytes = -1;        ///< Workspace
    std::vector<int32_t> buffer_sizes;   ///< GlobalBuffer
    TensorMapParameter tensor_map = {};  ///< InputTensorMap, OutputTensorMap

    bool operator==(const Parameter&) const = default;
  };
  std::vector<Parameter> parameters;
  std::array<int32_t, 3> grid = {-1, -1, -1};
  std::array<int32_t, 3> block = {-1, -1, -1};
  int32_t dynamic_shared_memory_bytes = -1;
  std::array<int64_t, 3> cluster = {1, 1, 1};
  bool arch_specific = false;  ///< compiled for sm_90a rather than sm_90
  bool cooperative = false;    ///< launched cooperatively (LaunchExtents::cooperative)
  std::vector<std::pair<int32_t, std::string>> launch_checks;
  std::vector<GeneratedKernel::Alignment> alignments;
  std::optional<LaunchBounds> launch_bounds;
  ScalarFormulas formulas;

  bool operator==(const KernelRecipe&) const = default;
};

/// The recipe of `kernel`, generated from `scheduled` and stored under `kernel_key`, or why it
/// cannot be kept (a launch value that depends on something other than the fusion's inputs).
std::variant<KernelRecipe, std::string> recordKernelRecipe(const GeneratedKernel& kernel,
                                                           const Fusion& scheduled,
                                                           std::string kernel_key);

/// `recipe` as a GeneratedKernel over `segment`: an unscheduled copy of the fusion the kernel
/// was generated from (the same inputs and outputs), to which the recipe's formulas are added
/// as scalar expressions. `source` is the compiled kernel's. Everything the recipe says is
/// checked against `segment` first (input and output positions, dtypes, ranks, that formulas
/// only use elementwise ops over earlier nodes): a recipe that does not fit is a braze::Error
/// saying why, never a kernel launched with the wrong contract.
GeneratedKernel rebuildKernel(const KernelRecipe& recipe, Fusion& segment, std::string source);

}  // namespace braze
