// The SDK's parameter codec: every field kind round-trips, the summary reads well, and foreign,
// stale or truncated bytes are refused with what was expected.

#include "braze/sdk/param_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

enum class Strategy : int32_t { Warp, Block, Grid };
std::ostream& operator<<(std::ostream& os, Strategy s) {
  return os << (s == Strategy::Warp ? "warp" : s == Strategy::Block ? "block" : "grid");
}
enum class Silent : int8_t { A, B };  // no operator<<: printed as a number

struct TestParams {
  static constexpr char kMagic[5] = "TEST";
  static constexpr uint8_t kFormatVersion = 3;
  static constexpr const char* kName = "test";
  int64_t threads = 128;
  int32_t unroll = -2;
  bool unswitch = false;
  Strategy strategy = Strategy::Block;
  Silent silent = Silent::B;
  double ratio = 0.375;
  bool operator==(const TestParams&) const = default;
  template <typename P, typename F>
  static void forEachField(P& p, F&& f) {
    f("threads", p.threads);
    f("unroll", p.unroll);
    f("unswitch", p.unswitch);
    f("strategy", p.strategy);
    f("silent", p.silent);
    f("ratio", p.ratio);
  }
};

TEST(ParamCodec, EveryFieldKindRoundTrips) {
  TestParams params;
  params.threads = int64_t{1} << 40;
  params.unroll = -7;
  params.unswitch = true;
  params.strategy = Strategy::Grid;
  params.silent = Silent::A;
  params.ratio = -1.0e-300;
  const std::vector<uint8_t> bytes = sdk::encodeParams(params);
  EXPECT_EQ(bytes.size(), 4u + 1u + 6u * 8u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "TEST");
  EXPECT_EQ(bytes[4], 3);
  EXPECT_EQ(sdk::decodeParams<TestParams>(bytes), params);
  EXPECT_NE(sdk::hashParams(params), sdk::hashParams(TestParams{}));
  EXPECT_EQ(sdk::hashParams(sdk::decodeParams<TestParams>(bytes)), sdk::hashParams(params));
}

TEST(ParamCodec, DescribesEveryField) {
  EXPECT_EQ(sdk::describeParams(TestParams{}, "test"),
            "test{threads=128, unroll=-2, unswitch=false, strategy=block, silent=1, "
            "ratio=0.375}");
}

TEST(ParamCodec, RefusesForeignStaleAndTruncatedBytes) {
  std::vector<uint8_t> bytes = sdk::encodeParams(TestParams{});
  std::vector<uint8_t> foreign = bytes;
  foreign[0] = 'X';
  EXPECT_THAT([&] { sdk::decodeParams<TestParams>(foreign); },
              ThrowsMessage<Error>(HasSubstr("expected bytes starting with \"TEST\"")));
  std::vector<uint8_t> stale = bytes;
  stale[4] = 2;
  EXPECT_THAT([&] { sdk::decodeParams<TestParams>(stale); },
              ThrowsMessage<Error>(HasSubstr("expected format version 3, found 2")));
  bytes.pop_back();
  EXPECT_THAT([&] { sdk::decodeParams<TestParams>(bytes); },
              ThrowsMessage<Error>(HasSubstr("expected 53 bytes for format version 3, found 52")));
  EXPECT_THAT([&] { sdk::decodeParams<TestParams>({}); },
              ThrowsMessage<Error>(HasSubstr("found 0 bytes")));
}

TEST(ParamCodec, RefusesABoolThatIsNeitherZeroNorOne) {
  std::vector<uint8_t> bytes = sdk::encodeParams(TestParams{});
  bytes[4 + 1 + 2 * 8] = 2;  // unswitch, the third field
  EXPECT_THAT([&] { sdk::decodeParams<TestParams>(bytes); },
              ThrowsMessage<Error>(HasSubstr("field unswitch must be 0 or 1, found 2")));
}

}  // namespace
}  // namespace braze
