// Kernel entry files: encoding, and decoding that checks everything before it trusts it.

#include <flatbuffers/flatbuffers.h>

#include "braze/driver/nvrtc_compiler.h"
#include "braze/runtime/content_hash.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/kernel_entry_generated.h"
#include "entry_files.h"

namespace braze::serde {

namespace {

// SHA-256 over every field of an entry but the hash itself, in schema order: a damaged byte
// anywhere that matters (cubin, PTX, resources, options) is caught, not only in what the key
// covers.
std::string contentHash(const std::string& key, const CompiledKernel& kernel,
                        std::string_view written_by, int64_t created) {
  ContentHasher hasher("braze-kernel-entry-1");
  hasher.add(key).add(kernel.kernelName()).add(kernel.arch().toString());
  hasher.add(std::to_string(kernel.nvrtcVersion().first) + "." +
             std::to_string(kernel.nvrtcVersion().second));
  hasher.add(static_cast<int64_t>(kernel.nvrtcOptions().size()));
  for (const std::string& option : kernel.nvrtcOptions()) hasher.add(option);
  hasher.add(kernel.source()).add(std::string_view(kernel.cubin().data(), kernel.cubin().size()));
  hasher.add(kernel.ptx()).add(kernel.compileLog());
  const KernelResources& r = kernel.resources();
  for (int64_t value :
       {int64_t{r.reported}, int64_t{r.registers}, r.stack_frame_bytes, r.spill_store_bytes,
        r.spill_load_bytes, r.static_shared_memory_bytes, int64_t{r.barriers}})
    hasher.add(value);
  hasher.add(written_by).add(created);
  return hasher.hex();
}

constexpr std::string_view kWrittenBy = "braze " BRAZE_VERSION_STRING;

std::string text(const flatbuffers::String* value) {
  return value == nullptr ? std::string() : value->str();
}

DecodedKernelEntry refuse(std::string problem, std::string key = {}) {
  DecodedKernelEntry entry;
  entry.problem = std::move(problem);
  entry.key = std::move(key);
  return entry;
}

}  // namespace

std::vector<uint8_t> encodeKernelEntry(const std::string& key, const CompiledKernel& kernel) {
  flatbuffers::FlatBufferBuilder builder(kernel.cubin().size() + kernel.source().size() +
                                         kernel.ptx().size() + 4096);
  std::vector<flatbuffers::Offset<flatbuffers::String>> options;
  options.reserve(kernel.nvrtcOptions().size());
  for (const std::string& option : kernel.nvrtcOptions())
    options.push_back(builder.CreateString(option));
  const int64_t now = detail::unixSecondsNow();
  const auto key_offset = builder.CreateString(key);
  const auto name = builder.CreateString(kernel.kernelName());
  const driver::GpuArch& target = kernel.arch();
  const auto arch = fb::CreateGpuArch(builder, target.major, target.minor, target.arch_specific);
  const auto options_offset = builder.CreateVector(options);
  const auto source = builder.CreateString(kernel.source());
  const auto cubin = builder.CreateVector(reinterpret_cast<const uint8_t*>(kernel.cubin().data()),
                                          kernel.cubin().size());
  const auto content_sha = builder.CreateString(contentHash(key, kernel, kWrittenBy, now));
  const auto ptx = builder.CreateString(kernel.ptx());
  const auto log = builder.CreateString(kernel.compileLog());
  const KernelResources& r = kernel.resources();
  const auto resources = fb::CreateKernelResources(
      builder, r.reported, r.registers, r.stack_frame_bytes, r.spill_store_bytes,
      r.spill_load_bytes, r.static_shared_memory_bytes, r.barriers);
  const auto written_by = builder.CreateString(kWrittenBy.data(), kWrittenBy.size());
  const auto entry = fb::CreateKernelEntry(
      builder, static_cast<uint32_t>(fb::KernelEntryVersion::Current), key_offset, name, arch,
      kernel.nvrtcVersion().first, kernel.nvrtcVersion().second, options_offset, source, cubin,
      content_sha, ptx, log, resources, written_by, now);
  fb::FinishKernelEntryBuffer(builder, entry);
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

DecodedKernelEntry decodeKernelEntry(std::span<const uint8_t> bytes,
                                     const std::string& expected_key) {
  if (bytes.empty()) return refuse("the file is empty");
  if (static_cast<int64_t>(bytes.size()) > kMaxKernelEntryBytes)
    return refuse("the file is larger than any kernel entry (" + std::to_string(bytes.size()) +
                  " bytes)");
  if (bytes.size() < 8 || !fb::KernelEntryBufferHasIdentifier(bytes.data()))
    return refuse("not a Braze kernel entry (no 'BRZK' file identifier)");
  // The verifier bounds every offset and length by the buffer before anything is read.
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), /*max_depth=*/16,
                                 /*max_tables=*/4096);
  if (!fb::VerifyKernelEntryBuffer(verifier))
    return refuse("corrupt or truncated (the flatbuffers verifier refused it)");
  const fb::KernelEntry* entry = fb::GetKernelEntry(bytes.data());
  const std::string key = text(entry->key());
  if (entry->schema_version() != static_cast<uint32_t>(fb::KernelEntryVersion::Current))
    return refuse("written with kernel entry schema version " +
                      std::to_string(entry->schema_version()) + ", this Braze reads version " +
                      std::to_string(static_cast<uint32_t>(fb::KernelEntryVersion::Current)),
                  key);
  if (entry->key() == nullptr || entry->kernel_name() == nullptr || entry->arch() == nullptr ||
      entry->nvrtc_options() == nullptr || entry->source() == nullptr ||
      entry->cubin() == nullptr || entry->content_sha256() == nullptr)
    return refuse("a required field is missing", key);
  if (!expected_key.empty() && key != expected_key)
    return refuse("stored under " + expected_key + " but holds the kernel of " + key, key);

  CompiledKernel::Parts parts;
  parts.source = entry->source()->str();
  parts.kernel_name = entry->kernel_name()->str();
  parts.arch = driver::GpuArch{entry->arch()->major(), entry->arch()->minor(),
                               entry->arch()->arch_specific()};
  for (const flatbuffers::String* option : *entry->nvrtc_options())
    parts.nvrtc_options.push_back(text(option));
  parts.nvrtc_version = {entry->nvrtc_major(), entry->nvrtc_minor()};
  if (kernelKey(parts.source, parts.kernel_name, parts.nvrtc_options, parts.nvrtc_version) != key)
    return refuse("its source, name, options or NVRTC version do not hash to its key", key);
  const std::span<const uint8_t> cubin(entry->cubin()->data(), entry->cubin()->size());
  if (cubin.empty()) return refuse("it holds no cubin", key);
  parts.cubin.assign(reinterpret_cast<const char*>(cubin.data()),
                     reinterpret_cast<const char*>(cubin.data()) + cubin.size());
  parts.ptx = text(entry->ptx());
  parts.compile_log = text(entry->compile_log());
  if (const fb::KernelResources* r = entry->resources()) {
    parts.resources = KernelResources{r->reported(),          r->registers(),
                                      r->stack_frame_bytes(), r->spill_store_bytes(),
                                      r->spill_load_bytes(),  r->static_shared_memory_bytes(),
                                      r->barriers()};
  }
  CompiledKernel kernel = CompiledKernel::restore(std::move(parts));
  if (contentHash(key, kernel, text(entry->written_by()), entry->created_unix_seconds()) !=
      entry->content_sha256()->str())
    return refuse("its contents do not match their SHA-256 (the file was damaged)", key);
  DecodedKernelEntry decoded;
  decoded.key = key;
  decoded.written_by = text(entry->written_by());
  decoded.created_unix_seconds = entry->created_unix_seconds();
  decoded.kernel = std::move(kernel);
  return decoded;
}

}  // namespace braze::serde
