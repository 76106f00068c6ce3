#include "braze/runtime/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>

namespace braze {

namespace {

struct Search {
  const void* address;  // a function of this library
  std::string id;
};

// The NT_GNU_BUILD_ID note of the loaded object that contains `search->address`.
int findBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  const auto address = reinterpret_cast<ElfW(Addr)>(search->address);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const ElfW(Addr) start = info->dlpi_addr + segment.p_vaddr;
    contains = segment.p_type == PT_LOAD && address >= start && address < start + segment.p_memsz;
  }
  if (!contains) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const char* note = reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr);
    const char* end = note + segment.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) header;
      std::memcpy(&header, note, sizeof(header));
      const char* name = note + sizeof(header);
      const char* desc = name + ((header.n_namesz + 3) & ~3u);
      if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && desc + header.n_descsz <= end) {
        static const char* kHex = "0123456789abcdef";
        for (unsigned b = 0; b < header.n_descsz; ++b) {
          const auto byte = static_cast<unsigned char>(desc[b]);
          search->id += kHex[byte >> 4];
          search->id += kHex[byte & 15];
        }
        return 1;
      }
      note = desc + ((header.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // the right object, without a build id
}

}  // namespace

const std::string& coreBuildId() {
  static const std::string id = [] {
    Search search{reinterpret_cast<const void*>(&coreBuildId), {}};
    dl_iterate_phdr(findBuildId, &search);
    return search.id.empty() ? std::string("braze " BRAZE_VERSION_STRING) : search.id;
  }();
  return id;
}

}  // namespace braze
