#include "braze/serde/runtime_cache.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>

#include "braze/error.h"
#include "braze/runtime/content_hash.h"
#include "braze/serde/runtime_entry_generated.h"
#include "entry_files.h"
#include "kernel_recipe_codec.h"

namespace braze::serde {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEntrySuffix = ".bzr";
constexpr std::string_view kWrittenBy = "braze " BRAZE_VERSION_STRING;

std::string contentHash(const std::string& key, const RuntimeDecisions& decisions,
                        std::string_view written_by, int64_t created) {
  ContentHasher hasher("braze-runtime-entry-1");
  hasher.add(key).add(static_cast<int64_t>(decisions.segments.size()));
  for (const RuntimeDecisions::Segment& segment : decisions.segments) {
    hasher.add(static_cast<int64_t>(segment.exprs.size()));
    for (int64_t expr : segment.exprs) hasher.add(expr);
    hasher.add(static_cast<int64_t>(segment.outputs.size()));
    for (const auto& [expr, slot] : segment.outputs) hasher.add(expr).add(slot);
    hasher.add(segment.scheduler).add(segment.plugin_sha256);
    hasher.add(std::span<const uint8_t>(segment.params)).add(segment.summary);
    hasher.add(int64_t{segment.kernel.has_value()});
    if (segment.kernel) detail::hashKernelRecipe(hasher, *segment.kernel);
  }
  hasher.add(written_by).add(created);
  return hasher.hex();
}

DecodedRuntimeEntry refuse(std::string problem) {
  DecodedRuntimeEntry entry;
  entry.problem = std::move(problem);
  return entry;
}

std::string text(const flatbuffers::String* value) {
  return value == nullptr ? std::string() : value->str();
}

}  // namespace

std::vector<uint8_t> encodeRuntimeEntry(const std::string& key, const RuntimeDecisions& decisions) {
  flatbuffers::FlatBufferBuilder builder(4096);
  const int64_t now = detail::unixSecondsNow();
  // Positions are stored as 32-bit (runtime_entry.fbs); no fusion has 2^31 Exprs.
  auto position = [](int64_t value) {
    BRAZE_USER_CHECK(value >= 0 && value <= INT32_MAX)
        << "encodeRuntimeEntry: position " << value << " does not fit a runtime entry";
    return static_cast<int32_t>(value);
  };
  std::vector<flatbuffers::Offset<fb::SegmentDecision>> segments;
  for (const RuntimeDecisions::Segment& segment : decisions.segments) {
    std::vector<flatbuffers::Offset<fb::SegmentOutput>> outputs;
    for (const auto& [expr, slot] : segment.outputs)
      outputs.push_back(fb::CreateSegmentOutput(builder, position(expr), position(slot)));
    std::vector<int32_t> exprs;
    for (int64_t expr : segment.exprs) exprs.push_back(position(expr));
    const auto kernel = segment.kernel ? detail::encodeKernelRecipe(builder, *segment.kernel) : 0;
    segments.push_back(fb::CreateSegmentDecision(
        builder, builder.CreateVector(exprs), builder.CreateVector(outputs),
        builder.CreateString(segment.scheduler), builder.CreateString(segment.plugin_sha256),
        builder.CreateVector(segment.params), builder.CreateString(segment.summary), kernel));
  }
  const auto entry = fb::CreateRuntimeEntry(
      builder, static_cast<uint32_t>(fb::RuntimeEntryVersion::Current), builder.CreateString(key),
      builder.CreateVector(segments), builder.CreateString(kWrittenBy.data(), kWrittenBy.size()),
      now, builder.CreateString(contentHash(key, decisions, kWrittenBy, now)));
  fb::FinishRuntimeEntryBuffer(builder, entry);
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

DecodedRuntimeEntry decodeRuntimeEntry(std::span<const uint8_t> bytes,
                                       const std::string& expected_key) {
  if (bytes.empty()) return refuse("the file is empty");
  if (static_cast<int64_t>(bytes.size()) > kMaxRuntimeEntryBytes)
    return refuse("the file is larger than any runtime entry");
  if (bytes.size() < 8 || !fb::RuntimeEntryBufferHasIdentifier(bytes.data()))
    return refuse("not a Braze runtime entry (no 'BRZR' file identifier)");
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), /*max_depth=*/16,
                                 /*max_tables=*/1 << 20);
  if (!fb::VerifyRuntimeEntryBuffer(verifier))
    return refuse("corrupt or truncated (the flatbuffers verifier refused it)");
  const fb::RuntimeEntry* entry = fb::GetRuntimeEntry(bytes.data());
  if (entry->schema_version() != static_cast<uint32_t>(fb::RuntimeEntryVersion::Current))
    return refuse("written with runtime entry schema version " +
                  std::to_string(entry->schema_version()) + ", this Braze reads version " +
                  std::to_string(static_cast<uint32_t>(fb::RuntimeEntryVersion::Current)));
  if (entry->key() == nullptr || entry->segments() == nullptr || entry->content_sha256() == nullptr)
    return refuse("a required field is missing");
  const std::string key = entry->key()->str();
  if (!expected_key.empty() && key != expected_key)
    return refuse("stored under " + expected_key + " but holds the decisions of " + key);
  RuntimeDecisions decisions;
  for (const fb::SegmentDecision* stored : *entry->segments()) {
    RuntimeDecisions::Segment segment;
    if (stored->exprs() != nullptr)
      segment.exprs.assign(stored->exprs()->begin(), stored->exprs()->end());
    if (stored->outputs() != nullptr) {
      for (const fb::SegmentOutput* output : *stored->outputs())
        segment.outputs.emplace_back(output->expr(), output->slot());
    }
    const bool negative =
        std::any_of(segment.exprs.begin(), segment.exprs.end(), [](int64_t e) { return e < 0; }) ||
        std::any_of(segment.outputs.begin(), segment.outputs.end(),
                    [](const auto& output) { return output.first < 0 || output.second < 0; });
    if (negative) return refuse("a segment names a negative position");
    segment.scheduler = text(stored->scheduler());
    segment.plugin_sha256 = text(stored->plugin_sha256());
    if (stored->params() != nullptr)
      segment.params.assign(stored->params()->begin(), stored->params()->end());
    segment.summary = text(stored->summary());
    if (stored->kernel() != nullptr) {
      std::string problem;
      segment.kernel = detail::decodeKernelRecipe(*stored->kernel(), problem);
      if (!segment.kernel) return refuse("a kernel recipe cannot be read: " + problem);
    }
    decisions.segments.push_back(std::move(segment));
  }
  if (contentHash(key, decisions, text(entry->written_by()), entry->created_unix_seconds()) !=
      entry->content_sha256()->str())
    return refuse("its contents do not match their SHA-256 (the file was damaged)");
  DecodedRuntimeEntry decoded;
  decoded.decisions = std::move(decisions);
  return decoded;
}

RuntimeCache::RuntimeCache(CacheOptions options) : options_(std::move(options)) {}

fs::path RuntimeCache::entryPath(const std::string& key) const {
  return options_.directory / "runtimes" / (key + std::string(kEntrySuffix));
}

void RuntimeCache::report(const std::string& message) const {
  if (options_.log == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  *options_.log << "braze: runtime cache " << options_.directory.string() << ": " << message
                << "\n";
}

std::optional<RuntimeDecisions> RuntimeCache::find(const std::string& key) {
  const fs::path path = entryPath(key);
  std::string problem;
  std::optional<std::vector<uint8_t>> bytes =
      detail::readCapped(path, kMaxRuntimeEntryBytes, problem);
  DecodedRuntimeEntry decoded;
  if (bytes) decoded = decodeRuntimeEntry(*bytes, key);
  if (!bytes || !decoded.decisions) {
    const bool absent = !bytes && problem == "absent";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++(absent ? counters_.misses : counters_.skipped);
    }
    if (!absent)
      report("skipping " + path.filename().string() + ": " + (bytes ? decoded.problem : problem));
    return std::nullopt;
  }
  // Last use, for pruning.
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.hits;
  return std::move(decoded.decisions);
}

void RuntimeCache::insert(const std::string& key, const RuntimeDecisions& decisions) {
  std::optional<std::string> problem;
  try {
    problem = detail::isKey(key) ? detail::writeAtomically(options_.directory / "runtimes",
                                                           key + std::string(kEntrySuffix),
                                                           encodeRuntimeEntry(key, decisions))
                                 : std::optional<std::string>("'" + key + "' is not a runtime key");
  } catch (const Error& error) {
    problem = error.what();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++(problem ? counters_.write_failures : counters_.writes);
  }
  if (problem) {
    report("cannot keep the decisions of a runtime: " + *problem);
    return;
  }
  detail::pruneLeastRecentlyUsed(options_.directory / "runtimes", kEntrySuffix,
                                 options_.max_runtime_bytes);
}

RuntimeCacheCounters RuntimeCache::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

int64_t RuntimeCache::clear() {
  return detail::removeEntries(options_.directory / "runtimes", kEntrySuffix);
}

std::vector<RuntimeCache::EntryInfo> RuntimeCache::entries() const {
  std::vector<EntryInfo> result;
  std::error_code error;
  for (fs::directory_iterator it(options_.directory / "runtimes", error), end; !error && it != end;
       it.increment(error)) {
    const fs::path& path = it->path();
    if (path.extension() != kEntrySuffix || path.filename().string()[0] == '.') continue;
    EntryInfo info;
    info.path = path;
    info.key = path.stem().string();
    std::error_code ignored;
    info.bytes = static_cast<int64_t>(fs::file_size(path, ignored));
    std::string problem;
    std::optional<std::vector<uint8_t>> bytes =
        detail::readCapped(path, kMaxRuntimeEntryBytes, problem);
    if (!bytes) {
      info.problem = problem;
    } else if (!detail::isKey(info.key)) {
      info.problem = "its name is not a runtime key";
    } else {
      DecodedRuntimeEntry decoded = decodeRuntimeEntry(*bytes, info.key);
      info.valid = decoded.decisions.has_value();
      info.problem = decoded.problem;
      if (decoded.decisions)
        info.segments = static_cast<int64_t>(decoded.decisions->segments.size());
    }
    result.push_back(std::move(info));
  }
  return result;
}

int64_t RuntimeCache::removeInvalid() {
  int64_t removed = 0;
  for (const EntryInfo& entry : entries()) {
    std::error_code ignored;
    if (!entry.valid && fs::remove(entry.path, ignored)) ++removed;
  }
  return removed;
}

void useDefaultPersistentCache() {
  useDefaultKernelCache();
  registerDefaultDecisionStoreFactory([]() -> std::shared_ptr<DecisionStore> {
    std::optional<CacheOptions> options = defaultCacheOptions();
    return options ? std::make_shared<RuntimeCache>(std::move(*options)) : nullptr;
  });
}

}  // namespace braze::serde
