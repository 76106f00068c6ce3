#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace braze {

/// The one exception type Braze throws. `what()` is a message for a person: what was wrong,
/// where, and what to do about it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

/// Collects a message with `<<`. Used only through the macros below, so the message is built
/// only when a check fails.
class MessageBuilder {
 public:
  MessageBuilder(const char* file, int line, bool internal)
      : file_(file), line_(line), internal_(internal) {}

  template <typename T>
  MessageBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

  std::string message() const {
    std::string text = stream_.str();
    if (internal_) {
      text += " [internal error at " + std::string(file_) + ":" + std::to_string(line_) +
              "; please report]";
    }
    return text;
  }

 private:
  const char* file_;
  int line_;
  bool internal_;
  std::ostringstream stream_;
};

/// `Thrower{} & builder << ...` : `&` binds looser than `<<`, so the whole message is streamed
/// before the throw, and the [[noreturn]] lets callers skip a dummy return.
struct Thrower {
  [[noreturn]] friend void operator&(Thrower, const MessageBuilder& builder) {
    throw Error(builder.message());
  }
};

}  // namespace detail
}  // namespace braze

/// A mistake of the caller: bad shapes, dtypes, arguments. The streamed message names the
/// object, the call as written, the rule that failed, and the legal choices.
#define BRAZE_USER_CHECK(cond) \
  if (cond) {                  \
  } else                       \
    ::braze::detail::Thrower{} & ::braze::detail::MessageBuilder(__FILE__, __LINE__, false)

/// A broken invariant inside Braze. The message ends with the source location and
/// "please report".
#define BRAZE_INTERNAL_CHECK(cond) \
  if (cond) {                      \
  } else                           \
    ::braze::detail::Thrower{} & ::braze::detail::MessageBuilder(__FILE__, __LINE__, true)

/// An unconditional user error: `BRAZE_THROW() << "message";`
#define BRAZE_THROW() \
  ::braze::detail::Thrower{} & ::braze::detail::MessageBuilder(__FILE__, __LINE__, false)
