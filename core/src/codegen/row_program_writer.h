#pragma once

// Writes a fusion as a kernel template's row program (braze/codegen/row_program.h).

#include "braze/ir/kernel_template.h"
#include "codegen/epilogue_writer.h"

namespace braze::codegen {

/// The row program of `fusion`: `function` is the braze_row_program struct; `parameters` and
/// `arguments` replace BRAZE_ROW_PARAMETERS (", braze::Tensor<float, 2, IndexT> e_T0, ...") and
/// BRAZE_ROW_ARGUMENTS ("e_T0, ..."). A fusion analyzeRowProgram refuses is a user error with
/// its message.
EpilogueCode writeRowProgram(const Fusion& fusion, const KernelTemplate::RowProgram& program);

}  // namespace braze::codegen
