// Kernel bundles: a cache's valid entries in one file (KernelCache::save / load).

#include <flatbuffers/flatbuffers.h>
#include <unistd.h>

#include <fstream>

#include "braze/error.h"
#include "braze/serde/kernel_bundle_generated.h"
#include "braze/serde/kernel_cache.h"

namespace braze::serde {

namespace fs = std::filesystem;

int64_t KernelCache::save(const fs::path& path) const {
  flatbuffers::FlatBufferBuilder builder(1 << 20);
  std::vector<flatbuffers::Offset<fb::KernelBundleEntry>> entries;
  for (const KernelEntryInfo& info : this->entries()) {
    if (!info.valid) continue;
    std::ifstream file(info.path, std::ios::binary);
    std::vector<uint8_t> bytes(static_cast<size_t>(info.bytes));
    if (!file.read(reinterpret_cast<char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size())))
      continue;  // removed since it was listed
    entries.push_back(fb::CreateKernelBundleEntry(builder, builder.CreateString(info.key),
                                                  builder.CreateVector(bytes)));
  }
  const auto count = static_cast<int64_t>(entries.size());
  fb::FinishKernelBundleBuffer(
      builder,
      fb::CreateKernelBundle(builder, static_cast<uint32_t>(fb::KernelBundleVersion::Current),
                             builder.CreateVector(entries)));
  const fs::path temporary = path.string() + "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(builder.GetBufferPointer()),
               static_cast<std::streamsize>(builder.GetSize()));
    file.flush();
    BRAZE_USER_CHECK(file) << "KernelCache::save: cannot write " << temporary.string()
                           << "; check that its folder exists and is writable";
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    BRAZE_USER_CHECK(false) << "KernelCache::save: cannot move " << temporary.string() << " to "
                            << path.string() << ": " << error.message();
  }
  return count;
}

KernelCache::LoadReport KernelCache::load(const fs::path& path) {
  LoadReport report;
  auto refuse = [&](const std::string& why) {
    report.problems.push_back(path.string() + ": " + why);
    return report;
  };
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return refuse("not a readable file");
  const uintmax_t size = fs::file_size(path, error);
  if (error) return refuse("its size cannot be read: " + error.message());
  if (size > static_cast<uintmax_t>(kMaxKernelBundleBytes))
    return refuse("larger than any kernel bundle (" + std::to_string(size) + " bytes)");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  std::ifstream file(path, std::ios::binary);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return refuse("it cannot be read");
  if (bytes.size() < 8 || !fb::KernelBundleBufferHasIdentifier(bytes.data()))
    return refuse("not a Braze kernel bundle (no 'BRZB' file identifier)");
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), /*max_depth=*/16,
                                 /*max_tables=*/1 << 20);
  if (!fb::VerifyKernelBundleBuffer(verifier))
    return refuse("corrupt or truncated (the flatbuffers verifier refused it)");
  const fb::KernelBundle* bundle = fb::GetKernelBundle(bytes.data());
  if (bundle->schema_version() != static_cast<uint32_t>(fb::KernelBundleVersion::Current))
    return refuse("written with kernel bundle schema version " +
                  std::to_string(bundle->schema_version()) + ", this Braze reads version " +
                  std::to_string(static_cast<uint32_t>(fb::KernelBundleVersion::Current)));
  if (bundle->entries() == nullptr) return report;
  for (const fb::KernelBundleEntry* entry : *bundle->entries()) {
    const std::string key = entry->key() ? entry->key()->str() : std::string();
    if (entry->entry() == nullptr) {
      ++report.skipped;
      report.problems.push_back("entry " + key + ": empty");
      continue;
    }
    // A copy: the entry's bytes sit at any offset of the bundle, and its 8-byte fields must be
    // read from an aligned buffer.
    const std::vector<uint8_t> entry_bytes(entry->entry()->begin(), entry->entry()->end());
    const DecodedKernelEntry decoded = decodeKernelEntry(entry_bytes, key);
    if (!decoded.kernel) {
      ++report.skipped;
      report.problems.push_back("entry " + key + ": " + decoded.problem);
      continue;
    }
    if (std::optional<std::string> problem = writeEntry(key, entry_bytes)) {
      ++report.skipped;
      report.problems.push_back("entry " + key + ": " + *problem);
      continue;
    }
    ++report.added;
  }
  prune(options_.max_bytes);
  return report;
}

}  // namespace braze::serde
