// float8_e4m3fn and float8_e5m2 in the reference evaluator: casts from float32 bit for bit as
// PyTorch's non-saturating `.to(torch.float8_*)` (its algorithm on float32 bits is rewritten
// below as the oracle), decoding of every code, casts from float16, bfloat16, float64 and
// integers (through float32), and arithmetic computed in float32 and rounded once.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

// c10's fp8e4m3fn_from_fp32_value and fp8e5m2_from_fp32_value, written once for both formats
// as the kernels' runtime header (core/src/codegen/runtime/types.cuh, floatToFloat8) writes
// them: round to nearest even through integer arithmetic on the float32 bits (subnormals through
// a float addition). The constants are c10's: 480.0f and 65536.0f are where overflow starts.
template <int kMantissa, int kBias, uint32_t kOverflowBits, bool kHasInfinity>
uint8_t pytorchFloat8(float f) {
  constexpr int kShift = 23 - kMantissa;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint32_t result = 0;
  if (bits >= kOverflowBits) {
    result = (kHasInfinity && bits <= 0x7f800000u) ? (0x7fu & ~((1u << kMantissa) - 1u)) : 0x7fu;
  } else if (bits < ((127u - kBias + 1u) << 23)) {
    const uint32_t denorm = (127u - kBias + kShift + 1u) << 23;
    const float sum = std::bit_cast<float>(bits) + std::bit_cast<float>(denorm);
    result = std::bit_cast<uint32_t>(sum) - denorm;
  } else {
    const uint32_t odd = (bits >> kShift) & 1u;
    bits += (static_cast<uint32_t>(kBias - 127) << 23) + ((1u << (kShift - 1)) - 1u) + odd;
    result = bits >> kShift;
  }
  return static_cast<uint8_t>((result & 0xffu) | (sign >> 24));
}

uint8_t pytorchE4M3fn(float f) {
  return pytorchFloat8<3, 7, 1087u << 20, false>(f);
}
uint8_t pytorchE5M2(float f) {
  return pytorchFloat8<2, 15, 143u << 23, true>(f);
}

// The value of a code from the format's definition: sign, exponent bias, hidden bit.
double decode(uint8_t code, int exponent_bits, int mantissa_bits, bool has_infinity) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int exponent = (code >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = code & ((1 << mantissa_bits) - 1);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  const int all_ones = (1 << exponent_bits) - 1;
  if (has_infinity && exponent == all_ones) {
    return mantissa == 0 ? sign * INFINITY : std::numeric_limits<double>::quiet_NaN();
  }
  if (!has_infinity && exponent == all_ones && mantissa == (1 << mantissa_bits) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
  return sign * std::ldexp(mantissa + (1 << mantissa_bits), exponent - bias - mantissa_bits);
}

double decodeE4M3fn(uint8_t code) {
  return decode(code, 4, 3, false);
}
double decodeE5M2(uint8_t code) {
  return decode(code, 5, 2, true);
}

// Casts each value (given as float32) to `dtype` through the evaluator; the stored codes.
std::vector<uint8_t> castCodes(const std::vector<float>& values, DataType dtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(cast(x, dtype));
  std::vector<double> wide(values.begin(), values.end());
  const HostTensor input =
      test::tensorOf(DataType::Float32, {static_cast<int64_t>(values.size())}, wide);
  const HostTensor out = evaluateFusionTensors(fusion, {input})[0];
  EXPECT_EQ(out.dtype(), dtype);
  std::vector<uint8_t> codes(values.size());
  std::memcpy(codes.data(), out.data(), codes.size());
  return codes;
}

// Every code's value, the midpoints between neighbors (ties to even), values past the range,
// infinities, NaN, signed zeros and random float32 bit patterns of all magnitudes.
std::vector<float> probeValues(double (*decoder)(uint8_t)) {
  std::vector<float> values = {0.0f,     -0.0f,        INFINITY, -INFINITY, NAN,         -NAN,
                               1e30f,    -1e-30f,      448.0f,   464.0f,    464.01f,     479.9f,
                               480.0f,   57344.0f,     61439.0f, 61440.0f,  65536.0f,    0x1p-9f,
                               0x1p-10f, 3 * 0x1p-10f, 0x1p-16f, 0x1p-17f,  3 * 0x1p-17f};
  for (int code = 0; code < 256; ++code) {
    const double v = decoder(static_cast<uint8_t>(code));
    if (std::isnan(v)) continue;
    values.push_back(static_cast<float>(v));
    const double next = decoder(static_cast<uint8_t>(code + 1));
    if ((code & 0x7f) != 0x7f && std::isfinite(next) && std::isfinite(v)) {
      values.push_back(static_cast<float>((v + next) / 2));
      values.push_back(std::nextafter(static_cast<float>((v + next) / 2), 0.0f));
      values.push_back(std::nextafter(static_cast<float>((v + next) / 2), INFINITY));
    }
  }
  std::mt19937 engine(8);
  for (int i = 0; i < 20000; ++i) {
    // Exponents from 2^-30 to 2^20 around the formats' ranges.
    const uint32_t exponent = 97 + engine() % 51;
    const uint32_t bits = (engine() & 0x807fffffu) | (exponent << 23);
    values.push_back(std::bit_cast<float>(bits));
  }
  return values;
}

TEST(EvaluateFloat8, CastFromFloat32MatchesPyTorchBitForBit) {
  for (const auto& [dtype, oracle, decoder] :
       {std::tuple{DataType::Float8_e4m3fn, &pytorchE4M3fn, &decodeE4M3fn},
        std::tuple{DataType::Float8_e5m2, &pytorchE5M2, &decodeE5M2}}) {
    SCOPED_TRACE(toString(dtype));
    const std::vector<float> values = probeValues(decoder);
    const std::vector<uint8_t> codes = castCodes(values, dtype);
    int mismatches = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (codes[i] == oracle(values[i])) continue;
      if (++mismatches <= 10) {
        ADD_FAILURE() << values[i] << " (0x" << std::hex << std::bit_cast<uint32_t>(values[i])
                      << ") gives 0x" << int{codes[i]} << ", PyTorch 0x" << int{oracle(values[i])};
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(EvaluateFloat8, OverflowIsNanForE4M3fnAndInfinityForE5M2) {
  EXPECT_EQ(castCodes({448.0f, 464.0f, 465.0f, INFINITY, -INFINITY}, DataType::Float8_e4m3fn),
            (std::vector<uint8_t>{0x7e, 0x7e, 0x7f, 0x7f, 0xff}));
  EXPECT_EQ(castCodes({57344.0f, 61439.0f, 61440.0f, -1e9f, NAN}, DataType::Float8_e5m2),
            (std::vector<uint8_t>{0x7b, 0x7b, 0x7c, 0xfc, 0x7f}));
}

// Every code decodes to the value its format defines, through the evaluator's cast to float32.
TEST(EvaluateFloat8, EveryCodeDecodes) {
  for (const auto& [dtype, decoder] : {std::pair{DataType::Float8_e4m3fn, &decodeE4M3fn},
                                       std::pair{DataType::Float8_e5m2, &decodeE5M2}}) {
    SCOPED_TRACE(toString(dtype));
    std::vector<double> codes(256);
    for (int c = 0; c < 256; ++c) codes[c] = c;
    // Build the float8 input from its codes: an int32 tensor's bytes are not float8, so write
    // the codes into a float8 tensor directly.
    HostTensor input = HostTensor::empty(dtype, {256});
    for (int c = 0; c < 256; ++c) static_cast<uint8_t*>(input.data())[c] = static_cast<uint8_t>(c);
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1}});
    fusion.addOutput(cast(x, DataType::Float32));
    fusion.addOutput(cast(x, DataType::Float64));
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    const std::vector<double> as_float = test::valuesOf(out[0]);
    const std::vector<double> as_double = test::valuesOf(out[1]);
    for (int c = 0; c < 256; ++c) {
      const double expected = decoder(static_cast<uint8_t>(c));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(as_float[c]) && std::isnan(as_double[c])) << "code " << c;
      } else {
        EXPECT_EQ(as_float[c], expected) << "code " << c;
        EXPECT_EQ(as_double[c], expected) << "code " << c;
      }
    }
  }
}

// float16, bfloat16 and integers convert exactly to float32 first; float64 rounds to float32
// first (as PyTorch), which can differ from rounding the double directly.
TEST(EvaluateFloat8, CastsFromOtherDtypesGoThroughFloat32) {
  Fusion fusion;
  TensorView* d = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {-1}});
  TensorView* h = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::BFloat16, .sizes = {-1}});
  TensorView* i = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  for (TensorView* t : {d, h, b, i}) fusion.addOutput(cast(t, DataType::Float8_e4m3fn));
  // Just above the tie 1.0625 between 1.0 and 1.125: float32 rounds it down onto the tie, which
  // then goes to even (1.0); rounding the double directly would give 1.125.
  const double above_tie = 1.0625 + 0x1p-40;
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {test::tensorOf(DataType::Float64, {2}, {above_tie, -300.0}),
                                     test::tensorOf(DataType::Float16, {2}, {0.3, 1000.0}),
                                     test::tensorOf(DataType::BFloat16, {2}, {-0.3, 3.0e5}),
                                     test::tensorOfIntegers(DataType::Int64, {2}, {17, 100000})});
  auto code = [&](size_t k, int e) { return static_cast<const uint8_t*>(out[k].data())[e]; };
  EXPECT_EQ(code(0, 0), pytorchE4M3fn(static_cast<float>(above_tie)));
  EXPECT_EQ(test::valuesOf(out[0])[0], 1.0);
  EXPECT_EQ(code(0, 1), pytorchE4M3fn(-300.0f));
  EXPECT_EQ(code(1, 0), pytorchE4M3fn(static_cast<float>(test::roundTo(DataType::Float16, 0.3))));
  EXPECT_EQ(code(1, 1), 0x7f);  // 1000 is past 448
  EXPECT_EQ(code(2, 0), pytorchE4M3fn(static_cast<float>(test::roundTo(DataType::BFloat16, -0.3))));
  EXPECT_EQ(code(3, 0), pytorchE4M3fn(17.0f));
  EXPECT_EQ(code(3, 1), 0x7f);
}

// Arithmetic on float8 tensors computes in float32 and rounds the result once.
TEST(EvaluateFloat8, ArithmeticRoundsOnceToTheFloat8Result) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float8_e5m2, .sizes = {-1}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float8_e5m2, .sizes = {-1}});
  TensorView* sum = add(a, b);
  EXPECT_EQ(sum->dtype(), DataType::Float8_e5m2);
  fusion.addOutput(sum);
  fusion.addOutput(mul(a, 2.0));
  fusion.addOutput(add(a, cast(b, DataType::Float32)));  // promotes to float32
  // 40000 is stored as 40960, the nearest e5m2.
  const HostTensor x = test::tensorOf(DataType::Float8_e5m2, {3}, {1.0, 3.0, 40000.0});
  const HostTensor y = test::tensorOf(DataType::Float8_e5m2, {3}, {0.25, 0.75, 40000.0});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {x, y});
  // 1.25 is exact; 3.75 ties between 3.5 and 4 (to even: 4); 81920 overflows to infinity.
  EXPECT_EQ(test::valuesOf(out[0]), (std::vector<double>{1.25, 4.0, INFINITY}));
  EXPECT_EQ(test::valuesOf(out[1]), (std::vector<double>{2.0, 6.0, INFINITY}));
  EXPECT_EQ(out[2].dtype(), DataType::Float32);
  EXPECT_EQ(test::valuesOf(out[2]), (std::vector<double>{1.25, 3.75, 81920.0}));
}

}  // namespace
}  // namespace braze
