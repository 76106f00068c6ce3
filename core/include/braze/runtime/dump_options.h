#pragma once

#include <filesystem>
#include <iosfwd>
#include <string_view>

namespace braze {

/// Which intermediate results Braze prints, from BRAZE_DUMP (a comma-separated list of the
/// field names below, e.g. BRAZE_DUMP=cuda_kernel,launch_params). The environment is read
/// once, at the edge (fromEnvironment), and the struct is passed down; nothing below the edge
/// reads the environment.
struct DumpOptions {
  bool fusion = false;         ///< the fusion as defined
  bool scheduled = false;      ///< loop domains and transforms after scheduling
  bool lowering = false;       ///< kernel IR after lowering
  bool cuda_kernel = false;    ///< the generated CUDA C++
  bool ptx = false;            ///< the PTX NVRTC produced
  bool compile_log = false;    ///< NVRTC's log, with ptxas' resource report
  bool launch_params = false;  ///< grid, block, shared memory and parameters of each launch
  bool segments = false;       ///< each runtime's segments, schedulers and params
  bool host_ir = false;        ///< each runtime's host program
  /// Each runtime's segmentation as a Graphviz file in `folder` (schedulers, params, bytes on
  /// every edge); the path is printed.
  bool segments_dot = false;
  /// Where file dumps go: BRAZE_DUMP_DIR, else $TMPDIR/braze/dump (/tmp without TMPDIR).
  std::filesystem::path folder;
  /// Where dumps go; null means std::cerr.
  std::ostream* stream = nullptr;

  /// Parses a BRAZE_DUMP value. An unknown name is an Error listing the valid names.
  static DumpOptions parse(std::string_view text);
  /// Parses the BRAZE_DUMP environment variable (nothing on when unset).
  static DumpOptions fromEnvironment();
  /// The stream dumps go to.
  std::ostream& out() const;
};

}  // namespace braze
