/* The plain-C contract between Braze and a scheduler plugin.
 *
 * A plugin is a shared library exporting one extern "C" function, `braze_plugin_info`, that
 * returns a BrazePluginInfo. Only plain C crosses this boundary: size-prefixed structs that
 * only grow by appending fields at the end, function pointers, UTF-8 strings, opaque handles,
 * and a status plus message instead of exceptions. Vendors normally do not fill these tables
 * by hand: braze/sdk/scheduler_plugin.h does it from a C++ class.
 *
 * The fusion is passed as `const braze::Fusion*` (or `braze::Fusion*` to schedule) cast to
 * `void*`, and runtime information as `const braze::SchedulerRuntimeInfo*`: plugin code uses
 * the core's C++ API on them, which is why BRAZE_BUILD_TAG must match before anything else
 * is called. */
#ifndef BRAZE_SDK_PLUGIN_ABI_H
#define BRAZE_SDK_PLUGIN_ABI_H

#ifdef __cplusplus
#include <cstddef> /* also defines _GLIBCXX_USE_CXX11_ABI / _LIBCPP_VERSION for the tag */
#include <cstdint>
#else
#include <stddef.h>
#include <stdint.h>
#endif

/* Plugin ABI version. The major must be equal on both sides; the minor is negotiated down to
 * what both sides know (a newer plugin is not refused only for being newer). */
#define BRAZE_PLUGIN_ABI_MAJOR 1
#define BRAZE_PLUGIN_ABI_MINOR 2

/* Major version of libbraze_core's C++ ABI (its SOVERSION). */
#ifndef BRAZE_ABI_MAJOR
#define BRAZE_ABI_MAJOR 0
#endif

#define BRAZE_DETAIL_STR2(x) #x
#define BRAZE_DETAIL_STR(x) BRAZE_DETAIL_STR2(x)

/* Compiler family and major version: C++ objects cross the boundary inside `schedule`. */
#if defined(__clang__)
#define BRAZE_DETAIL_COMPILER "clang-" BRAZE_DETAIL_STR(__clang_major__)
#elif defined(__GNUC__)
#define BRAZE_DETAIL_COMPILER "gcc-" BRAZE_DETAIL_STR(__GNUC__)
#elif defined(_MSC_VER)
#define BRAZE_DETAIL_COMPILER "msvc-" BRAZE_DETAIL_STR(_MSC_VER)
#else
#define BRAZE_DETAIL_COMPILER "unknown"
#endif

/* C++ standard library and its ABI (libstdc++'s dual ABI changes std::string's layout). */
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define BRAZE_DETAIL_STDLIB "libstdc++-cxx11abi" BRAZE_DETAIL_STR(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define BRAZE_DETAIL_STDLIB "libc++-abi" BRAZE_DETAIL_STR(_LIBCPP_ABI_VERSION)
#elif defined(_MSC_VER)
#define BRAZE_DETAIL_STDLIB "msvcstl"
#else
#define BRAZE_DETAIL_STDLIB "unknown-stdlib"
#endif

/* The build tag: "gcc-12;libstdc++-cxx11abi1;braze-0". Must equal the host's exactly. */
#define BRAZE_BUILD_TAG \
  BRAZE_DETAIL_COMPILER ";" BRAZE_DETAIL_STDLIB ";braze-" BRAZE_DETAIL_STR(BRAZE_ABI_MAJOR)

/* Name of the one exported entry point. */
#define BRAZE_PLUGIN_ENTRY_SYMBOL "braze_plugin_info"

#if defined(_WIN32)
#define BRAZE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define BRAZE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. DECLINED is not an error: the scheduler does not take the fusion and says why
 * in the message. ERROR means the call failed (an exception inside the plugin, a bug). */
typedef enum BrazeStatusCode {
  BRAZE_STATUS_OK = 0,
  BRAZE_STATUS_DECLINED = 1,
  BRAZE_STATUS_ERROR = 2
} BrazeStatusCode;

/* Result of a call. `message` (UTF-8, NUL-terminated, may be NULL when OK) is owned by the
 * plugin and stays valid until the next call on the same handle or its destruction; for
 * `create`, until the next `create` on the same thread. */
typedef struct BrazeStatus {
  int32_t code;
  const char* message;
} BrazeStatus;

/* Bytes owned by the plugin, valid like BrazeStatus::message. */
typedef struct BrazeBytes {
  const uint8_t* data;
  size_t size;
} BrazeBytes;

/* Text owned by the plugin, valid like BrazeStatus::message. */
typedef struct BrazeString {
  const char* data;
  size_t size;
} BrazeString;

typedef struct BrazeAbiVersion {
  uint32_t major;
  uint32_t minor;
} BrazeAbiVersion;

/* A scheduler's ruling on params it computed in an earlier build (ABI 1.1, review_params). */
typedef enum BrazeReviewVerdict {
  BRAZE_REVIEW_KEEP = 0,       /* still what it would choose: the host schedules with them */
  BRAZE_REVIEW_RECOMPUTE = 1,  /* run the heuristics again */
  BRAZE_REVIEW_UNSUPPORTED = 2 /* the fusion is no longer this scheduler's: segment again */
} BrazeReviewVerdict;

/* One scheduler instance, created per use; opaque to the host. */
typedef struct BrazeSchedulerHandleImpl* BrazeSchedulerHandle;

/* One scheduler: identity, then its functions. Append-only; read fields past the ones a side
 * knows only when struct_size says they are present. */
typedef struct BrazeSchedulerInfo {
  uint32_t struct_size;
  const char* id;          /* "vendor::name" */
  const char* version;     /* semantic version "x.y.z" */
  int32_t default_rank;    /* lower ranks are tried first */
  const char* description; /* one line */

  BrazeSchedulerHandle (*create)(BrazeStatus* status);
  void (*destroy)(BrazeSchedulerHandle handle);
  /* Structural check: OK, or DECLINED with the reason. `fusion` is a const braze::Fusion*. */
  void (*can_schedule_compile_time)(BrazeSchedulerHandle handle, const void* fusion,
                                    BrazeStatus* status);
  /* Sizes, alignment, device: `runtime_info` is a const braze::SchedulerRuntimeInfo*. */
  void (*can_schedule_run_time)(BrazeSchedulerHandle handle, const void* fusion,
                                const void* runtime_info, BrazeStatus* status);
  /* Heuristic parameters, encoded by the plugin, opaque to the host. */
  void (*compute_heuristics)(BrazeSchedulerHandle handle, const void* fusion,
                             const void* runtime_info, BrazeBytes* params, BrazeStatus* status);
  /* A printable, one-line summary of encoded parameters. */
  void (*describe_params)(BrazeSchedulerHandle handle, BrazeBytes params, BrazeString* summary,
                          BrazeStatus* status);
  /* Applies scheduling primitives to `fusion` (a braze::Fusion*) according to `params`. */
  void (*schedule)(BrazeSchedulerHandle handle, void* fusion, BrazeBytes params,
                   BrazeStatus* status);
  /* ABI 1.1; may be NULL (the host then recomputes). Rules on `params`, computed for `fusion`
   * by the build of this scheduler id whose version was `old_version`, now that a different
   * build of the plugin is loaded: writes a BrazeReviewVerdict to `verdict`. Called only
   * when the plugin library changed since the params were kept in a persistent cache. */
  void (*review_params)(BrazeSchedulerHandle handle, const void* fusion, const void* runtime_info,
                        const char* old_version, BrazeBytes params, int32_t* verdict,
                        BrazeStatus* status);
  /* ABI 1.2; may be NULL (the params are then opaque to the host). The fields of this
   * scheduler's encoded params, so that a host can show and edit them by name: one line per
   * field, "<name> <kind> <offset>", where kind is int64, bool or float64 and the field is the
   * 8 little-endian bytes at byte `offset` of the params (float64 as its IEEE bits). Empty
   * text when the params have no editable fields. */
  void (*param_fields)(BrazeSchedulerHandle handle, BrazeString* fields, BrazeStatus* status);
} BrazeSchedulerInfo;

/* What `braze_plugin_info` returns; static for the life of the library. Append-only. */
typedef struct BrazePluginInfo {
  uint32_t struct_size;
  BrazeAbiVersion abi;
  const char* build_tag;       /* BRAZE_BUILD_TAG as the plugin was compiled */
  const char* package_version; /* semantic version of the plugin package */
  uint32_t scheduler_count;
  /* Pointers, not an array of structs, so that BrazeSchedulerInfo may grow. */
  const BrazeSchedulerInfo* const* schedulers;
} BrazePluginInfo;

typedef const BrazePluginInfo* (*BrazePluginEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* BRAZE_SDK_PLUGIN_ABI_H */
