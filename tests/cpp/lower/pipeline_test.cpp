// The pass table: its order, its self-description, dumps after a pass and skipping one.

#include <sstream>

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

// out = x * 2 over a symbolic 1-D x, split by 128 onto blocks and threads.
std::unique_ptr<Fusion> splitPointwise() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* out = mul(x, 2.0);
  fusion->addOutput(out);
  out->split(0, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  return fusion;
}

TEST(PipelineTest, PassesRunInTheDocumentedOrder) {
  const std::vector<std::string_view> expected = {"build-loop-nests",
                                                  "allocate",
                                                  "index-accesses",
                                                  "insert-predicates",
                                                  "hoist-parallel-reductions",
                                                  "vectorize-accesses",
                                                  "unswitch",
                                                  "issue-loads-early",
                                                  "group-block-reductions",
                                                  "insert-syncs",
                                                  "record-launch-checks"};
  EXPECT_EQ(pipelinePassNames(), expected);
}

TEST(PipelineTest, PrintsItselfWithTheReasonForEachPosition) {
  const std::string text = printPipeline();
  size_t last = 0;
  for (std::string_view name : pipelinePassNames()) {
    const size_t at = text.find(std::string(name) + "  // ");
    ASSERT_NE(at, std::string::npos) << name << " missing from\n" << text;
    EXPECT_GE(at, last) << name << " out of order";
    last = at;
  }
}

TEST(PipelineTest, PrintsTheIrAfterANamedPass) {
  auto fusion = splitPointwise();
  std::ostringstream dump;
  LowerOptions options;
  options.print_after = {"build-loop-nests", "insert-predicates"};
  options.dump_stream = &dump;
  lowerFusion(*fusion, options);
  const std::string text = dump.str();
  EXPECT_NE(text.find("=== kernel IR after build-loop-nests ===\n"), std::string::npos) << text;
  EXPECT_NE(text.find("=== kernel IR after insert-predicates ===\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("after allocate"), std::string::npos) << text;
  // Before indexing, accesses have no offsets yet; after, they do.
  EXPECT_NE(text.find("T1[?] = mul(T0[?], 2.0)"), std::string::npos) << text;
  EXPECT_NE(text.find("T1[bidx * 128 + tidx] = mul(T0[bidx * 128 + tidx], 2.0)"), std::string::npos)
      << text;
}

TEST(PipelineTest, AllPrintsAfterEveryPass) {
  auto fusion = splitPointwise();
  std::ostringstream dump;
  LowerOptions options;
  options.print_after = {"all"};
  options.dump_stream = &dump;
  lowerFusion(*fusion, options);
  for (std::string_view name : pipelinePassNames()) {
    EXPECT_NE(dump.str().find("after " + std::string(name) + " ==="), std::string::npos) << name;
  }
}

TEST(PipelineTest, DumpLoweringPrintsTheFinalIr) {
  auto fusion = splitPointwise();
  std::ostringstream dump;
  LowerOptions options;
  options.dump_lowering = true;
  options.dump_stream = &dump;
  const kir::Kernel kernel = lowerFusion(*fusion, options);
  EXPECT_EQ(dump.str(), "=== kernel IR ===\n" + printKernelIr(kernel));
  EXPECT_NE(dump.str().find("launch TIDx = 128"), std::string::npos) << dump.str();
}

TEST(PipelineTest, SkippingAPassLeavesItsWorkUndone) {
  auto fusion = splitPointwise();
  LowerOptions options;
  const std::string with = printKernelIr(lowerFusion(*fusion, options));
  options.skip_passes = {"insert-predicates"};
  const std::string without = printKernelIr(lowerFusion(*fusion, options));
  EXPECT_NE(with.find("if bidx * 128 + tidx < T0.size[0]:"), std::string::npos) << with;
  EXPECT_EQ(without.find("if "), std::string::npos) << without;
}

TEST(PipelineTest, SkippingAnUnknownPassIsAnError) {
  auto fusion = splitPointwise();
  LowerOptions options;
  options.skip_passes = {"insert-predicate"};
  EXPECT_TRUE(throwsError([&] { lowerFusion(*fusion, options); },
                          {"no pass named 'insert-predicate'", "insert-predicates  //"}));
}

TEST(PipelineTest, Int32IndexingRecordsLaunchChecksAndInt64DoesNot) {
  auto fusion = splitPointwise();
  const GeneratedKernel narrow = generateCuda(*fusion);
  EXPECT_EQ(narrow.index_type, DataType::Int32);
  EXPECT_NE(narrow.source.find("using IndexT = int;"), std::string::npos);
  ASSERT_EQ(narrow.launch_checks.size(), 2u);  // T0 and T1
  EXPECT_NE(narrow.launch_checks[0].second.find("fewer than 2^31 elements"), std::string::npos);
  const GeneratedKernel wide = generateCuda(*fusion, {.index_type = DataType::Int64});
  EXPECT_EQ(wide.index_type, DataType::Int64);
  EXPECT_NE(wide.source.find("using IndexT = long long;"), std::string::npos);
  EXPECT_TRUE(wide.launch_checks.empty());
  EXPECT_NE(narrow.kernel_name, wide.kernel_name);
}

TEST(PipelineTest, IndexTypeMustBeAnInteger) {
  auto fusion = splitPointwise();
  EXPECT_TRUE(throwsError([&] { lowerFusion(*fusion, {.index_type = DataType::Float32}); },
                          {"index type must be int32 or int64", "float32"}));
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

TEST(PipelineTest, VerifierNamesThePassThatBrokeAnInvariant) {
  // Without indexing, accesses reach later passes with no offsets.
  auto fusion = splitPointwise();
  LowerOptions options;
  options.verify = true;
  options.skip_passes = {"index-accesses"};
  EXPECT_TRUE(test::throwsError(
      [&] { lowerFusion(*fusion, options); },
      {"kernel IR after insert-predicates", "is accessed without an offset", "please report"}));
}

}  // namespace
}  // namespace braze
