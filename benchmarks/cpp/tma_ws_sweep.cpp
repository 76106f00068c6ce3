// A sweep of braze::tma_ws_normalization's kernel shapes around its heuristics (variant_sweep.h
// has the harness and the options): clusters, consumer threads, stages and CTAs per SM, for any
// normalization case the plugin takes, however it ranks against braze::inner_outer.
//
//   braze_tma_ws_sweep [--filter=REGEX] [--variants=REGEX] [--set=FIELD=V,...]
//                      [--input_mib=MIB] [--jobs=N] [--compile_only] [--print_source]
//
// The --filter REGEX matches "<op>/<dtype>/<N>" (default: norm backward, rows of 4096 to 16384).

#include "tma_ws_normalization_scheduler.h"
#include "variant_sweep.h"

namespace braze::bench {
namespace {

using TwsParams = tma_ws_normalization::TmaWsNormalizationParams;

// Stages and CTAs per SM around the heuristics' (CTAs only where the registers and shared
// memory of the others allow them; the plugin's schedule checks the rest).
std::vector<SweepVariant<TwsParams>> variantsOf(const TwsParams& chosen) {
  std::vector<SweepVariant<TwsParams>> variants;
  for (const int64_t stages : {1, 2, 3, 4}) {
    for (const int64_t ctas :
         {chosen.min_blocks_per_sm - 1, chosen.min_blocks_per_sm, chosen.min_blocks_per_sm + 1}) {
      if (ctas < 1) continue;
      TwsParams p = chosen;
      p.stages = stages;
      p.min_blocks_per_sm = ctas;
      p.clusters = chosen.clusters / chosen.min_blocks_per_sm * ctas;
      if (p != chosen) variants.push_back({p});
    }
  }
  return variants;
}

}  // namespace
}  // namespace braze::bench

int main(int argc, char** argv) {
  namespace tws = braze::tma_ws_normalization;
  const braze::bench::SweptScheduler<braze::bench::TwsParams> scheduler{
      .tool = "braze_tma_ws_sweep",
      .default_filter = "(layer_norm_bwd|rms_norm_bwd)/(bf16|fp32)/(4096|8192|16384)$",
      .takes = [](const braze::bench::OpInfo&) { return true; },
      .refusal =
          [](const braze::Fusion& fusion, const braze::SchedulerRuntimeInfo& info) {
            if (auto problem = tws::canScheduleCompileTime(fusion)) return problem;
            return tws::canScheduleRunTime(fusion, info);
          },
      .heuristics = tws::computeHeuristics,
      .variants = braze::bench::variantsOf,
      .schedule = [](braze::Fusion& fusion,
                     const braze::bench::TwsParams& params) { tws::schedule(fusion, params); },
      .print = [](const braze::bench::TwsParams& params) { return tws::toString(params); },
  };
  return braze::bench::runSweep(argc, argv, scheduler);
}
