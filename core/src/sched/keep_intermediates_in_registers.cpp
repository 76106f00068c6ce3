#include "braze/sched/keep_intermediates_in_registers.h"

#include "braze/ir/tensor_view.h"

namespace braze {

void keepIntermediatesInRegisters(Fusion& fusion) {
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv) || fusion.isOutput(tv)) continue;
    tv->setMemoryType(MemoryType::Local);
  }
}

}  // namespace braze
