// Barriers between writes and reads of shared memory by other threads, and before shared
// memory is overwritten by the next iteration of a loop.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(InsertSyncsTest, SharedTileIsSynchronizedBetweenWriteAndRead) {
  auto fusion = test::findScheduledCase("transpose_shared").build();
  const std::string ir = printKernelIr(lowerFusion(*fusion));
  const size_t write = ir.find("T2[tidx + tidy * 32] = set(");
  const size_t sync = ir.find("__syncthreads()  // read after write");
  const size_t read = ir.find("permute(T2[");
  ASSERT_NE(sync, std::string::npos) << ir;
  EXPECT_LT(write, sync);
  EXPECT_LT(sync, read);
  EXPECT_EQ(count(ir, "__syncthreads()"), 1u) << ir;
}

TEST(InsertSyncsTest, SharedMemoryReusedByALoopIsSynchronizedBeforeTheNextIteration) {
  // Each iteration of the serial outer loop writes a row to shared memory that TIDx threads
  // read reversed.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 64}});
  TensorView* out = neg(x);
  fusion.addOutput(out);
  TensorView* row = x->cacheAfter();
  row->setMemoryType(MemoryType::Shared);
  out->parallelize(1, ParallelType::TIDx);
  row->parallelize(1, ParallelType::TIDx);
  // Reading another thread's element: the cache's TIDx axis is the reversed one.
  row->split(1, 32);
  row->parallelize(1, ParallelType::Serial);
  row->merge(1, 2);
  row->parallelize(1, ParallelType::TIDx);
  inlineAt(row, 1);
  const std::string ir = printKernelIr(lowerFusion(fusion));
  EXPECT_NE(ir.find("__syncthreads()  // read after write"), std::string::npos) << ir;
  EXPECT_NE(ir.find("__syncthreads()  // next iteration"), std::string::npos) << ir;
}

TEST(InsertSyncsTest, RegistersNeedNoBarrier) {
  auto fusion = test::findScheduledCase("softmax").build();
  const std::string ir = printKernelIr(lowerFusion(*fusion));
  EXPECT_EQ(ir.find("__syncthreads()"), std::string::npos) << ir;
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

TEST(InsertSyncsTest, AnOutputReadBackByTheThreadThatWroteItNeedsNoBarrier) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion.addOutput(y);
  fusion.addOutput(z);
  for (TensorView* tv : {y, z}) {
    tv->split(0, 128);
    tv->parallelize(0, ParallelType::BIDx);
    tv->parallelize(1, ParallelType::TIDx);
  }
  const std::string ir = printKernelIr(lowerFusion(fusion));
  EXPECT_EQ(ir.find("__syncthreads()"), std::string::npos) << ir;
}

TEST(InsertSyncsTest, AnOutputReadBackByOtherThreadsIsSynchronized) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {32, 32}});
  TensorView* y = exp(x);
  TensorView* z = transpose(y, 0, 1);
  fusion.addOutput(y);
  fusion.addOutput(z);
  for (TensorView* tv : {y, z}) {
    tv->parallelize(0, ParallelType::TIDy);
    tv->parallelize(1, ParallelType::TIDx);
  }
  const std::string ir = printKernelIr(lowerFusion(fusion));
  EXPECT_NE(ir.find("__syncthreads()  // read after write"), std::string::npos) << ir;
}

}  // namespace
}  // namespace braze
