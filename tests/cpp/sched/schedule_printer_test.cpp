// printSchedule: deterministic text of domains, transforms, parallel types and positions.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/schedule_printer.h"
#include "braze/sched/transform_propagation.h"

namespace braze {
namespace {

TEST(SchedulePrinterTest, ReductionWithRFactor) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* s = sum(e, {1});
  fusion.addOutput(s);
  s->split(1, 4)->parallelize(2, ParallelType::TIDx)->parallelize(0, ParallelType::BIDx);
  propagateTransforms(s);
  propagateParallelTypes(s);
  s->rFactor({1});
  e->setMemoryType(MemoryType::Local);
  inlineMost(fusion);
  EXPECT_EQ(printSchedule(fusion),
            "schedule:\n"
            "  T0: float32 = input 0  memory=global inline=0\n"
            "    logical [i0{s0}:BIDx, i1{s1}]\n"
            "    loop    [i0{s0}:BIDx, i10{ceil_div(s1, 4)}, i11{4}:TIDx]\n"
            "      split i1 by 4 -> i10, i11\n"
            "  T1: float32 = exp(T0)  memory=local inline=3\n"
            "    logical [i2{s0}:BIDx, i3{s1}]\n"
            "    loop    [i2{s0}:BIDx, i8{ceil_div(s1, 4)}, i9{4}:TIDx]\n"
            "      split i3 by 4 -> i8, i9\n"
            "  T3: float32 = sum(T1)  memory=local inline=1\n"
            "    root    [i12{s0}:BIDx, r13{s1}]\n"
            "    logical [i12{s0}:BIDx, r14{ceil_div(s1, 4)}, i15{4}:TIDx]\n"
            "      split r13 by 4 -> r14, i15\n"
            "    loop    [i12{s0}:BIDx, r14{ceil_div(s1, 4)}, i15{4}:TIDx]\n"
            "  T2: float32 = sum(T3) output  memory=global inline=1\n"
            "    logical [i4{s0}:BIDx, r16{4}:TIDx]\n"
            "    loop    [i4{s0}:BIDx, r16{4}:TIDx]\n");
}

TEST(SchedulePrinterTest, MergesOuterSplitsAndBroadcasts) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 1}});
  TensorView* y = expand(x, {int64_t{-1}, int64_t{6}});
  fusion.addOutput(y);
  y->merge(0)->split(0, 2, /*inner_split=*/false)->parallelize(1, ParallelType::Unroll);
  EXPECT_EQ(printSchedule(y),
            "  T1: float32 = expand(T0) output  memory=global inline=0\n"
            "    logical [i2{s0}, b3{1 ex 6}]\n"
            "    loop    [i5{2}, i6{ceil_div(mul(s0, 6), 2)}:Unroll]\n"
            "      merge i2, b3 -> i4\n"
            "      split outer i4 by 2 -> i5, i6\n");
}

}  // namespace
}  // namespace braze
