#pragma once

// Checking that a call fails with a braze::Error whose message says the right things.

#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "braze/error.h"

namespace braze::test {

/// Runs `action` and succeeds when it throws a braze::Error whose message contains every one
/// of `fragments`. Returning normally, throwing another exception type, or a message missing
/// a fragment fails, showing the message.
///
///   EXPECT_TRUE(throwsError([&] { evaluateFusionTensors(fusion, {x}); }, {"index_select", "7"}));
template <typename Action>
::testing::AssertionResult throwsError(Action&& action,
                                       std::initializer_list<std::string_view> fragments) {
  try {
    action();
  } catch (const Error& error) {
    const std::string message = error.what();
    for (std::string_view fragment : fragments) {
      if (message.find(fragment) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "the error message lacks \"" << fragment << "\":\n  " << message;
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& other) {
    return ::testing::AssertionFailure()
           << "threw a std::exception that is not a braze::Error: " << other.what();
  }
  return ::testing::AssertionFailure() << "no braze::Error was thrown";
}

}  // namespace braze::test
