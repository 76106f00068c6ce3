// Loading a plugin: every check in order, each failure through a deliberately broken plugin,
// with the message naming the path, the stage, what was expected and what was found.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "braze/plugin/plugin_loader.h"
#include "braze/plugin/sha256.h"
#include "plugin/plugin_fixtures.h"

namespace braze {
namespace {

using test::TempPluginDir;
using ::testing::HasSubstr;

/// Runs `load` and returns the PluginError it throws (fails the test when none).
template <typename Load>
PluginError expectPluginError(Load&& load) {
  try {
    load();
  } catch (const PluginError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a PluginError";
  return PluginError("", PluginStage::Call, "", "", "");
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256Hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  std::string abc = "abc";
  EXPECT_EQ(sha256Hex({reinterpret_cast<const uint8_t*>(abc.data()), abc.size()}),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks: the padding spills into a second block.
  std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256Hex({reinterpret_cast<const uint8_t*>(two.data()), two.size()}),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(PluginManifest, RoundTripsThroughJson) {
  PluginManifest manifest;
  manifest.library = "libacme.so";
  manifest.sha256 = std::string(64, 'a');
  manifest.abi_major = 1;
  manifest.abi_minor = 3;
  manifest.build_tag = "gcc-12;x;braze-0";
  manifest.package_version = "2.0.1";
  manifest.schedulers = {{"acme::pw", "2.0.1", 7, "one"}, {"acme::red", "1.0.0", 9, "two"}};
  EXPECT_EQ(parseManifest(manifestToJson(manifest), "m.json"), manifest);
  EXPECT_EQ(manifestPathFor("/a/libacme.so"), "/a/libacme.braze-plugin.json");
  EXPECT_TRUE(isManifestPath("/a/libacme.braze-plugin.json"));
}

TEST(PluginManifest, ErrorsNameTheFieldAndWhatWasFound) {
  EXPECT_THAT([] { parseManifest("{", "bad.json"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("'bad.json' failed the manifest check: expected JSON, found a syntax "
                            "error (parse error at line 1, column 2")));
  EXPECT_THAT([] { parseManifest(R"({"format_version": 1})", "m.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "expected field \"library\" of the manifest (a file name), found none")));
  EXPECT_THAT([] { parseManifest(R"({"format_version": 9})", "m.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected format_version 1, found 9")));
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

TEST(PluginLoader, CorruptManifestSaysOnceWhatWhereAndWhatToDo) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0");
  TempPluginDir::writeManifest(library, R"({"format_version": 1, "libr)");
  const std::string manifest = manifestPathFor(library).string();
  const std::string expected =
      "plugin '" + manifest +
      "' failed the manifest check: expected JSON, found a syntax error (parse error at line 1, "
      "column 28: syntax error while parsing object key - invalid string: missing closing "
      "quote; last read: '\"libr'; expected string literal). Rebuild the plugin with the Braze "
      "SDK matching this Braze: its braze_add_scheduler_plugin writes the manifest.";
  // Through the library or the manifest, loaded or only checked: one message, every part once.
  for (const auto& load : std::vector<std::function<void()>>{
           [&] { loadPlugin(library); }, [&] { loadPlugin(manifest); },
           [&] { checkPluginWithoutLoading(library); }}) {
    PluginError error = expectPluginError(load);
    EXPECT_EQ(error.stage(), PluginStage::Manifest);
    EXPECT_EQ(error.path(), manifest);
    EXPECT_EQ(error.what(), expected);
    EXPECT_EQ(occurrences(error.what(), manifest), 1u);
    EXPECT_EQ(occurrences(error.what(), "Rebuild"), 1u);
  }
}

TEST(PluginLoader, LoadsAGoodPluginAndNegotiatesTheMinor) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0");
  std::shared_ptr<const LoadedPlugin> plugin = loadPlugin(library);
  ASSERT_NE(plugin->info, nullptr);
  EXPECT_EQ(plugin->manifest.schedulers.at(0).id, "test::good");
  EXPECT_STREQ(plugin->info->schedulers[0]->id, "test::good");
  EXPECT_EQ(plugin->abi_minor, BRAZE_PLUGIN_ABI_MINOR);
  // The manifest path resolves to the same loaded library.
  EXPECT_EQ(loadPlugin(manifestPathFor(library)), plugin);
}

TEST(PluginLoader, NewerMinorIsNotRefused) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0", 10,
                             [](PluginManifest& m) { m.abi_minor = BRAZE_PLUGIN_ABI_MINOR + 5; });
  // The manifest is checked before loading: a newer minor passes the ABI check (the identity
  // check then notices the library says otherwise).
  EXPECT_NO_THROW(checkPluginWithoutLoading(library));
}

TEST(PluginLoader, NotASharedLibrary) {
  TempPluginDir dir;
  auto text = dir.path() / "libtext.so";
  std::ofstream(text) << "not a library";
  PluginError error = expectPluginError([&] { loadPlugin(text); });
  EXPECT_EQ(error.stage(), PluginStage::File);
  EXPECT_THAT(error.what(), HasSubstr("libtext.so' failed the file check: expected an ELF"));

  auto archive = dir.path() / "libfixture_static.so";
  std::filesystem::copy_file(test::fixtureBuildDir() / "libfixture_static.a", archive);
  error = expectPluginError([&] { loadPlugin(archive); });
  EXPECT_EQ(error.stage(), PluginStage::File);
  EXPECT_THAT(error.what(), HasSubstr("found a static archive"));

  error = expectPluginError([&] { loadPlugin(dir.path() / "libmissing.so"); });
  EXPECT_THAT(error.what(), HasSubstr("found no such file"));
}

TEST(PluginLoader, ManifestMissingOrWrong) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0");
  std::filesystem::remove(manifestPathFor(library));
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Manifest);
  EXPECT_THAT(error.what(), HasSubstr("libfixture_good.braze-plugin.json', found none"));

  TempPluginDir::writeManifest(library, R"({"format_version": 1, "library": 3})");
  error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Manifest);
  EXPECT_THAT(error.what(),
              HasSubstr("expected field \"library\" of the manifest to be a file name, found 3. "
                        "Rebuild"));

  library = dir.install("fixture_good", "test::good", "1.0.0", 10,
                        [](PluginManifest& m) { m.library = "libelse.so"; });
  error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_THAT(error.what(), HasSubstr("found \"libelse.so\""));
}

TEST(PluginLoader, ManifestFromAnotherBuild) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0", 10,
                             [](PluginManifest& m) { m.sha256 = std::string(64, '0'); });
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Manifest);
  EXPECT_THAT(error.what(), HasSubstr("expected sha256 0000"));
  EXPECT_THAT(error.what(), HasSubstr("(of the library)"));
  EXPECT_THAT(error.what(), HasSubstr("reinstall them together"));
}

TEST(PluginLoader, AbiMajorMismatch) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0", 10,
                             [](PluginManifest& m) { m.abi_major = BRAZE_PLUGIN_ABI_MAJOR + 1; });
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Abi);
  EXPECT_THAT(error.what(),
              HasSubstr("found plugin ABI " + std::to_string(BRAZE_PLUGIN_ABI_MAJOR + 1) + "."));
  EXPECT_THAT(error.what(), HasSubstr("Upgrade Braze"));
}

TEST(PluginLoader, BuildTagMismatch) {
  TempPluginDir dir;
  auto library = dir.install("fixture_good", "test::good", "1.0.0", 10, [](PluginManifest& m) {
    m.build_tag = "clang-3;libc++-abi1;braze-0";
  });
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::BuildTag);
  EXPECT_THAT(error.what(), HasSubstr("found build tag \"clang-3;libc++-abi1;braze-0\""));
  EXPECT_THAT(error.what(), HasSubstr(std::string("expected build tag \"") + BRAZE_BUILD_TAG));
}

TEST(PluginLoader, MissingEntryPoint) {
  TempPluginDir dir;
  auto library = dir.install("fixture_no_entry", "test::no_entry", "1.0.0");
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::EntrySymbol);
  EXPECT_THAT(error.what(), HasSubstr("expected an exported symbol braze_plugin_info"));
}

TEST(PluginLoader, DlopenFails) {
  TempPluginDir dir;
  auto library = dir.install("fixture_unresolved", "test::unresolved", "1.0.0");
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Open);
  EXPECT_THAT(error.what(), HasSubstr("failed the open check: expected dlopen(RTLD_NOW"));
  EXPECT_THAT(error.what(), HasSubstr("braze_fixture_symbol_defined_nowhere"));
}

TEST(PluginLoader, IdentityDiffersFromManifest) {
  TempPluginDir dir;
  auto library = dir.install(
      "fixture_good", "test::good", "1.0.0", 10,
      [](PluginManifest& m) { m.schedulers[0].id = "test::renamed"; }, "renamed");
  PluginError error = expectPluginError([&] { loadPlugin(library); });
  EXPECT_EQ(error.stage(), PluginStage::Identity);
  EXPECT_THAT(error.what(), HasSubstr("\"test::renamed@1.0.0\" (manifest)"));
  EXPECT_THAT(error.what(), HasSubstr("\"test::good@1.0.0\" (library)"));
}

TEST(PluginLoader, InspectReportsEachCheck) {
  TempPluginDir dir;
  auto library = dir.install(
      "fixture_good", "test::good", "1.0.0", 10, [](PluginManifest& m) { m.build_tag = "other"; },
      "inspected");
  std::vector<PluginCheck> checks = inspectPlugin(library, true);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_TRUE(checks[0].passed);
  EXPECT_TRUE(checks[2].passed);
  EXPECT_FALSE(checks[3].passed);
  EXPECT_EQ(checks[3].stage, PluginStage::BuildTag);
}

}  // namespace
}  // namespace braze
