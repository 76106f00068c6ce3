#include "tma_ws_normalization_scheduler.h"

#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include "braze/codegen/row_program.h"
#include "braze/error.h"
#include "braze/ops/elementwise.h"
#include "braze/sched/broadcast_reciprocals.h"
#include "braze/sched/runtime_arguments.h"
#include "row_template.h"

namespace braze::tma_ws_normalization {

namespace {

constexpr int64_t kCopyBytes = 16;  // the copy engine's granule: sizes, strides, addresses
constexpr int64_t kReservedSharedPerBlock = 1024;  // what the device keeps of each CTA's share

RowProgramShape rowProgramOf(const Fusion& fusion) {
  auto analyzed = analyzeRowProgram(fusion);
  BRAZE_USER_CHECK(std::holds_alternative<RowProgramShape>(analyzed))
      << "tma_ws_normalization: the fusion is not a row program: "
      << std::get<std::string>(analyzed);
  return std::get<RowProgramShape>(std::move(analyzed));
}

struct RowSizes {
  /// Elements of 16 bytes of the narrowest input the kernel copies (row inputs, and column
  /// inputs where staged): every chunk and part starts at a multiple.
  int64_t unit = 1;
  int64_t vector = 1;             ///< elements of 16 bytes of the widest row input
  int64_t bytes_per_element = 0;  ///< of the row inputs
  std::vector<int64_t> input_bytes;
  std::vector<int64_t> column_bytes;  ///< of the staged column inputs
};

RowSizes rowSizesOf(const RowProgramShape& program, bool staged_columns) {
  RowSizes sizes;
  int64_t widest = 1;
  for (const TensorView* tv : program.row_inputs) {
    const int64_t bytes = sizeInBytes(tv->dtype());
    sizes.input_bytes.push_back(bytes);
    sizes.bytes_per_element += bytes;
    sizes.unit = std::max(sizes.unit, kCopyBytes / bytes);
    widest = std::max(widest, bytes);
  }
  sizes.vector = kCopyBytes / widest;
  if (!staged_columns) return sizes;
  for (const TensorView* tv : program.column_inputs) {
    const int64_t bytes = sizeInBytes(tv->dtype());
    sizes.column_bytes.push_back(bytes);
    sizes.unit = std::max(sizes.unit, kCopyBytes / bytes);
  }
  return sizes;
}

struct ColumnAccess {
  bool contiguous = false;  ///< read a vector at a time (contiguous_columns)
  bool staged = false;      ///< copied once per CTA into shared memory (staged_columns)
};

// How the kernel may read the column inputs (weights, biases) of this run: a vector at a time
// where every one has stride 1 along the columns and is aligned to a vector of it; through the
// copy engine where, besides, each starts on 16 bytes and its rows are whole 16-byte units.
ColumnAccess columnAccessOf(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                            const RowProgramShape& program, int64_t n) {
  ColumnAccess access{.contiguous = true, .staged = !program.column_inputs.empty()};
  const int64_t vector = rowSizesOf(program, false).vector;
  for (const TensorView* tv : program.column_inputs) {
    const TensorArgumentInfo* values = tensorArgumentOf(fusion, info.arguments, tv);
    const int64_t bytes = sizeInBytes(tv->dtype());
    const int64_t column_dim = tv->axis(0)->isBroadcast() ? 1 : 0;
    const int64_t alignment = vectorAlignment(info, static_cast<size_t>(fusion.inputIndex(tv)));
    if (values == nullptr || (values->sizes[column_dim] > 1 && values->strides[column_dim] != 1) ||
        alignment < std::min<int64_t>(kCopyBytes, vector * bytes))
      return {};
    if (alignment < kCopyBytes || (n * bytes) % kCopyBytes != 0) access.staged = false;
  }
  return access;
}

// The shared memory of an SM (the device reports 0 where it does not know).
int64_t sharedPerSm(const driver::DeviceProperties& device) {
  return device.shared_memory_per_sm > 0 ? device.shared_memory_per_sm
                                         : device.max_shared_memory_per_block_optin;
}

// Elements of a row per CTA where rows of n are split `cluster` ways, in whole units.
int64_t chunkFor(int64_t n, int64_t cluster, const RowSizes& sizes) {
  const int64_t chunk = (n + cluster - 1) / cluster;
  return (chunk + sizes.unit - 1) / sizes.unit * sizes.unit;
}

// The kernel's shape for `program` with chunks of `chunk` elements over `cluster` CTAs (threads,
// stages and CTAs per SM still to choose; four parts, vectors of 16 bytes).
RowTemplateShape shapeFor(const RowProgramShape& program, const RowSizes& sizes, int64_t cluster,
                          int64_t chunk) {
  RowTemplateShape shape;
  shape.cluster = cluster;
  shape.pieces = 4;
  shape.unit = sizes.unit;
  shape.vector = sizes.vector;
  shape.chunk = chunk;
  shape.row_input_bytes = sizes.input_bytes;
  shape.column_input_bytes = sizes.column_bytes;
  shape.reductions = program.reductions;
  shape.passes = program.passes;
  shape.column_reductions = program.column_reductions;
  shape.kept_operands = program.kept_operands;
  return shape;
}

// The params of `shape` with `ctas` CTAs per SM, and a persistent grid of the clusters surely
// resident at once (a GPC holds a cluster's CTAs: driver::residentClusters). A persistent grid
// larger than what is resident runs a second wave of clusters after the first, which doubles
// the time (measured on an H200: 32 clusters of four 0.23-0.48 of copy, 30 0.39-0.74); one
// smaller by a few clusters loses a few percent.
TmaWsNormalizationParams paramsOf(const RowTemplateShape& shape, int64_t ctas, int64_t m,
                                  ColumnAccess columns, const driver::DeviceProperties& device) {
  TmaWsNormalizationParams params;
  params.cluster = shape.cluster;
  params.chunk = shape.chunk;
  params.consumer_threads = shape.consumer_threads;
  params.pieces = shape.pieces;
  params.stages = shape.stages;
  params.min_blocks_per_sm = ctas;
  params.contiguous_columns = columns.contiguous ? 1 : 0;
  params.staged_columns = columns.staged ? 1 : 0;
  params.vector = shape.vector;
  params.register_rows = shape.register_rows ? 1 : 0;
  params.clusters =
      std::max<int64_t>(1, std::min(m, driver::residentClusters(device, shape.cluster, ctas)));
  return params;
}

// The plan for rows of n elements with `columns` over the cluster sizes `clusters`, if any.
std::optional<TmaWsNormalizationParams> planRowsOn(const RowProgramShape& program, int64_t m,
                                                   int64_t n,
                                                   const driver::DeviceProperties& device,
                                                   ColumnAccess columns,
                                                   const std::vector<int64_t>& clusters) {
  const RowSizes sizes = rowSizesOf(program, columns.staged);
  const int64_t shared_per_sm = sharedPerSm(device);
  struct Preference {
    int64_t stages, min_ctas;
  };
  for (const Preference preference : {Preference{1, 2}, Preference{1, 1}}) {
    const int64_t min_ctas = preference.min_ctas;
    for (const int64_t cluster : clusters) {
      RowTemplateShape shape = shapeFor(program, sizes, cluster, chunkFor(n, cluster, sizes));
      shape.consumer_threads = min_ctas == 2 ? 256 : 512;
      shape.stages = preference.stages;
      const int64_t bytes = rowTemplateSharedBytes(shape);
      if (bytes > device.max_shared_memory_per_block_optin) continue;
      const int64_t by_memory = shared_per_sm / (bytes + kReservedSharedPerBlock);
      const int64_t by_threads = device.max_threads_per_sm / (shape.consumer_threads + 32);
      const int64_t ctas_per_sm = std::min(by_memory, by_threads);
      if (ctas_per_sm < min_ctas) continue;
      return paramsOf(shape, ctas_per_sm, m, columns, device);
    }
  }
  // Weights that do not fit beside the rows are read from L2 instead.
  if (columns.staged)
    return planRowsOn(program, m, n, device, {.contiguous = true, .staged = false}, clusters);
  return std::nullopt;
}

// The plan for rows of n elements on `device`, or why there is none: one stage, two or more
// CTAs per SM where they fit (one CTA of more threads otherwise), the smallest cluster that
// allows it. Measured on an H200 (benchmarks/RESULTS.md), one stage with three CTAs per SM ran
// softmax backward at 0.76-0.93 of copy against 0.73-0.81 with two stages, which need clusters
// twice as large for the same shared memory; a grid of one cluster per row against a
// persistent one: 0.61-0.83. Clusters of 16 (non-portable) only for rows that fit no smaller
// one, where the device ran them when its properties were read.
std::variant<TmaWsNormalizationParams, std::string> planRows(const RowProgramShape& program,
                                                             int64_t m, int64_t n,
                                                             const driver::DeviceProperties& device,
                                                             ColumnAccess columns) {
  std::vector<std::vector<int64_t>> cluster_sets = {{1, 2, 4, 8}};
  const int64_t largest = driver::largestCluster(device);
  if (largest > driver::kMaxPortableCluster) cluster_sets.push_back({largest});
  for (const std::vector<int64_t>& clusters : cluster_sets) {
    if (auto params = planRowsOn(program, m, n, device, columns, clusters)) return *params;
  }
  return "a row of " + std::to_string(n) + " elements (" +
         std::to_string(n * rowSizesOf(program, false).bytes_per_element) +
         " bytes of row inputs) does not fit the shared memory of " + std::to_string(largest) +
         " CTAs, the largest cluster " + device.name + " runs (" +
         std::to_string(device.max_shared_memory_per_block_optin) + " bytes each)";
}

// Rows in registers (register_rows) for a forward program that reads its rows again after a
// reduction (layer norm's and RMS norm's outputs): one CTA of 512 consumer threads per SM, the
// smallest cluster whose chunk leaves each thread at most 32 registers of row vectors and fits
// the CTA's shared memory (a device with less of it takes a larger cluster), one stage. The next
// row streams into shared memory while this one is reduced and written from registers. Measured
// on an H200 (benchmarks/RESULTS.md, against the shared-memory plan): layer norm bf16 262144
// 0.57 of copy against 0.45, RMS norm bf16 262144 0.75 against 0.60, layer norm fp32 65536 0.62
// against 0.53. Programs that keep costly operands (softmax's exponentials) only with
// `recompute_operands`: kept beside the row they made it issue-bound, and one CTA per SM idled at
// each exchange (0.39-0.45 against 0.58); computed again in the outputs they leave the registers
// to the row, up to kMaxRecomputedRowRegisters a thread (softmax fp32 on an H200,
// braze_tma_ws_sweep
// --force: rows of 65536 on clusters of two 170 us, 76% of copy, against 208 us from shared memory
// and 205 us on braze::inner_outer; rows of 262144 on clusters of eight 207 us against 251 on
// inner_outer).
constexpr int64_t kMaxHeldRegisters = 32;
constexpr int64_t kMaxRecomputedRowRegisters = 64;
// 2-byte rows of a program whose outputs read a costly operand again (softmax) where one CTA
// holds a whole row: no exchange between CTAs at all, and threads enough (whole warp quads)
// that each holds at most kMaxWholeRowRegisters of the row. Measured on an H200
// (braze_tma_ws_sweep --force, softmax bf16 65536): 768 threads 171.4 us, 896 170.9, 640 176.7,
// 512 (64 registers) 190.4, against 194.4 from shared memory on clusters of two; rows of 262144
// on clusters of four or eight held that way were slower (230.9 and 271.1 against 217.2), so
// only whole rows take it.
constexpr int64_t kMaxWholeRowRegisters = 44;
constexpr int64_t kMaxWholeRowThreads = 896;

// How planRegisterRows may lay a row out: the clusters it tries, smallest first, and for each
// the consumer threads, in warp quads from min_threads, until a thread's share of the row is at
// most max_held registers; whether costly operands are computed again in the outputs.
struct RegisterRowLayout {
  std::vector<int64_t> clusters = {1, 2, 4, 8};
  int64_t min_threads = 512;
  int64_t max_threads = 512;
  int64_t max_held = kMaxHeldRegisters;
  bool recompute_operands = false;
};

// Layer norm and RMS norm forward; float softmax (recomputed, up to 64 registers a thread); 2-byte
// softmax rows whole in one CTA (recomputed, up to 44).
const RegisterRowLayout kHeldRows{};
const RegisterRowLayout kRecomputedRows{.max_held = kMaxRecomputedRowRegisters,
                                        .recompute_operands = true};
const RegisterRowLayout kWholeRecomputedRows{.clusters = {1},
                                             .min_threads = 128,
                                             .max_threads = kMaxWholeRowThreads,
                                             .max_held = kMaxWholeRowRegisters,
                                             .recompute_operands = true};

std::optional<TmaWsNormalizationParams> planRegisterRows(const RowProgramShape& program, int64_t m,
                                                         int64_t n,
                                                         const driver::DeviceProperties& device,
                                                         ColumnAccess columns,
                                                         const RegisterRowLayout& layout) {
  if (program.column_reductions > 0 || (program.kept_operands > 0 && !layout.recompute_operands))
    return std::nullopt;
  const RowSizes sizes = rowSizesOf(program, columns.staged);
  for (const int64_t cluster : layout.clusters) {
    RowTemplateShape shape = shapeFor(program, sizes, cluster, chunkFor(n, cluster, sizes));
    shape.register_rows = true;
    shape.kept_operands = 0;  // none kept (above): computed again where there are any
    shape.consumer_threads = layout.min_threads;
    while (heldRowRegisters(shape) > layout.max_held &&
           shape.consumer_threads + 128 <= layout.max_threads)
      shape.consumer_threads += 128;
    if (heldRowRegisters(shape) > layout.max_held) continue;
    if (rowTemplateSharedBytes(shape) > device.max_shared_memory_per_block_optin) {
      if (columns.staged)
        return planRegisterRows(program, m, n, device, {.contiguous = true, .staged = false},
                                layout);
      continue;
    }
    TmaWsNormalizationParams params = paramsOf(shape, 1, m, columns, device);
    params.recompute_operands = layout.recompute_operands ? 1 : 0;
    return params;
  }
  return std::nullopt;
}

// The plan for a program with column reductions (a norm's backward): whole rows per CTA where
// they fit (a cluster only where they do not), so no partials cross CTAs per row; each consumer
// thread holds the same few vectors of every row, whose column partials stay in its registers
// (at most kMaxColumnRegisters); as many CTAs per SM as registers allow, every one resident
// (the grid meets at a barrier to add up the column partials), then two stages per CTA where
// shared memory holds them, else one. Measured on an H200 (braze_tma_ws_sweep, benchmarks/
// RESULTS.md): two stages beat three and four by 1-3%; more CTAs per SM beat more stages
// (rows of 4096 bf16: four CTAs of two stages 1.03x three of four); whole rows of 16384 fp32 in
// one stage ran 1.25-1.37x a cluster of two in three stages (fewer clusters are resident).
constexpr int64_t kMaxColumnRegisters = 64;
constexpr int64_t kOtherRegisters = 56;  // a backward row program's own values

std::variant<TmaWsNormalizationParams, std::string> planColumnRows(
    const RowProgramShape& program, int64_t m, int64_t n, const driver::DeviceProperties& device,
    ColumnAccess columns) {
  const RowSizes sizes = rowSizesOf(program, columns.staged);
  const int64_t shared_per_sm = sharedPerSm(device);
  const int64_t registers_per_sm = device.registers_per_sm > 0 ? device.registers_per_sm : 65536;
  for (const int64_t cluster : {1, 2, 4, 8}) {
    RowTemplateShape shape = shapeFor(program, sizes, cluster, chunkFor(n, cluster, sizes));
    // About four vectors per thread, in whole warp quads (128 to 512 threads): the SM's four
    // schedulers split the registers by warps.
    const int64_t vectors = shape.chunk / sizes.vector;
    shape.consumer_threads = std::clamp<int64_t>((vectors / 4 + 127) / 128 * 128, 128, 512);
    const int64_t partials = columnPartialRegisters(shape);
    if (partials > kMaxColumnRegisters) continue;
    const int64_t threads = rowTemplateThreads(shape);
    const int64_t by_registers = registers_per_sm / ((kOtherRegisters + partials) * threads);
    struct Choice {
      int64_t stages = 0, ctas = 0;
    } best;
    for (int64_t ctas = std::min({by_registers, device.max_threads_per_sm / threads, int64_t{8}});
         ctas >= 1 && best.ctas == 0; --ctas) {
      for (const int64_t stages : {2, 1}) {
        shape.stages = stages;
        const int64_t bytes = rowTemplateSharedBytes(shape);
        if (bytes <= device.max_shared_memory_per_block_optin &&
            shared_per_sm / (bytes + kReservedSharedPerBlock) >= ctas) {
          best = {stages, ctas};
          break;
        }
      }
    }
    if (best.ctas == 0) continue;
    shape.stages = best.stages;
    return paramsOf(shape, best.ctas, m, columns, device);
  }
  if (columns.staged)
    return planColumnRows(program, m, n, device, {.contiguous = true, .staged = false});
  return "a row of " + std::to_string(n) + " elements (" +
         std::to_string(n * sizes.bytes_per_element) +
         " bytes of row inputs) does not fit 8 CTAs' shared memory with at most " +
         std::to_string(kMaxColumnRegisters) + " registers of column partials per thread";
}

// Whether every row input has 4-byte elements.
bool fourByteRows(const RowProgramShape& program) {
  return std::all_of(program.row_inputs.begin(), program.row_inputs.end(),
                     [](const TensorView* tv) { return sizeInBytes(tv->dtype()) == 4; });
}

std::variant<TmaWsNormalizationParams, std::string> planFor(const RowProgramShape& program,
                                                            int64_t m, int64_t n,
                                                            const driver::DeviceProperties& device,
                                                            ColumnAccess columns) {
  if (program.column_reductions > 0) return planColumnRows(program, m, n, device, columns);
  if (program.kept_operands > 0) {
    const RegisterRowLayout& layout =
        fourByteRows(program) ? kRecomputedRows : kWholeRecomputedRows;
    if (auto plan = planRegisterRows(program, m, n, device, columns, layout)) return *plan;
  }
  if (program.passes > 1 || !program.column_inputs.empty()) {
    if (auto plan = planRegisterRows(program, m, n, device, columns, kHeldRows)) return *plan;
  }
  return planRows(program, m, n, device, columns);
}

// Rows from which a forward program with several passes or weights runs faster with its rows in
// registers than on braze::inner_outer (planRegisterRows; measured on an H200 with rows of
// 65536 bf16, 128 KiB: 0.66 and 0.82 of copy against inner_outer's 0.66 and 0.83).
constexpr int64_t kMinRegisterRowBytes = 256 * 1024;
// Rows from which a program whose outputs read a costly operand again (softmax) runs faster here
// than on braze::inner_outer, whose rows of that length no longer fit registers and are read
// again from L2 in each pass. Measured on an H200 (braze_tma_ws_sweep --force against
// inner_outer through the executor cache; bf16 exponentials as braze::expNarrow): softmax bf16
// 65536 (128 KiB) 194 us from shared memory against 204, 262144 215 against 258; fp32 in
// registers (planRegisterRows, recomputed) 170 against 205 and 207 against 251.
constexpr int64_t kMinCostlyOperandRowBytes = 128 * 1024;
// Rows from which one pass over rows without weights (softmax backward) runs faster here. At 128
// KiB inner_outer still holds them in registers at copy speed: softmax backward fp32 16384 (two
// inputs) ran 204.6 us here against 188.6 there (H200, the side-by-side run and
// braze_inner_outer_sweep of the same session); from 256 KiB (bf16 65536) this kernel ran
// 0.93 of copy.
constexpr int64_t kMinSinglePassRowBytes = 256 * 1024;

std::optional<std::string> slowerThanInnerOuter(const RowProgramShape& program, int64_t m,
                                                int64_t n, const driver::DeviceProperties& device,
                                                ColumnAccess columns) {
  // Measured on an H200 (benchmarks/RESULTS.md, rows of 65536 and 262144, against
  // braze::inner_outer in the same run): one pass over rows without per-column inputs ran at
  // 0.81-0.93 of copy (softmax backward; inner_outer 0.61-0.80). Each further pass waits for
  // the cluster's partials (softmax and layer norm forward: 0.42-0.60, inner_outer 0.47-0.67),
  // and weights cost as much, read from L2 for every row or even copied once per CTA, which
  // leaves fewer CTAs per SM (RMS norm: 0.58-0.78 staged, 0.60-0.65 not, inner_outer 0.63-0.83).
  if (program.column_reductions > 0) return std::nullopt;
  const int64_t row_bytes = n * rowSizesOf(program, false).bytes_per_element;
  // Float rows stay on inner_outer: measured on an H200 in one run (braze_tma_ws_sweep --force
  // and braze_inner_outer_sweep, twice), rows in registers ran layer norm fp32 65536 in 208 us
  // against 198 and RMS norm fp32 65536 in 175 against 175, where 2-byte rows of 262144 ran
  // 222-225 against 232 (layer norm) and 172 against 192 (RMS norm).
  const bool four_byte_rows = fourByteRows(program);
  if ((program.passes > 1 || !program.column_inputs.empty()) && row_bytes >= kMinRegisterRowBytes &&
      !four_byte_rows && planRegisterRows(program, m, n, device, columns, kHeldRows))
    return std::nullopt;
  if (program.kept_operands > 0 && program.column_inputs.empty() &&
      row_bytes >= kMinCostlyOperandRowBytes)
    return std::nullopt;
  // Why rows in registers do not apply here, appended to the reasons below.
  const std::string registers =
      program.kept_operands > 0
          ? "; programs whose outputs read a costly operand again (softmax's exponentials) pay "
            "from " +
                std::to_string(kMinCostlyOperandRowBytes) + " bytes of row inputs per row (here " +
                std::to_string(row_bytes) + " bytes)"
      : four_byte_rows
          ? "; rows in registers pay for 2-byte rows only (layer norm fp32 65536 measured 208 "
            "us here against 198 on braze::inner_outer)"
          : "; rows in registers pay from " + std::to_string(kMinRegisterRowBytes) +
                " bytes of row inputs per row, where each thread's share fits " +
                std::to_string(kMaxHeldRegisters) + " registers (here " +
                std::to_string(row_bytes) + " bytes)";
  if (program.passes > 1)
    return "the fusion reduces its rows in " + std::to_string(program.passes) +
           " passes; with one exchange between CTAs per pass this kernel measured slower than "
           "braze::inner_outer's (0.42-0.60 of copy against 0.47-0.67)" +
           registers;
  if (!program.column_inputs.empty())
    return "input " + program.column_inputs.front()->name() +
           " is indexed along the columns only (a weight); with it " +
           (columns.staged ? std::string("copied into shared memory once per CTA")
                           : std::string("read again for every row")) +
           " this kernel measured slower than braze::inner_outer (RMS norm: 0.58-0.78 of copy "
           "against 0.63-0.83)" +
           registers;
  if (program.element_outputs.empty())
    return std::string(
        "the fusion stores only per-row results; the reduction scheduler streams "
        "such rows at copy speed");
  if (row_bytes < kMinSinglePassRowBytes)
    return "rows of " + std::to_string(row_bytes) + " bytes of row inputs in one pass; below " +
           std::to_string(kMinSinglePassRowBytes) +
           " braze::inner_outer holds them in registers at copy speed (softmax backward fp32 "
           "16384: 188.6 us there against 204.6 here)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  auto analyzed = analyzeRowProgram(fusion);
  if (auto* problem = std::get_if<std::string>(&analyzed)) return *problem;
  const RowProgramShape& program = std::get<RowProgramShape>(analyzed);
  if (program.reductions == 0)
    return std::string("the fusion reduces nothing; the pointwise scheduler runs it");
  for (const TensorView* tv : program.row_inputs) {
    const int64_t bytes = sizeInBytes(tv->dtype());
    if (bytes != 2 && bytes != 4)
      return "row input " + tv->name() + " has dtype " + std::string(toString(tv->dtype())) +
             "; the kernel stages 16- and 32-bit rows";
  }
  for (const TensorView* tv : program.element_outputs) {
    const int64_t bytes = sizeInBytes(tv->dtype());
    if (bytes != 2 && bytes != 4)
      return "output " + tv->name() + " has dtype " + std::string(toString(tv->dtype())) +
             "; the kernel stores 16- and 32-bit elements";
  }
  return std::nullopt;
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (info.device.arch.major < 9)
    return "bulk copies and thread block clusters need sm_90 or newer; the device is " +
           info.device.arch.toString();
  if (auto problem = argumentProblem(fusion, info.arguments)) return problem;
  const RowProgramShape program = rowProgramOf(fusion);
  const RowSizes sizes = rowSizesOf(program, false);
  const TensorArgumentInfo* reference =
      tensorArgumentOf(fusion, info.arguments, program.row_inputs.front());
  if (reference == nullptr || reference->sizes.size() != 2)
    return std::string("the first row input's argument is not a matrix");
  const int64_t m = reference->sizes[0];
  const int64_t n = reference->sizes[1];
  const ColumnAccess columns = columnAccessOf(fusion, info, program, n);
  if (m == 0 || n == 0) return std::string("an empty row input");
  if (program.column_reductions == 0 && n * sizes.bytes_per_element < kMinRowBytes)
    return "rows of " + std::to_string(n * sizes.bytes_per_element) + " bytes of row inputs; " +
           "below " + std::to_string(kMinRowBytes) +
           " braze::inner_outer holds rows in registers " + "at 90-99% of copy";
  if (program.column_reductions > 0 && n * sizes.bytes_per_element < kMinColumnRowBytes)
    return "rows of " + std::to_string(n * sizes.bytes_per_element) +
           " bytes of row inputs with sums over the rows; below " +
           std::to_string(kMinColumnRowBytes) +
           " braze::inner_outer measured faster (layer norm backward bf16 4096: 258 us against "
           "285; rows of 1024: 0.5-0.9x)";
  if (auto slower = slowerThanInnerOuter(program, m, n, info.device, columns)) return slower;
  if (n % sizes.unit != 0)
    return "rows of " + std::to_string(n) + " elements are not a multiple of " +
           std::to_string(sizes.unit) +
           " (16 bytes of every row input), which the copy engine moves";
  for (const TensorView* tv : program.row_inputs) {
    const size_t at = static_cast<size_t>(fusion.inputIndex(tv));
    const TensorArgumentInfo* values = tensorArgumentOf(fusion, info.arguments, tv);
    if (values == nullptr || values->sizes.size() != 2)
      return "input " + std::to_string(at) + " is not a matrix";
    if (values->strides[1] != 1)
      return "input " + std::to_string(at) + " (" + tv->name() + ") has stride " +
             std::to_string(values->strides[1]) +
             " along its rows; the kernel copies contiguous rows (" + values->description + ")";
    if (values->sizes[0] > 1 && (values->strides[0] * sizeInBytes(tv->dtype())) % kCopyBytes != 0)
      return "input " + std::to_string(at) + " (" + tv->name() + ") has a row stride of " +
             std::to_string(values->strides[0]) + " elements, not a multiple of 16 bytes (" +
             values->description + ")";
    if (vectorAlignment(info, at) < kCopyBytes)
      return "input " + std::to_string(at) + " (" + tv->name() +
             ") does not start on a 16-byte boundary";
  }
  auto plan = planFor(program, m, n, info.device, columns);
  if (auto* problem = std::get_if<std::string>(&plan)) return *problem;
  return std::nullopt;
}

TmaWsNormalizationParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  const RowProgramShape program = rowProgramOf(fusion);
  const TensorArgumentInfo* reference =
      tensorArgumentOf(fusion, info.arguments, program.row_inputs.front());
  BRAZE_USER_CHECK(reference != nullptr && reference->sizes.size() == 2)
      << "tma_ws_normalization: computeHeuristics without a matrix row input";
  const int64_t n = reference->sizes[1];
  auto plan = planFor(program, reference->sizes[0], n, info.device,
                      columnAccessOf(fusion, info, program, n));
  BRAZE_USER_CHECK(std::holds_alternative<TmaWsNormalizationParams>(plan))
      << "tma_ws_normalization: " << std::get<std::string>(plan);
  return std::get<TmaWsNormalizationParams>(plan);
}

void schedule(Fusion& fusion, const TmaWsNormalizationParams& params) {
  // Softmax's division by its row sum becomes one reciprocal per row (a row value) and a
  // product per element: an IEEE division is about ten instructions.
  multiplyByBroadcastReciprocals(fusion);
  const RowProgramShape program = rowProgramOf(fusion);
  const RowSizes sizes = rowSizesOf(program, params.staged_columns != 0);
  BRAZE_USER_CHECK(params.staged_columns == 0 || params.contiguous_columns != 0)
      << "tma_ws_normalization: staged_columns = 1 needs contiguous_columns = 1";
  BRAZE_USER_CHECK(params.cluster == 1 || params.cluster == 2 || params.cluster == 4 ||
                   params.cluster == 8 || params.cluster == 16)
      << "tma_ws_normalization: a cluster of " << params.cluster
      << " CTAs; 1, 2, 4, 8 or 16 (16 where the device runs it)";
  BRAZE_USER_CHECK(params.vector >= 1 && sizes.unit % params.vector == 0)
      << "tma_ws_normalization: vector = " << params.vector << " must divide " << sizes.unit
      << ", the elements of 16 bytes of the narrowest row input";
  BRAZE_USER_CHECK(params.stages >= 1 && params.stages <= 4)
      << "tma_ws_normalization: " << params.stages << " stages; 1 to 4";
  BRAZE_USER_CHECK(program.column_reductions == 0 || params.clusters > 0)
      << "tma_ws_normalization: the fusion reduces over its rows, so its grid must be resident "
         "at once (clusters > 0, at most what the device holds), not one cluster per row";
  BRAZE_USER_CHECK(params.pieces >= 1 && params.pieces <= 16)
      << "tma_ws_normalization: " << params.pieces << " pieces; 1 to 16";
  BRAZE_USER_CHECK(params.clusters >= 0)
      << "tma_ws_normalization: clusters = " << params.clusters << "; 0 (one per row) or more";
  BRAZE_USER_CHECK(params.min_blocks_per_sm >= 1 && params.min_blocks_per_sm <= 8)
      << "tma_ws_normalization: min_blocks_per_sm = " << params.min_blocks_per_sm << "; 1 to 8";
  RowTemplateShape shape = shapeFor(program, sizes, params.cluster, params.chunk);
  shape.consumer_threads = params.consumer_threads;
  shape.pieces = params.pieces;
  shape.stages = params.stages;
  shape.min_blocks_per_sm = params.min_blocks_per_sm;
  shape.vector = params.vector;
  shape.register_rows = params.register_rows != 0;
  BRAZE_USER_CHECK(params.recompute_operands == 0 || params.recompute_operands == 1)
      << "tma_ws_normalization: recompute_operands = " << params.recompute_operands
      << "; 0 (keep them in registers) or 1 (compute them again)";
  const bool keep_operands = shape.register_rows && params.recompute_operands == 0;
  if (!keep_operands) shape.kept_operands = 0;
  BRAZE_USER_CHECK(params.register_rows == 0 || program.column_reductions == 0)
      << "tma_ws_normalization: register_rows = 1 with sums over the rows; their partials take "
         "the registers (register_rows = 0)";
  BRAZE_USER_CHECK(heldRowRegisters(shape) <= 128)
      << "tma_ws_normalization: " << heldRowRegisters(shape)
      << " registers of row vectors per thread (chunk " << params.chunk << ", "
      << params.consumer_threads
      << " consumer threads); at most 128: more threads, a larger cluster or register_rows = 0";
  BRAZE_USER_CHECK(columnPartialRegisters(shape) <= 128)
      << "tma_ws_normalization: " << columnPartialRegisters(shape)
      << " column partials per thread (chunk " << params.chunk << ", " << params.consumer_threads
      << " consumer threads); at most 128 registers' worth: more threads or a larger cluster";

  KernelTemplate kernel;
  kernel.source = rowTemplateSource(shape);
  kernel.row_program =
      KernelTemplate::RowProgram{.vector = params.vector,
                                 .contiguous_columns = params.contiguous_columns != 0,
                                 .staged_columns = params.staged_columns != 0,
                                 .keep_reduction_operands = keep_operands};
  IterDomain* rows = program.row_inputs.front()->axis(0);
  IterDomain* columns = program.row_inputs.front()->axis(1);
  Val* clusters = params.clusters == 0
                      ? rows->extent()
                      : minimum(rows->extent(), fusion.constantIndex(params.clusters));
  kernel.grid[0] = mul(clusters, fusion.constantIndex(params.cluster));
  if (program.column_reductions > 0) {
    // Partials of every cluster for every column, after the barrier's counters; the grid meets
    // at a barrier, so it is launched cooperatively (the driver refuses it if not resident).
    kernel.row_program->workspace_bytes =
        columnWorkspaceBytes(fusion, shape, clusters, columns->extent());
    fusion.setCooperativeLaunch(true);
  }
  kernel.block[0] = fusion.constantIndex(rowTemplateThreads(shape));
  kernel.cluster = {params.cluster, 1, 1};
  kernel.dynamic_shared_memory_bytes = fusion.constantIndex(rowTemplateSharedBytes(shape));
  kernel.launch_checks.emplace_back(
      eq(remainder(columns->extent(), sizes.unit), int64_t{0}),
      "the rows' length is not a multiple of " + std::to_string(sizes.unit) +
          " elements (16 bytes of every row input), which the kernel's bulk copies need; "
          "schedule with another scheduler");
  kernel.launch_checks.emplace_back(le(ceil_div(columns->extent(), params.cluster), params.chunk),
                                    "the rows are longer than " + std::to_string(params.cluster) +
                                        " chunks of " + std::to_string(params.chunk) +
                                        " elements, what the kernel was scheduled for");
  fusion.setKernelTemplate(std::move(kernel));
}

}  // namespace braze::tma_ws_normalization
