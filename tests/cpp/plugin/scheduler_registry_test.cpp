// The registry: discovery order, versions side by side, pinning, allow and deny lists, safe
// mode, duplicates, crash isolation through the scanner, and failing schedulers skipped.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "braze/ops/elementwise.h"
#include "braze/plugin/plugin_probe.h"
#include "braze/plugin/scheduler_registry.h"
#include "plugin/plugin_fixtures.h"

namespace braze {
namespace {

using test::IsolatedOptions;
using test::TempPluginDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

const SchedulerEntry& entryFor(const SchedulerRegistry& registry, const std::string& id,
                               const std::string& version) {
  for (const SchedulerEntry& entry : registry.entries()) {
    if (entry.id == id && entry.version == version) return entry;
  }
  ADD_FAILURE() << "no entry " << id << "@" << version;
  static SchedulerEntry none;
  return none;
}

std::unique_ptr<Fusion> pointwiseFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  fusion->addOutput(add(x, x));
  return fusion;
}

TEST(SchedulerFilter, ParsesAllowDenyAndPins) {
  SchedulerFilter filter = SchedulerFilter::parse("pointwise@1, -reduction");
  EXPECT_EQ(filter.refusal("braze::pointwise", "1.4.0"), std::nullopt);
  EXPECT_THAT(filter.refusal("braze::pointwise", "2.0.0").value_or(""),
              HasSubstr("does not match the pin 'pointwise@1'"));
  EXPECT_THAT(filter.refusal("braze::reduction", "1.0.0").value_or(""),
              HasSubstr("denied by BRAZE_SCHEDULERS item '-reduction'"));
  EXPECT_EQ(filter.refusal("acme::matmul", "1.0.0"), std::nullopt);
  EXPECT_EQ(filter.preference("braze::pointwise"), 0u);
  EXPECT_EQ(filter.preference("acme::matmul"), std::nullopt);

  SchedulerFilter only = SchedulerFilter::parse("acme::matmul,-*");
  EXPECT_EQ(only.refusal("acme::matmul", "3.0.0"), std::nullopt);
  EXPECT_THAT(only.refusal("braze::pointwise", "1.0.0").value_or(""), HasSubstr("'-*'"));

  // Given the versions found, a pin that matches none of them says so and lists them.
  EXPECT_THAT(filter.refusal("braze::pointwise", "2.0.0", {"2.0.0", "1.4.0"}).value_or(""),
              HasSubstr("version 2.0.0 does not match the pin 'pointwise@1'"));
  SchedulerFilter unmatched = SchedulerFilter::parse("acme::flat@9");
  EXPECT_EQ(unmatched.refusal("acme::flat", "2.1.0", {"2.1.0", "1.0.0"}),
            "the pin 'acme::flat@9' in BRAZE_SCHEDULERS matches no installed version of "
            "acme::flat (installed: 2.1.0, 1.0.0); pin one of those, or install acme::flat@9");

  EXPECT_THAT([] { SchedulerFilter::parse("pointwise@x"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("item 'pointwise@x' has a bad version")));
  EXPECT_THAT([] { SchedulerFilter::parse("a b*"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cannot read item 'a b*'")));
}

TEST(SchedulerRegistry, SearchOrderAndDuplicates) {
  IsolatedOptions isolated;
  TempPluginDir first, from_env;
  first.install("fixture_good", "test::good", "1.0.0");
  from_env.install("fixture_other", "test::other", "1.0.0", 5);
  // The same (id, version) again, later in the search order: refused as a duplicate.
  auto duplicate =
      isolated.user.install("fixture_good", "test::good", "1.0.0", 10, {}, "good_copy");
  isolated.options.explicit_paths = {first.path()};
  isolated.options.use_environment = true;
  ::setenv("BRAZE_PLUGIN_PATH", from_env.path().c_str(), 1);
  SchedulerRegistry registry(isolated.options);
  ::unsetenv("BRAZE_PLUGIN_PATH");

  ASSERT_GE(registry.searchPath().size(), 3u);
  EXPECT_EQ(registry.searchPath()[0], first.path());
  EXPECT_EQ(registry.searchPath()[1], from_env.path());
  EXPECT_EQ(registry.searchPath()[2], isolated.user.path());

  std::vector<const SchedulerEntry*> candidates = registry.candidates();
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0]->id, "test::other");  // rank 5 before rank 10
  EXPECT_EQ(candidates[1]->id, "test::good");
  EXPECT_EQ(candidates[1]->path.parent_path(), first.path());

  ASSERT_EQ(registry.entries().size(), 3u);
  const SchedulerEntry& refused = registry.entries().back();
  EXPECT_EQ(refused.status, "refused");
  EXPECT_EQ(refused.path.filename(), duplicate.filename());
  EXPECT_THAT(refused.reason, HasSubstr("failed the duplicate check"));
  EXPECT_THAT(refused.reason, HasSubstr("found first"));
}

// A vendor's package (or the build tree) keeps each plugin in its own folder.
std::filesystem::path copyIntoNestedFolder(const std::filesystem::path& library,
                                           const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  for (const auto& file : {library, manifestPathFor(library)}) {
    std::filesystem::copy_file(file, folder / file.filename());
  }
  return folder / library.filename();
}

TEST(SchedulerRegistry, BuildTreeIsSearchedInNestedFolders) {
  IsolatedOptions isolated;
  TempPluginDir build_tree;
  TempPluginDir nested_source;
  auto library = nested_source.install("fixture_other", "test::other", "1.0.0", 5);
  copyIntoNestedFolder(library, build_tree.path() / "plugins" / "other");
  isolated.options.build_dir = build_tree.path();
  SchedulerRegistry registry(isolated.options);
  ASSERT_EQ(registry.candidates().size(), 1u);
  EXPECT_EQ(registry.candidates()[0]->path.parent_path().filename(), "other");
  EXPECT_EQ(registry.searchPath().back(), build_tree.path());
}

TEST(SchedulerRegistry, ExplicitAndUserFoldersAreSearchedInNestedFolders) {
  IsolatedOptions isolated;
  TempPluginDir source, vendor;
  copyIntoNestedFolder(source.install("fixture_other", "test::other", "1.0.0", 5),
                       vendor.path() / "acme" / "lib");
  copyIntoNestedFolder(source.install("fixture_good", "test::good", "1.0.0"),
                       isolated.user.path() / "deep" / "er");
  isolated.options.explicit_paths = {vendor.path()};
  SchedulerRegistry registry(isolated.options);
  ASSERT_EQ(registry.candidates().size(), 2u);
  EXPECT_EQ(entryFor(registry, "test::other", "1.0.0").path.parent_path().filename(), "lib");
  EXPECT_EQ(entryFor(registry, "test::good", "1.0.0").path.parent_path().filename(), "er");
}

TEST(SchedulerRegistry, WithoutAScannerPluginsAreRefusedNotLoadedUnprotected) {
  IsolatedOptions isolated;
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  isolated.options.scanner = std::filesystem::path();  // none to be found
  SchedulerRegistry registry(isolated.options);
  const SchedulerEntry& entry = entryFor(registry, "test::good", "1.0.0");
  EXPECT_EQ(entry.status, "refused");
  EXPECT_THAT(entry.reason, HasSubstr("no scanner"));
  EXPECT_THAT(entry.reason, HasSubstr("BRAZE_PLUGIN_SCANNER"));
  // Asked for by name, the error lists it with why it was refused, not only that it was.
  EXPECT_THAT([&] { registry.find("good"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("test::good@1.0.0 (refused: plugin '" + entry.path.string() +
                            "' failed the probe check: expected the plugin scanner")));

  // With nothing available, what a segmentation error quotes says why.
  EXPECT_THAT(registry.describeNoneAvailable(),
              AllOf(HasSubstr("no scheduler is available"),
                    HasSubstr("test::good@1.0.0 (" + entry.path.string() + ") refused"),
                    HasSubstr("no scanner")));

  isolated.options.probe = false;
  SchedulerRegistry unprotected(isolated.options);
  EXPECT_EQ(entryFor(unprotected, "test::good", "1.0.0").status, "available");
  EXPECT_EQ(unprotected.describeNoneAvailable(), "");
}

TEST(SchedulerRegistry, WithNoPluginsFoundTheSearchedFoldersAreNamed) {
  IsolatedOptions isolated;
  SchedulerRegistry registry(isolated.options);
  ASSERT_TRUE(registry.candidates().empty());
  EXPECT_THAT(registry.describeNoneAvailable(),
              AllOf(HasSubstr("no plugin was found in"),
                    HasSubstr("'" + isolated.install.path().string() + "'"),
                    HasSubstr("BRAZE_PLUGIN_PATH")));
}

TEST(SchedulerRegistry, TwoVersionsSideBySideAndPinning) {
  IsolatedOptions isolated;
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  isolated.install.install("fixture_good_v2", "test::good", "2.0.0");
  SchedulerRegistry registry(isolated.options);
  EXPECT_EQ(entryFor(registry, "test::good", "2.0.0").status, "available");
  EXPECT_EQ(entryFor(registry, "test::good", "1.0.0").status, "superseded");
  EXPECT_EQ(registry.find("good").version, "2.0.0");
  EXPECT_EQ(registry.find("test::good@1").version, "1.0.0");

  auto fusion = pointwiseFusion();
  ScheduledFusion v1 = registry.schedule(*fusion, SchedulerRuntimeInfo{}, "good@1");
  ASSERT_EQ(v1.params.size(), 1u);
  EXPECT_EQ(v1.params[0], 1);
  EXPECT_EQ(v1.summary, "test::good major 1");
  ScheduledFusion latest = registry.schedule(*fusion, SchedulerRuntimeInfo{});
  EXPECT_EQ(latest.scheduler->version, "2.0.0");

  isolated.options.schedulers = "good@1";
  SchedulerRegistry pinned(isolated.options);
  EXPECT_EQ(entryFor(pinned, "test::good", "1.0.0").status, "available");
  EXPECT_EQ(entryFor(pinned, "test::good", "2.0.0").status, "disabled");
  EXPECT_THAT(entryFor(pinned, "test::good", "2.0.0").reason, HasSubstr("pin 'good@1'"));

  EXPECT_THAT([&] { registry.find("good@3"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("test::good@2.0.0 (available)")));
  EXPECT_THAT([&] { registry.find("good@3"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "scheduler 'good@3': no usable scheduler has this name. The pin '@3' matches "
                  "no installed version (installed: test::good@2.0.0, test::good@1.0.0).")));
  // Every status in the list carries its reason.
  EXPECT_THAT([&] { pinned.find("good@3"); },
              ::testing::ThrowsMessage<Error>(AllOf(
                  HasSubstr("test::good@2.0.0 (disabled: version 2.0.0 does not match the pin "
                            "'good@1' in BRAZE_SCHEDULERS)"),
                  HasSubstr("test::good@1.0.0 (available)"))));
  EXPECT_THAT([&] { registry.find("good@3"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("test::good@1.0.0 (superseded: version 2.0.0 is used; pin with "
                            "test::good@1.0.0 to use this one)")));
}

TEST(SchedulerRegistry, PinMatchingNoInstalledVersionListsTheInstalledOnes) {
  IsolatedOptions isolated;
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  isolated.install.install("fixture_good_v2", "test::good", "2.0.0");
  isolated.options.schedulers = "test::good@9";
  SchedulerRegistry registry(isolated.options);
  const std::string reason =
      "the pin 'test::good@9' in BRAZE_SCHEDULERS matches no installed version of test::good "
      "(installed: 2.0.0, 1.0.0); pin one of those, or install test::good@9";
  for (const char* version : {"1.0.0", "2.0.0"}) {
    const SchedulerEntry& entry = entryFor(registry, "test::good", version);
    EXPECT_EQ(entry.status, "disabled");
    EXPECT_EQ(entry.reason, reason);
  }
  EXPECT_THAT([&] { registry.find("test::good"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("\n  test::good@2.0.0 (disabled: " + reason + ")\n")));
}

TEST(SchedulerRegistry, DenyAllowAndSafeMode) {
  IsolatedOptions isolated;
  TempPluginDir extra;
  extra.install("fixture_other", "test::other", "1.0.0", 5);
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  isolated.options.explicit_paths = {extra.path()};

  isolated.options.schedulers = "-other";
  SchedulerRegistry denied(isolated.options);
  EXPECT_EQ(entryFor(denied, "test::other", "1.0.0").status, "disabled");
  EXPECT_EQ(denied.candidates().size(), 1u);

  isolated.options.schedulers = "other,-*";
  SchedulerRegistry allowed(isolated.options);
  EXPECT_EQ(entryFor(allowed, "test::good", "1.0.0").status, "disabled");
  ASSERT_EQ(allowed.candidates().size(), 1u);
  EXPECT_EQ(allowed.candidates()[0]->id, "test::other");

  // Preference: a listed name is tried before a better-ranked one.
  isolated.options.schedulers = "good";
  SchedulerRegistry preferred(isolated.options);
  ASSERT_EQ(preferred.candidates().size(), 2u);
  EXPECT_EQ(preferred.candidates()[0]->id, "test::good");

  isolated.options.schedulers = "";
  isolated.options.use_environment = true;
  ::setenv("BRAZE_PLUGIN_SAFE_MODE", "1", 1);
  SchedulerRegistry safe(isolated.options);
  ::unsetenv("BRAZE_PLUGIN_SAFE_MODE");
  ASSERT_EQ(safe.candidates().size(), 1u);
  EXPECT_EQ(safe.candidates()[0]->id, "test::good");  // only the install prefix's plugins
}

TEST(SchedulerRegistry, PluginThatCrashesWhileLoadingIsProbedAndSkipped) {
  IsolatedOptions isolated;
  auto crash = isolated.install.install("fixture_crash", "test::crash", "1.0.0");
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  SchedulerRegistry registry(isolated.options);  // this process survives
  const SchedulerEntry& entry = entryFor(registry, "test::crash", "1.0.0");
  EXPECT_EQ(entry.status, "refused");
  EXPECT_THAT(entry.reason, HasSubstr("failed the probe check"));
  EXPECT_THAT(entry.reason, HasSubstr("crashed while loading (signal 11"));
  EXPECT_EQ(registry.candidates().size(), 1u);

  // Remembered: the cache holds the reason for this build of the file...
  PluginProbeCache cache(*isolated.options.cache_file);
  std::optional<ProbeResult> cached = cache.find(pluginFileKey(crash));
  ASSERT_TRUE(cached.has_value());
  EXPECT_FALSE(cached->ok);
  EXPECT_THAT(cached->reason, HasSubstr("crashed while loading"));
  // ...and a changed file is probed again.
  std::ofstream(crash, std::ios::app) << "changed";
  EXPECT_FALSE(cache.find(pluginFileKey(crash)).has_value());
}

TEST(SchedulerRegistry, CorruptManifestIsReportedOnceWithItsPathAndFix) {
  IsolatedOptions isolated;
  auto library = isolated.install.install("fixture_good", "test::good", "1.0.0");
  TempPluginDir::writeManifest(library, "not json");
  SchedulerRegistry registry(isolated.options);
  EXPECT_TRUE(registry.entries().empty());
  ASSERT_EQ(registry.failures().size(), 1u);
  const auto& [path, reason] = registry.failures()[0];
  EXPECT_EQ(path, manifestPathFor(library));
  EXPECT_THAT(reason, ::testing::StartsWith("plugin '" + path.string() +
                                            "' failed the manifest check: expected JSON, found "
                                            "a syntax error (parse error at line 1"));
  EXPECT_THAT(reason, ::testing::EndsWith(". Rebuild the plugin with the Braze SDK matching this "
                                          "Braze: its braze_add_scheduler_plugin writes the "
                                          "manifest."));
  EXPECT_EQ(reason.find(path.string()), reason.rfind(path.string()));
  EXPECT_EQ(reason.find("Rebuild"), reason.rfind("Rebuild"));
}

TEST(SchedulerRegistry, PluginThatHangsWhileLoadingTimesOut) {
  IsolatedOptions isolated;
  isolated.install.install("fixture_hang", "test::hang", "1.0.0");
  isolated.options.probe_timeout = std::chrono::milliseconds(300);
  SchedulerRegistry registry(isolated.options);
  const SchedulerEntry& entry = entryFor(registry, "test::hang", "1.0.0");
  EXPECT_EQ(entry.status, "refused");
  EXPECT_THAT(entry.reason, HasSubstr("hung while loading: no answer within 300 ms"));
}

TEST(SchedulerRegistry, SchedulerThatThrowsIsReportedAndTheNextIsTried) {
  IsolatedOptions isolated;
  isolated.install.install("fixture_throws", "test::throws", "1.0.0", 1);
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  SchedulerRegistry registry(isolated.options);
  auto fusion = pointwiseFusion();
  ScheduledFusion result = registry.schedule(*fusion, SchedulerRuntimeInfo{});
  ASSERT_NE(result.fusion, nullptr);
  EXPECT_EQ(result.scheduler->id, "test::good");
  ASSERT_EQ(result.attempts.size(), 1u);
  EXPECT_EQ(result.attempts[0].scheduler, "test::throws@1.0.0");
  EXPECT_EQ(result.attempts[0].stage, "schedule");
  EXPECT_TRUE(result.attempts[0].error);
  EXPECT_EQ(result.attempts[0].message, "fixture schedule failed on purpose");

  // Only the throwing one: the error lists the attempt with plugin, stage and message.
  EXPECT_THAT([&] { registry.schedule(*fusion, SchedulerRuntimeInfo{}, "throws"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("test::throws@1.0.0 (" + result.attempts[0].path.string() +
                            ") schedule failed: fixture schedule failed on purpose")));

  // A decline is reported as such, with its reason.
  Fusion empty;
  EXPECT_THAT([&] { registry.schedule(empty, SchedulerRuntimeInfo{}, "good"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("canScheduleCompileTime declined: the fusion has no outputs")));
}

}  // namespace
}  // namespace braze
