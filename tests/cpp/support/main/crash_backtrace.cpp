// Linked into every test binary: a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints the
// running test and a backtrace to stderr before the process dies, so a crash on a machine
// without a debugger (the GPU machine) still says where it happened.

#include <execinfo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace {

void writeText(const char* text) {
  // Only async-signal-safe calls from here on.
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void onCrash(int signal) {
  writeText("\n*** braze test binary: fatal signal ");
  writeText(strsignal(signal));
  if (const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info()) {
    writeText(" in ");
    writeText(test->test_suite_name());
    writeText(".");
    writeText(test->name());
  }
  writeText("; backtrace:\n");
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderSanitizer = true;  // the sanitizer's own report says more
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderSanitizer = true;
#else
constexpr bool kUnderSanitizer = false;
#endif
#else
constexpr bool kUnderSanitizer = false;
#endif

const bool installed = [] {
  if (kUnderSanitizer) return false;
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal, onCrash);
  return true;
}();

}  // namespace
