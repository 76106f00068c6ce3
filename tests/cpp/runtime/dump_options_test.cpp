#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "braze/runtime/dump_options.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

TEST(DumpOptionsTest, ParsesACommaSeparatedList) {
  const DumpOptions options = DumpOptions::parse("cuda_kernel, launch_params,ptx");
  EXPECT_TRUE(options.cuda_kernel);
  EXPECT_TRUE(options.launch_params);
  EXPECT_TRUE(options.ptx);
  EXPECT_FALSE(options.fusion);
  EXPECT_FALSE(options.scheduled);
  EXPECT_FALSE(options.lowering);
  EXPECT_FALSE(options.compile_log);
}

TEST(DumpOptionsTest, EverySwitchHasAName) {
  const DumpOptions all =
      DumpOptions::parse("fusion,scheduled,lowering,cuda_kernel,ptx,compile_log,launch_params");
  EXPECT_TRUE(all.fusion && all.scheduled && all.lowering && all.cuda_kernel && all.ptx &&
              all.compile_log && all.launch_params);
  const DumpOptions none = DumpOptions::parse(" , ,");
  EXPECT_FALSE(none.fusion || none.scheduled || none.lowering || none.cuda_kernel || none.ptx ||
               none.compile_log || none.launch_params);
}

TEST(DumpOptionsTest, AnUnknownSwitchListsTheValidOnes) {
  EXPECT_TRUE(test::throwsError(
      [] { DumpOptions::parse("ptx,kernel"); },
      {"BRAZE_DUMP: unknown switch 'kernel'", "cuda_kernel", "launch_params", "compile_log"}));
}

TEST(DumpOptionsTest, ReadsTheEnvironmentOnlyWhenAsked) {
  ::setenv("BRAZE_DUMP", "launch_params", 1);
  const DumpOptions options = DumpOptions::fromEnvironment();
  ::unsetenv("BRAZE_DUMP");
  EXPECT_TRUE(options.launch_params);
  EXPECT_FALSE(DumpOptions::fromEnvironment().launch_params);
}

TEST(DumpOptionsTest, WritesToTheGivenStream) {
  std::ostringstream out;
  DumpOptions options;
  EXPECT_EQ(&options.out(), &std::cerr);
  options.stream = &out;
  options.out() << "x";
  EXPECT_EQ(out.str(), "x");
}

}  // namespace
}  // namespace braze
