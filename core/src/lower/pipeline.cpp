// The lowering pipeline: the passes from a scheduled fusion to kernel IR, in order, with the
// reason for each position. lowerFusion() runs this table; options can print the IR after a
// pass or skip one.

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "lower/passes.h"
#include "lower/verify_kernel.h"

namespace braze {

namespace {

using lower::LowerContext;

struct PassEntry {
  std::string_view name;
  kir::Kernel (*run)(kir::Kernel, const LowerContext&);
  std::string_view why;
};

constexpr PassEntry kPipeline[] = {
    {"build-loop-nests", lower::buildLoopNests, "first: every later pass works on the loop nests"},
    {"allocate", lower::allocate, "needs the loops a tensor's inline position places it in"},
    {"index-accesses", lower::indexAccesses, "needs the loops and allocation layouts"},
    {"insert-predicates", lower::insertPredicates, "needs each statement's final loop nest"},
    {"hoist-parallel-reductions", lower::hoistParallelReductions,
     "after predicates: moves them onto the serial part it splits off"},
    {"vectorize-accesses", lower::vectorizeAccesses,
     "after predicates: folds a vector loop's predicate into one check"},
    {"unswitch", lower::unswitch, "after predicates and vectorization: hoists what is left"},
    {"issue-loads-early", lower::issueLoadsEarly,
     "after unswitch: moves final statements; before syncs, which see their order"},
    {"group-block-reductions", lower::groupBlockReductions,
     "after the statements have moved; before syncs: it moves reductions next to each other"},
    {"insert-syncs", lower::insertSyncs, "late: sees the final statements and their order"},
    {"record-launch-checks", lower::recordLaunchChecks, "last: the parameters are final"},
};

bool listed(const std::vector<std::string>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n == name || n == "all"; });
}

// A block whose size the schedule fixes must fit the bounds the scheduler stated: the kernel
// would be compiled for fewer threads than every launch has.
void checkLaunchBounds(const kir::Kernel& kernel) {
  if (!kernel.launch_bounds) return;
  const std::optional<int64_t> constant = kir::constantBlockThreads(kernel);
  if (!constant) return;  // known at launch only: the executor checks it then
  const int64_t threads = *constant;
  const LaunchBounds& bounds = *kernel.launch_bounds;
  BRAZE_USER_CHECK(threads <= bounds.max_threads_per_block)
      << "lowering: the schedule gives every block " << threads
      << " threads, but the fusion's launch bounds allow at most " << bounds.max_threads_per_block
      << " (setLaunchBounds(" << bounds.max_threads_per_block << ", " << bounds.min_blocks_per_sm
      << ")); state a bound of at least " << threads << " threads or schedule smaller blocks";
}

// Each extent the kernel is compiled for (Fusion::assumeExtent) is checked at launch: launch
// sizes that follow from it are constants of the kernel (lower_context.cpp).
void checkAssumedExtents(kir::Kernel& kernel, const Fusion& scheduled) {
  for (const auto& [extent, value] : scheduled.assumedExtents()) {
    kernel.launch_checks.emplace_back(
        eq(Operand(extent), value),
        "the kernel was compiled for " + extent->name() + " = " + std::to_string(value) +
            " (Fusion::assumeExtent: its block follows from it), but these inputs have another; "
            "they need a schedule of their own");
  }
}

}  // namespace

std::vector<std::string_view> pipelinePassNames() {
  std::vector<std::string_view> names;
  for (const PassEntry& entry : kPipeline) names.push_back(entry.name);
  return names;
}

std::string printPipeline() {
  std::ostringstream os;
  for (const PassEntry& entry : kPipeline) os << entry.name << "  // " << entry.why << "\n";
  return os.str();
}

kir::Kernel lowerFusion(const Fusion& scheduled, const LowerOptions& options) {
  for (const std::string& name : options.skip_passes) {
    const std::vector<std::string_view> names = pipelinePassNames();
    BRAZE_USER_CHECK(std::find(names.begin(), names.end(), name) != names.end())
        << "lowering: there is no pass named '" << name << "' to skip; the passes are:\n"
        << printPipeline();
  }
  // Lowering adds only scalar Vals (launch sizes and checks) to the fusion; the schedule and
  // the math stay as they are.
  Fusion& mutable_fusion = const_cast<Fusion&>(scheduled);
  const LowerContext ctx(scheduled, mutable_fusion, options);
  std::ostream& dump = options.dump_stream != nullptr ? *options.dump_stream : std::cerr;

  kir::Kernel kernel;
  kernel.fusion = &scheduled;
  kernel.parameters = ctx.parameters();
  kernel.launch = ctx.launch();
  kernel.index_type = options.index_type;
  kernel.scalar_names = ctx.scalarNames();
  kernel.launch_bounds = scheduled.launchBounds();
  kernel.cooperative = scheduled.cooperativeLaunch();
  checkLaunchBounds(kernel);
  checkAssumedExtents(kernel, scheduled);
#ifdef NDEBUG
  const bool verify = options.verify;
#else
  const bool verify = true;
#endif
  bool indexed = false;
  for (const PassEntry& entry : kPipeline) {
    // From its position on, every access must have an offset, even if the pass was skipped.
    indexed = indexed || entry.name == "index-accesses";
    if (std::find(options.skip_passes.begin(), options.skip_passes.end(), entry.name) !=
        options.skip_passes.end())
      continue;
    kernel = entry.run(std::move(kernel), ctx);
    if (verify) lower::verifyKernel(kernel, ctx, entry.name, indexed);
    if (listed(options.print_after, entry.name)) {
      dump << "=== kernel IR after " << entry.name << " ===\n" << printKernelIr(kernel);
    }
  }
  if (options.dump_lowering) dump << "=== kernel IR ===\n" << printKernelIr(kernel);
  return kernel;
}

}  // namespace braze
