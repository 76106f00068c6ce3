#pragma once

// Writes a kernel template's epilogue (braze/codegen/template_epilogue.h) as CUDA C++.

#include <string>
#include <vector>

#include "braze/codegen/generated_kernel.h"
#include "braze/ir/kernel_template.h"

namespace braze::codegen {

struct EpilogueCode {
  /// `__device__ void braze_epilogue(long long i0, ..., const float (&values)[V], ...)` and
  /// `braze_epilogue_if(bool store, long long i0, ...)`, which stores only where `store` holds,
  /// and braze_epilogue_staged, which hands the first output back (braze_staged_output).
  std::string function;
  /// What replaces BRAZE_EPILOGUE_PARAMETERS and BRAZE_EPILOGUE_ARGUMENTS in the template:
  /// ", braze::Tensor<float, 1, IndexT> e_T2, ..." and ", e_T2, ...".
  std::string parameters;
  std::string arguments;
  /// The kernel parameters those are, in order, after the template's own.
  std::vector<KernelParameter> kernel_parameters;
};

/// A fusion input or output as a Tensor kernel parameter (InputTensor or OutputTensor, its
/// position in the fusion's inputs or outputs).
KernelParameter fusionTensorParameter(const Fusion& fusion, const TensorView& tv);

/// The epilogue of `epilogue.anchor` in `fusion`; a fusion templateEpilogueProblem refuses is
/// a user error with its message.
EpilogueCode writeTemplateEpilogue(const Fusion& fusion, const KernelTemplate::Epilogue& epilogue);

}  // namespace braze::codegen
