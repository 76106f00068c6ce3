// Persisted decisions: runtime entries round trip and refuse damaged bytes, and a runtime
// restores kept decisions only while they still apply (the fusion's Exprs, the plugin library
// that chose them, the scheduler's acceptance), else segments and schedules again.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/serde/kernel_entry_generated.h"
#include "braze/serde/runtime_cache.h"
#include "braze/serde/runtime_entry_generated.h"
#include "memory_decision_store.h"
#include "support/normalization_fusions.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;

// A recipe with every kind of formula node, attribute, constant and parameter.
KernelRecipe sampleRecipe() {
  using Node = ScalarFormulas::Node;
  using Kind = KernelParameter::Kind;
  KernelRecipe recipe;
  recipe.kernel_key = std::string(64, '9');
  recipe.kernel_name = "braze_0123456789abcdef";
  recipe.index_type = DataType::Int64;
  recipe.formulas.nodes = {
      Node{.kind = Node::Kind::InputExtent, .input = 0, .dim = 1},
      Node{.kind = Node::Kind::InputScalar, .dtype = DataType::Float32, .input = 2},
      Node{.kind = Node::Kind::Constant, .value = int64_t{128}},
      Node{.kind = Node::Kind::Constant, .dtype = DataType::Float64, .value = -0.5},
      Node{.kind = Node::Kind::Constant, .dtype = DataType::Bool, .value = true},
      Node{.kind = Node::Kind::Op, .op = OpKind::CeilDiv, .operands = {0, 2}},
      Node{.kind = Node::Kind::Op,
           .dtype = DataType::Float32,
           .op = OpKind::Gelu,
           .operands = {1},
           .attributes = {{"approximate", std::string("tanh")},
                          {"flag", true},
                          {"count", int64_t{-3}},
                          {"scale", 0.25}}},
      Node{.kind = Node::Kind::Op, .dtype = DataType::Bool, .op = OpKind::Eq, .operands = {0, 2}},
  };
  recipe.parameters = {
      {Kind::InputTensor, DataType::BFloat16, 2, 0, -1, {}},
      {Kind::InputScalar, DataType::Float32, 0, 2, -1, {}},
      {Kind::OutputTensor, DataType::BFloat16, 2, 0, -1, {}},
      {Kind::GlobalBuffer, DataType::Float32, 2, -1, -1, {0, 5}},
      {Kind::Workspace, DataType::Int64, 0, -1, 5, {}},
      {Kind::InputTensorMap,
       DataType::BFloat16,
       2,
       0,
       -1,
       {},
       {{1, 0}, {64, 32}, TensorMapParameter::Swizzle::Bytes128, true}},
      {Kind::OutputTensorMap, DataType::BFloat16, 2, 0, -1, {}, {{0, 1}, {8, 256}}},
  };
  recipe.cluster = {2, 1, 1};
  recipe.arch_specific = true;
  recipe.cooperative = true;
  recipe.grid = {5, -1, -1};
  recipe.block = {2, 0, -1};
  recipe.dynamic_shared_memory_bytes = 5;
  recipe.launch_checks = {{7, "the row length is a multiple of 128"}};
  recipe.alignments = {{0, 16, {0}}, {2, 8, {}}};
  recipe.launch_bounds = LaunchBounds{512, 2};
  return recipe;
}

RuntimeDecisions sampleDecisions() {
  RuntimeDecisions decisions;
  decisions.segments.push_back({{0, 1, 2},
                                {{2, 0}},
                                "braze::reduction@1.0.0",
                                std::string(64, 'a'),
                                {1, 2, 3, 250},
                                "reduction[...]",
                                sampleRecipe()});
  decisions.segments.push_back({{3, 4},
                                {{4, 0}, {4, 1}},
                                "braze::inner_outer@1.0.0",
                                std::string(64, 'b'),
                                {},
                                "",
                                std::nullopt});
  return decisions;
}

TEST(RuntimeEntryTest, RoundTripsAndRefusesDamage) {
  const std::string key(64, 'c');
  const std::vector<uint8_t> bytes = encodeRuntimeEntry(key, sampleDecisions());
  DecodedRuntimeEntry decoded = decodeRuntimeEntry(bytes, key);
  ASSERT_TRUE(decoded.decisions.has_value()) << decoded.problem;
  EXPECT_EQ(*decoded.decisions, sampleDecisions());
  for (size_t size = 0; size < bytes.size(); ++size) {
    ASSERT_FALSE(decodeRuntimeEntry(std::span<const uint8_t>(bytes.data(), size), key).decisions)
        << size;
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x10;
    const DecodedRuntimeEntry result = decodeRuntimeEntry(flipped, key);
    if (result.decisions) {
      ASSERT_EQ(*result.decisions, sampleDecisions()) << "byte " << at;
    }
  }
  EXPECT_NE(decodeRuntimeEntry(bytes, std::string(64, 'd')).problem.find("stored under"),
            std::string::npos);
}

// Entries another schema version wrote (a newer Braze, or an older one) are skipped with the
// version named, never misread.
TEST(SchemaVersionTest, EntriesOfAnotherSchemaVersionAreRefused) {
  for (uint32_t version : {0u, 2u, 1000u}) {
    flatbuffers::FlatBufferBuilder runtime;
    fb::FinishRuntimeEntryBuffer(
        runtime, fb::CreateRuntimeEntry(
                     runtime, version, runtime.CreateString(std::string(64, 'a')),
                     runtime.CreateVector(std::vector<flatbuffers::Offset<fb::SegmentDecision>>{}),
                     0, 0, runtime.CreateString(std::string(64, '0'))));
    const DecodedRuntimeEntry decoded =
        decodeRuntimeEntry(std::span<const uint8_t>(runtime.GetBufferPointer(), runtime.GetSize()));
    EXPECT_FALSE(decoded.decisions.has_value());
    EXPECT_NE(decoded.problem.find("schema version " + std::to_string(version)), std::string::npos)
        << decoded.problem;

    flatbuffers::FlatBufferBuilder kernel;
    fb::FinishKernelEntryBuffer(
        kernel, fb::CreateKernelEntry(kernel, version, kernel.CreateString(std::string(64, 'b'))));
    const DecodedKernelEntry entry =
        decodeKernelEntry(std::span<const uint8_t>(kernel.GetBufferPointer(), kernel.GetSize()));
    EXPECT_FALSE(entry.kernel.has_value());
    EXPECT_NE(entry.problem.find("schema version " + std::to_string(version)), std::string::npos)
        << entry.problem;
  }
}

class RestoredDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override { setDefaultDecisionStore(store_); }
  void TearDown() override { setDefaultDecisionStore(nullptr); }

  // Runs layer norm backward at rows of 262144 (two segments) through a new executor cache;
  // checks the results and returns whether the runtime restored its decisions.
  bool runLayerNormBackward() {
    const auto kind = test::Normalization::LayerNormBackward;
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::Float32);
    ExecutorCacheOptions options;
    options.registry = &test::shippedSchedulers();
    FusionExecutorCache cache(*fusion, options);
    const std::vector<HostTensor> inputs =
        test::normalizationArguments(kind, DataType::Float32, 3, 262144, /*seed=*/5);
    const std::vector<FusionArgument> outputs =
        cache.run(std::vector<FusionArgument>(inputs.begin(), inputs.end()));
    const std::vector<HostTensor> expected = evaluateFusionTensors(*fusion, inputs);
    for (size_t i = 0; i < outputs.size(); ++i)
      EXPECT_TRUE(test::isClose(std::get<HostTensor>(outputs[i]), expected[i]));
    EXPECT_EQ(cache.lastRuntime()->segmentation().segments.size(), 2u);
    return cache.counters().runtimes_restored == 1;
  }

  std::shared_ptr<test::MemoryDecisionStore> store_ = std::make_shared<test::MemoryDecisionStore>();
};

TEST_F(RestoredDecisionsTest, ASecondRuntimeRestoresTheSegmentationAndParams) {
  EXPECT_FALSE(runLayerNormBackward());
  EXPECT_EQ(store_->inserts, 1);
  EXPECT_TRUE(runLayerNormBackward());
  EXPECT_EQ(store_->inserts, 1);  // restored decisions are not written again
}

// A fusion with stream loops restores its segmentation and builds the same host program: the
// loops come from the definition's stream axes, the segments from the kept decisions.
TEST_F(RestoredDecisionsTest, AStreamLoopProgramIsRebuiltFromKeptDecisions) {
  auto runOnce = [&](std::string& program) {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    TensorView* y = exp(x);
    TensorView* middle = mul(y, 2.0);  // no stream axis: between two loops
    TensorView* z = add(middle, 1.0);
    fusion->addOutput(z);
    for (TensorView* tv : {y, z}) {
      tv->split(0, 3, /*inner_split=*/false);
      tv->parallelize(0, ParallelType::Stream);
    }
    ExecutorCacheOptions options;
    options.registry = &test::shippedSchedulers();
    FusionExecutorCache cache(std::move(fusion), options);
    test::RandomTensors random(6);
    const HostTensor x_value = random.uniform(DataType::Float32, {7, 40});
    const std::vector<FusionArgument> outputs = cache.run({x_value});
    EXPECT_TRUE(test::isClose(std::get<HostTensor>(outputs[0]),
                              evaluateFusionTensors(cache.fusion(), {x_value})[0]));
    program = cache.lastRuntime()->program().toString();
    return cache.counters().runtimes_restored == 1;
  };
  std::string first;
  std::string second;
  EXPECT_FALSE(runOnce(first));
  EXPECT_TRUE(runOnce(second));
  EXPECT_EQ(second, first);
  EXPECT_NE(first.find("for loop 1 over"), std::string::npos) << first;
}

// Another build of a segment's plugin rules on the params its predecessor kept: the same
// major.minor version keeps them, another recomputes them, and a scheduler that no longer
// takes its segment sends the fusion back to the segmenter.
TEST_F(RestoredDecisionsTest, ARebuiltPluginRulesOnItsOldParams) {
  runLayerNormBackward();
  const RuntimeDecisions kept = *store_->find(store_->onlyKey());
  store_->tamper = [](RuntimeDecisions& d) { d.segments[0].plugin_sha256 = std::string(64, '0'); };
  testing::internal::CaptureStderr();
  EXPECT_TRUE(runLayerNormBackward());
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("keeps its params"), std::string::npos) << log;
  EXPECT_EQ(store_->inserts, 2);  // rewritten with the library now loaded

  // Another minor version: the kept params are not trusted, new ones are computed.
  store_->tamper = [](RuntimeDecisions& d) {
    const std::string& name = d.segments[0].scheduler;
    d.segments[0].scheduler = name.substr(0, name.rfind('@')) + "@0.9.0";
    d.segments[0].params = {1, 2, 3};
  };
  testing::internal::CaptureStderr();
  EXPECT_TRUE(runLayerNormBackward());
  log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("computes new params"), std::string::npos) << log;
  store_->tamper = nullptr;
  EXPECT_EQ(store_->find(store_->onlyKey())->segments[0].params, kept.segments[0].params);
}

// A rebuilt plugin of the same major.minor version keeps its old params, but they no longer
// decode (a params format changed without a version bump): the kept decisions are dropped and
// the fusion planned again, and the decisions are rewritten.
TEST_F(RestoredDecisionsTest, KeptParamsThatNoLongerBuildArePlannedAgain) {
  runLayerNormBackward();
  const RuntimeDecisions kept = *store_->find(store_->onlyKey());
  store_->tamper = [](RuntimeDecisions& d) {
    d.segments[0].plugin_sha256 = std::string(64, '0');
    d.segments[0].params.at(4) ^= 0x7f;  // the byte after the params' magic: their version
  };
  testing::internal::CaptureStderr();
  const bool restored = runLayerNormBackward();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(restored) << log;
  EXPECT_NE(log.find("keeps its params"), std::string::npos) << log;
  EXPECT_NE(log.find("do not build"), std::string::npos) << log;
  store_->tamper = nullptr;
  EXPECT_EQ(store_->find(store_->onlyKey())->segments[0].params, kept.segments[0].params);
}

TEST_F(RestoredDecisionsTest, DecisionsThatNoLongerFitTheFusionAreNotUsed) {
  runLayerNormBackward();
  store_->tamper = [](RuntimeDecisions& d) { d.segments[1].exprs.push_back(100000); };
  testing::internal::CaptureStderr();
  EXPECT_FALSE(runLayerNormBackward());
  EXPECT_NE(testing::internal::GetCapturedStderr().find("is not in the fusion"), std::string::npos);

  // A scheduler named for a segment it does not take (a reduction for the rows' segment): not
  // the library that chose, so it is asked, and declines.
  store_->tamper = [](RuntimeDecisions& d) {
    d.segments[0].scheduler.swap(d.segments[1].scheduler);
  };
  testing::internal::CaptureStderr();
  const bool restored = runLayerNormBackward();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(restored) << log;
  EXPECT_NE(log.find("no longer takes a segment"), std::string::npos) << log;
}

TEST(RuntimeCacheTest, KeepsDecisionsInTheFolderAndSkipsDamagedEntries) {
  const fs::path directory =
      fs::temp_directory_path() / ("braze-runtime-cache-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  std::ostringstream log;
  CacheOptions options;
  options.directory = directory;
  options.log = &log;
  RuntimeCache cache(options);
  const std::string key(64, 'e');
  EXPECT_FALSE(cache.find(key).has_value());
  cache.insert(key, sampleDecisions());
  EXPECT_EQ(RuntimeCache(options).find(key), sampleDecisions());
  { std::ofstream(cache.entryPath(key), std::ios::trunc) << "damaged"; }
  EXPECT_FALSE(cache.find(key).has_value());
  EXPECT_NE(log.str().find("'BRZR'"), std::string::npos) << log.str();
  EXPECT_EQ(cache.counters().skipped, 1);
  cache.insert(std::string(64, 'f'), sampleDecisions());
  const std::vector<RuntimeCache::EntryInfo> entries = cache.entries();
  ASSERT_EQ(entries.size(), 2u);
  for (const RuntimeCache::EntryInfo& entry : entries) {
    EXPECT_EQ(entry.valid, entry.key == std::string(64, 'f')) << entry.key << ": " << entry.problem;
    if (entry.valid) {
      EXPECT_EQ(entry.segments, 2);
    }
  }
  EXPECT_EQ(cache.removeInvalid(), 1);
  EXPECT_EQ(cache.clear(), 1);
  fs::remove_all(directory);
}

TEST(RuntimeCacheTest, WritesPruneTheLeastRecentlyUsedDecisions) {
  const fs::path directory =
      fs::temp_directory_path() / ("braze-runtime-prune-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  CacheOptions options;
  options.directory = directory;
  const std::string a(64, '1'), b(64, '2'), c(64, '3');
  const auto entry_bytes = static_cast<int64_t>(encodeRuntimeEntry(a, sampleDecisions()).size());
  options.max_runtime_bytes = 2 * entry_bytes + entry_bytes / 2;  // room for two
  RuntimeCache cache(options);
  cache.insert(a, sampleDecisions());
  cache.insert(b, sampleDecisions());
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(cache.entryPath(a), now - std::chrono::minutes(10));
  fs::last_write_time(cache.entryPath(b), now - std::chrono::minutes(5));
  EXPECT_TRUE(cache.find(a).has_value());  // a hit is a use: b is now the least recent
  cache.insert(c, sampleDecisions());
  EXPECT_TRUE(fs::exists(cache.entryPath(a)));
  EXPECT_FALSE(fs::exists(cache.entryPath(b)));
  EXPECT_TRUE(fs::exists(cache.entryPath(c)));
  fs::remove_all(directory);
}

}  // namespace
}  // namespace braze::serde
