// Offsets of every access: through splits and merges to logical indices, real strides of
// inputs, contiguous dims folded, broadcast dims dropped, registers indexed by their own axes.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::throwsError;

std::string lowered(const Fusion& fusion) {
  return printKernelIr(lowerFusion(fusion));
}

TEST(IndexAccessesTest, UnscheduledTensorsAreIndexedByTheirLogicalLoops) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(add(x, broadcast(bias, {true, false})));
  const std::string ir = lowered(fusion);
  // The broadcast buffer T2 [1, n] is indexed by its one real dim; x is contiguous.
  EXPECT_NE(ir.find("T3[i1 * T0.size[1] + i2] = add(T0[i1 * T0.size[1] + i2], T2[i2])"),
            std::string::npos)
      << ir;
}

TEST(IndexAccessesTest, MergedContiguousDimsAreOneIndex) {
  const std::string ir = lowered(*test::findScheduledCase("pointwise_broadcast").build());
  // x is read at the merged index; bias through the inner dim of the merge.
  EXPECT_NE(ir.find("broadcast(T1[(bidx * 128 + tidx) % T0.size[1]])"), std::string::npos) << ir;
  EXPECT_NE(ir.find("add(T0[bidx * 128 + tidx], T2[0])"), std::string::npos) << ir;
}

TEST(IndexAccessesTest, NonContiguousInputsUseTheirStrides) {
  const std::string ir = lowered(*test::findScheduledCase("noncontiguous_inputs").build());
  // Row-padded: the row stride is read at run time. Column-major: dim 0 has stride 1.
  EXPECT_NE(ir.find("T0[(bidx * 128 + tidx) % T0.size[1] + ((bidx * 128 + tidx) / T0.size[1]) * "
                    "T0.stride[0]]"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("T1[((bidx * 128 + tidx) % T0.size[1]) * T0.size[0] + (bidx * 128 + tidx) / "
                    "T0.size[1]]"),
            std::string::npos)
      << ir;
}

TEST(IndexAccessesTest, SharedTileIsWrittenAndReadTransposed) {
  const std::string ir = lowered(*test::findScheduledCase("transpose_shared").build());
  EXPECT_NE(ir.find("T2[tidx + tidy * 32] = set("), std::string::npos) << ir;
  EXPECT_NE(ir.find("= permute(T2[tidx * 32 + tidy])"), std::string::npos) << ir;
}

TEST(IndexAccessesTest, RegistersReadAcrossThreadsAreRefused) {
  // y is in registers with its dims on (TIDx, serial); its consumer transposes, so thread t
  // would need the registers of other threads.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {32, 32}});
  TensorView* y = exp(x);
  TensorView* out = transpose(y, 0, 1);
  fusion.addOutput(out);
  y->setMemoryType(MemoryType::Local);
  y->parallelize(0, ParallelType::TIDx);
  out->parallelize(0, ParallelType::TIDx);
  EXPECT_TRUE(throwsError([&] { lowerFusion(fusion); },
                          {"T1 is in local memory but T2 reads it across TIDx", "T1 axis 0",
                           "put it in shared memory"}));
}

TEST(IndexAccessesTest, GlobalIntermediatesReadByOtherBlocksAreRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {256}});
  TensorView* y = exp(x);
  TensorView* out = neg(y);
  fusion.addOutput(out);
  out->split(0, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  EXPECT_TRUE(throwsError(
      [&] { lowerFusion(fusion); },
      {"T1 is written to global memory by this kernel", "T2 reads it from other blocks", "BIDx"}));
}

}  // namespace
}  // namespace braze
