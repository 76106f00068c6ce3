// SegmentedFusion::toString (what BRAZE_DUMP=segments prints) and toDot.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/segment/segmented_fusion.h"
#include "braze/segment/segmented_fusion_dot.h"
#include "segment/segment_test_fusions.h"
#include "support/structural_segment_checker.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

// sum over rows, broadcast back, scale, sum over columns: two segments.
SegmentedFusion twoSegments(const Fusion& fusion) {
  test::StructuralSegmentChecker checker;
  return segmentFusion(fusion, checker);
}

TEST(SegmentedFusionPrintTest, ToStringShowsWhereInputsAndOutputsLiveAndTheMath) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("reduce_broadcast_reduce").make();
  EXPECT_EQ(twoSegments(*fusion).toString(),
            "segmented fusion: 2 segments\n"
            "segment 0: fake::reduction\n"
            "  inputs:\n"
            "    T0 is T0 (fusion input 0)\n"
            "  outputs:\n"
            "    T2 is T2\n"
            "  fusion(T0: float32[i0{s0}, i1{s1}]) -> (T2)\n"
            "    T1: float32[i2{s0}, r3{s1}] = sum(T0, axes=[1])\n"
            "    T2: float32[i4{s0}, b5{1}] = broadcast(T1, flags=[false, true])\n"
            "segment 1: fake::reduction\n"
            "  inputs:\n"
            "    T0 is T0 (fusion input 0)\n"
            "    T1 is T2 (segment 0)\n"
            "  outputs:\n"
            "    T3 is T4 (fusion output 0)\n"
            "  fusion(T0: float32[i0{s0}, i1{s1}], T1: float32[i2{s0}, b3{1}]) -> (T3)\n"
            "    T2: float32[i4{s0}, i5{s1}] = mul(T0, T1)\n"
            "    T3: float32[r6{s0}, i7{s1}] = sum(T2, axes=[0])\n");
}

TEST(SegmentedFusionPrintTest, ToStringNamesExtentsPassedAsScalars) {
  // The expand of exp(x) to y's columns, alone: y's extent s2 is a scalar input.
  const std::unique_ptr<Fusion> fusion = test::segmentCase("expand").make();
  std::vector<const Expr*> chain;
  for (const Expr* e = fusion->outputs()[0]->definition(); e; e = e->input(0)->definition())
    chain.push_back(e);
  SegmentedFusion segmented;
  segmented.original = fusion.get();
  segmented.segments.push_back(extractSegment(*fusion, chain));
  EXPECT_THAT(segmented.toString(), HasSubstr("  inputs:\n"
                                              "    T0 is T0 (fusion input 0)\n"
                                              "    s1 is s2 (evaluated on the original)\n"
                                              "  outputs:\n"
                                              "    T4 is T5 (fusion output 0)\n"
                                              "    T3 is T4\n"));
}

TEST(SegmentedFusionDotTest, OneNodePerSegmentInputAndOutputAndAnEdgePerTensor) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("reduce_broadcast_reduce").make();
  DotAnnotations annotations;
  annotations.segment_lines = [](const Segment& segment) {
    return std::vector<std::string>{"params \"" + std::to_string(segment.id) + "\""};
  };
  annotations.tensor_bytes = [](const TensorView& tv) -> std::optional<int64_t> {
    if (tv.name() == "T0") return int64_t{2} << 20;
    if (tv.name() == "T2") return 1536;
    return std::nullopt;
  };
  EXPECT_EQ(toDot(twoSegments(*fusion), annotations),
            "digraph segmented_fusion {\n"
            "  node [shape=box, fontname=\"monospace\"];\n"
            "  input_0 [shape=ellipse, label=\"input 0\\nT0 float32[s0, s1]\"];\n"
            "  segment_0 [label=\"segment 0\\nfake::reduction\\nparams \\\"0\\\"\"];\n"
            "  segment_1 [label=\"segment 1\\nfake::reduction\\nparams \\\"1\\\"\"];\n"
            "  output_0 [shape=ellipse, label=\"output 0\\nT4 float32[s1]\"];\n"
            "  input_0 -> segment_0 [label=\"T0\\n2.0 MiB\"];\n"
            "  input_0 -> segment_1 [label=\"T0\\n2.0 MiB\"];\n"
            "  segment_0 -> segment_1 [label=\"T2\\n1.5 KiB\"];\n"
            "  segment_1 -> output_0 [label=\"T4\"];\n"
            "}\n");
}

TEST(SegmentedFusionDotTest, WithoutAnnotations) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("two_axes").make();
  const std::string dot = toDot(twoSegments(*fusion));
  EXPECT_THAT(dot, HasSubstr("segment_1 [label=\"segment 1\\nfake::reduction\"];"));
  EXPECT_THAT(dot, HasSubstr("segment_0 -> output_0 [label=\"T2\"];"));
  EXPECT_THAT(dot, HasSubstr("segment_1 -> output_1 [label=\"T3\"];"));
}

}  // namespace
}  // namespace braze
