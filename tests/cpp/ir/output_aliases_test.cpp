// Outputs written into inputs (Fusion::aliasOutputToInput): what the definition accepts, how
// the alias travels through clone, the canonical form and the printer, which aliases can be
// written in place, and the copy that copyUnsafeAliasedOutputs adds for the others.

#include "braze/ir/output_aliases.h"

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

// An SGD step: p - lr * g, written into p.
struct Sgd {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* updated = sub(p, mul(g, 0.1));
  Sgd() {
    fusion->addOutput(updated);
    fusion->aliasOutputToInput(updated, p);
  }
};

TEST(OutputAliasesTest, TheDefinitionRecordsTheAliasAndLaysTheOutputOutAsTheInput) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeInputTensor(*fusion, {.dtype = DataType::Float32,
                                            .sizes = {-1, -1},
                                            .contiguity = {true, true},
                                            .allocation_order = {1, 0}});
  TensorView* out = mul(p, 2.0);
  fusion->addOutput(out);
  fusion->aliasOutputToInput(out, p);
  EXPECT_EQ(fusion->aliasedInput(out), p);
  EXPECT_EQ(out->allocationOrder(), (std::vector<int64_t>{1, 0}));
  EXPECT_NE(printMath(*fusion).find(out->name() + " into " + p->name()), std::string::npos)
      << printMath(*fusion);
}

TEST(OutputAliasesTest, BadAliasesAreRefusedWithTheReason) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* q = makeSymbolicTensor(*fusion, 1);
  TensorView* strided = makeInputTensor(
      *fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, true}});
  TensorView* out = mul(p, 2.0);
  TensorView* other = add(p, 1.0);
  EXPECT_TRUE(throwsError([&] { fusion->aliasOutputToInput(out, p); }, {"is not an output"}));
  fusion->addOutput(out);
  fusion->addOutput(other);
  EXPECT_TRUE(
      throwsError([&] { fusion->aliasOutputToInput(out, other); }, {"is not a tensor input"}));
  EXPECT_TRUE(throwsError([&] { fusion->aliasOutputToInput(out, q); }, {"rank must agree"}));
  EXPECT_TRUE(throwsError([&] { fusion->aliasOutputToInput(out, strided); },
                          {"is not contiguous at dim 0"}));
  fusion->aliasOutputToInput(out, p);
  EXPECT_TRUE(throwsError([&] { fusion->aliasOutputToInput(other, p); }, {"takes one output"}));
  EXPECT_TRUE(throwsError([&] { fusion->aliasOutputToInput(out, p); }, {"is already written"}));
}

// Inputs read through the read-only path (Fusion::setReadOnlyLoads) do not see the kernel's
// stores: neither order of marking and aliasing is accepted, and only inputs can be marked.
TEST(OutputAliasesTest, ReadOnlyLoadsAreForInputsNoOutputIsWrittenInto) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* out = sub(p, g);
  fusion->addOutput(out);
  EXPECT_TRUE(throwsError([&] { fusion->setReadOnlyLoads(out); }, {"is not a tensor input"}));
  fusion->setReadOnlyLoads(g);
  EXPECT_TRUE(fusion->readOnlyLoads(g));
  EXPECT_FALSE(fusion->readOnlyLoads(p));
  fusion->aliasOutputToInput(out, p);
  EXPECT_TRUE(throwsError([&] { fusion->setReadOnlyLoads(p); }, {"an output is written into"}));
  const std::unique_ptr<Fusion> copy = fusion->clone();
  EXPECT_TRUE(copy->readOnlyLoads(copy->inputs()[1]));
  EXPECT_FALSE(copy->readOnlyLoads(copy->inputs()[0]));

  Sgd sgd;
  auto* written = sgd.fusion->inputs()[0]->as<TensorView>();
  EXPECT_TRUE(throwsError([&] { sgd.fusion->setReadOnlyLoads(written); }, {"read it plainly"}));
  auto plain = std::make_unique<Fusion>();
  TensorView* q = makeSymbolicTensor(*plain, 2);
  TensorView* doubled = mul(q, 2.0);
  plain->addOutput(doubled);
  plain->setReadOnlyLoads(q);
  EXPECT_TRUE(throwsError([&] { plain->aliasOutputToInput(doubled, q); },
                          {"read through the read-only path"}));
}

TEST(OutputAliasesTest, CloneHashAndReplaceOutputKeepTheAlias) {
  Sgd sgd;
  CloneMap map;
  std::unique_ptr<Fusion> copy = sgd.fusion->clone(&map);
  EXPECT_EQ(copy->aliasedInput(map[sgd.updated]), map[sgd.p]);
  EXPECT_EQ(structuralHash(*copy), structuralHash(*sgd.fusion));

  // The same math without the alias is another fusion.
  auto plain = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*plain, 2);
  TensorView* g = makeSymbolicTensor(*plain, 2);
  plain->addOutput(sub(p, mul(g, 0.1)));
  EXPECT_NE(canonicalForm(*plain), canonicalForm(*sgd.fusion));

  TensorView* replacement = neg(neg(sgd.updated));
  sgd.fusion->replaceOutput(sgd.updated, replacement);
  EXPECT_EQ(sgd.fusion->aliasedInput(replacement), sgd.p);
  EXPECT_EQ(sgd.fusion->aliasedInput(sgd.updated), nullptr);
}

TEST(OutputAliasesTest, ElementwiseChainsFromTheirOnlyReaderAreWrittenInPlace) {
  Sgd sgd;
  EXPECT_TRUE(writesInPlaceSafely(*sgd.fusion, sgd.updated, sgd.p));
  EXPECT_EQ(copyUnsafeAliasedOutputs(*sgd.fusion), 0);

  // Running statistics: the statistic comes from another input through a reduction.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* running = makeSymbolicTensor(*fusion, 1);
  TensorView* next = add(mul(running, 0.9), mul(mean(x, {0}), 0.1));
  fusion->addOutput(next);
  fusion->aliasOutputToInput(next, running);
  EXPECT_TRUE(writesInPlaceSafely(*fusion, next, running));

  // An output that does not read its input at all.
  auto fill = std::make_unique<Fusion>();
  TensorView* into = makeSymbolicTensor(*fill, 1);
  TensorView* source = makeSymbolicTensor(*fill, 1);
  TensorView* copied = exp(source);
  fill->addOutput(copied);
  fill->aliasOutputToInput(copied, into);
  EXPECT_TRUE(writesInPlaceSafely(*fill, copied, into));
}

TEST(OutputAliasesTest, ScatterIntoItsInputIsWrittenInPlace) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* cache = makeSymbolicTensor(*fusion, 2);
  TensorView* index = makeSymbolicTensor(*fusion, 2, DataType::Int64);
  TensorView* values = makeSymbolicTensor(*fusion, 2);
  TensorView* written = scatter(cache, 0, index, values);
  fusion->addOutput(written);
  fusion->aliasOutputToInput(written, cache);
  EXPECT_TRUE(writesInPlaceSafely(*fusion, written, cache));
}

TEST(OutputAliasesTest, OtherReadersOfTheInputGetACopySegment) {
  // x is read twice: by the update and by a row sum another output needs.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* updated = mul(x, 2.0);
  TensorView* sums = sum(x, {1});
  fusion->addOutput(updated);
  fusion->addOutput(sums);
  fusion->aliasOutputToInput(updated, x);
  EXPECT_FALSE(writesInPlaceSafely(*fusion, updated, x));
  EXPECT_EQ(copyUnsafeAliasedOutputs(*fusion), 1);
  const Val* written = fusion->outputs()[0];
  ASSERT_NE(written->definition(), nullptr);
  EXPECT_EQ(written->definition()->op(), OpKind::SegmentSet);
  EXPECT_EQ(written->definition()->inputs()[0], updated);
  EXPECT_EQ(fusion->aliasedInput(written), x);
  EXPECT_EQ(fusion->aliasedInput(updated), nullptr);

  // A transpose reads other elements than it writes.
  auto transposed = std::make_unique<Fusion>();
  TensorView* square = makeInputTensor(*transposed, {.dtype = DataType::Float32, .sizes = {4, 4}});
  TensorView* t = permute(square, {1, 0});
  transposed->addOutput(t);
  transposed->aliasOutputToInput(t, square);
  EXPECT_FALSE(writesInPlaceSafely(*transposed, t, square));
}

}  // namespace
}  // namespace braze
