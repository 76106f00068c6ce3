#include "braze/runtime/prepare_for_scheduling.h"

#include <vector>

#include "braze/error.h"
#include "braze/host/stream_stages.h"
#include "braze/ir/broadcast_reductions.h"
#include "braze/ir/output_aliases.h"
#include "braze/ir/redundant_expands.h"
#include "braze/ir/scatter_as_matches.h"
#include "braze/ir/sharding.h"
#include "braze/ir/stream_axes.h"
#include "braze/ir/welford_as_sums.h"
#include "runtime/extent_equalities.h"

namespace braze {

int64_t prepareForScheduling(Fusion& fusion,
                             std::span<const std::pair<const Val*, const Val*>> equal_extents) {
  const std::vector<TensorView*> meshed = takeShardings(fusion);
  BRAZE_USER_CHECK(meshed.empty())
      << "the fusion places " << meshed.front()->name() << " on "
      << meshed.front()->sharding()->toString()
      << ": a sharded fusion runs on MultiDeviceExecutor (from Python, fd.execute takes it "
         "there), one process per device; leave the device meshes out to run it on one GPU";
  takeStreamAxes(fusion);
  const int64_t first_new_statement = fusion.numStatements();
  int64_t rewrites = bypassRedundantExpands(fusion, equal_extents);
  // Before the squeezes: a scatter of one position per row reduces over a dim of one.
  rewrites += scattersAsMatches(fusion);
  rewrites += welfordAsSums(fusion);
  rewrites += reductionsOverBroadcastsAsSqueezes(fusion);
  // Last: whether an output can be written in place depends on the fusion as it will run.
  rewrites += copyUnsafeAliasedOutputs(fusion);
  host::streamRewrittenProducers(fusion, first_new_statement);
  return rewrites;
}

std::unique_ptr<Fusion> prepareCopyForScheduling(const Fusion& fusion) {
  std::unique_ptr<Fusion> copy = fusion.clone();
  // Collected on the copy before it changes, as the executor cache does, so that an expand
  // bypassed there is bypassed here too.
  std::vector<std::pair<const Val*, const Val*>> equal_extents;
  for (const runtime_detail::ExtentEquality& equality :
       runtime_detail::collectExtentEqualities(*copy))
    equal_extents.emplace_back(equality.a, equality.b);
  prepareForScheduling(*copy, equal_extents);
  return copy;
}

}  // namespace braze
