#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/lower/kernel_ir.h"

namespace braze {

/// What lowering is asked to do besides its job. Filled once, at the edge (e.g. from
/// BRAZE_DUMP), and passed down; no pass reads the environment.
struct LowerOptions {
  /// The kernel's index type: Int32 (default) or Int64. With Int32 the kernel records, among
  /// its launch checks, that every tensor it touches has fewer than 2^31 elements; an executor
  /// whose inputs fail that check lowers again with Int64.
  DataType index_type = DataType::Int32;
  /// Print the kernel IR after each named pass ("all": after every pass) to `dump_stream`.
  std::vector<std::string> print_after = {};
  /// Passes to leave out, by name. For debugging lowering itself: the kernel may be wrong.
  std::vector<std::string> skip_passes = {};
  /// Check kernel IR invariants after every pass (always done in debug builds).
  bool verify = false;
  /// BRAZE_DUMP=lowering: print the final kernel IR to `dump_stream`.
  bool dump_lowering = false;
  /// Where dumps go; null means std::cerr.
  std::ostream* dump_stream = nullptr;
};

/// Lowers a scheduled fusion (loop domains, parallel types, memory types and inline positions
/// set by the scheduling primitives) to kernel IR by running the pass table of
/// lower/pipeline.cpp in order. An unscheduled fusion is valid too: every tensor is then
/// computed by its own serial loop nest over its logical domain, with intermediates in global
/// memory.
///
/// The fusion must outlive the kernel (the kernel refers to its statements). Lowering may add
/// scalar Vals to the fusion (launch sizes and launch checks it needs to express); it never
/// changes the fusion's math or schedule. A schedule lowering cannot honor is refused with an
/// Error naming the tensor and the axis.
kir::Kernel lowerFusion(const Fusion& scheduled, const LowerOptions& options = {});

/// The names of the passes, in order.
std::vector<std::string_view> pipelinePassNames();
/// The pass table as text, one pass per line with the reason for its position
/// (--print-pipeline).
std::string printPipeline();

/// The kernel IR as readable text (BRAZE_DUMP=lowering): parameters, launch sizes, then the
/// statements with their loops, predicates and indices.
std::string printKernelIr(const kir::Kernel& kernel);

}  // namespace braze
