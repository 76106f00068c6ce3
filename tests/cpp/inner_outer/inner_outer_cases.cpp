#include "inner_outer/inner_outer_cases.h"

#include <gtest/gtest.h>

#include "support/random_tensor.h"

namespace braze::test {

std::string NormalizationCase::name() const {
  std::string dtype_name = dtype == DataType::Float32    ? "float32"
                           : dtype == DataType::BFloat16 ? "bfloat16"
                                                         : "float16";
  return toString(kind) + "_" + dtype_name + "_" + std::to_string(rows) + "x" + std::to_string(n);
}

SchedulerRuntimeInfo runtimeInfoOf(const NormalizationCase& c) {
  const std::unique_ptr<Fusion> fusion = makeNormalization(c.kind, c.dtype);
  return contiguousRuntimeInfo(*fusion, normalizationInputSizes(c.kind, c.rows, c.n));
}

inner_outer::InnerOuterParams heuristicsFor(const NormalizationCase& c, const Fusion& fusion) {
  const SchedulerRuntimeInfo info = runtimeInfoOf(c);
  EXPECT_EQ(inner_outer::canScheduleCompileTime(fusion), std::nullopt) << c.name();
  EXPECT_EQ(inner_outer::canScheduleRunTime(fusion, info), std::nullopt) << c.name();
  return inner_outer::computeHeuristics(fusion, info);
}

std::vector<EvaluatorArgument> makeNormalizationArguments(const NormalizationCase& c,
                                                          uint64_t seed) {
  const std::vector<HostTensor> tensors =
      normalizationArguments(c.kind, c.dtype, c.rows, c.n, seed);
  return {tensors.begin(), tensors.end()};
}

}  // namespace braze::test
