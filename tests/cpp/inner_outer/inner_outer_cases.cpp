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
  RandomTensors random(seed);
  const std::vector<std::vector<int64_t>> sizes = normalizationInputSizes(c.kind, c.rows, c.n);
  const std::vector<DataType> dtypes = normalizationInputDtypes(c.kind, c.dtype);
  std::vector<EvaluatorArgument> arguments;
  for (size_t i = 0; i < sizes.size(); ++i) {
    // Per-row statistics (mean, rstd) are 1D inputs of backward fusions; rstd must be positive.
    const bool per_row =
        sizes[i].size() == 1 && sizes[i][0] == c.rows && c.rows != c.n &&
        (c.kind == Normalization::LayerNormBackward || c.kind == Normalization::RmsNormBackward);
    const bool rstd = per_row && i + 2 == sizes.size();
    arguments.emplace_back(random.uniform(dtypes[i], sizes[i], rstd ? 0.5 : -2.0, 2.0));
  }
  return arguments;
}

}  // namespace braze::test
