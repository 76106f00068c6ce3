#include "segment/segmented_evaluation.h"

#include <gtest/gtest.h>

#include <unordered_map>

#include "braze/eval/argument_binding.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"

namespace braze::test {

std::vector<EvaluatorArgument> evaluateSegmented(const SegmentedFusion& segmented,
                                                 const std::vector<EvaluatorArgument>& arguments) {
  const Fusion& original = *segmented.original;
  std::vector<ArgumentInfo> infos;
  for (const EvaluatorArgument& argument : arguments) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      infos.emplace_back(argumentInfoOf(*tensor));
    } else {
      infos.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  // Extents the segments take as scalars are evaluated on the original.
  ExpressionEvaluator scalars;
  validateAndBindArguments(original, infos, "evaluateSegmented", scalars);

  std::unordered_map<const Val*, EvaluatorArgument> values;
  for (size_t i = 0; i < arguments.size(); ++i) values.emplace(original.inputs()[i], arguments[i]);
  for (const Segment& segment : segmented.segments) {
    std::vector<EvaluatorArgument> segment_arguments;
    for (const Val* input : segment.inputs) {
      if (auto it = values.find(input); it != values.end()) {
        segment_arguments.push_back(it->second);
        continue;
      }
      BRAZE_USER_CHECK(!input->isA<TensorView>())
          << "segment " << segment.id << " reads " << input->name()
          << ", which no earlier segment writes";
      segment_arguments.emplace_back(
          scalars.evaluateOrThrow(input, "scalar input of segment " + std::to_string(segment.id)));
    }
    std::vector<EvaluatorArgument> results = evaluateFusion(*segment.fusion, segment_arguments);
    for (size_t j = 0; j < results.size(); ++j) {
      BRAZE_USER_CHECK(values.emplace(segment.outputs[j], std::move(results[j])).second)
          << "segment " << segment.id << " writes " << segment.outputs[j]->name()
          << ", which an input or an earlier segment already gave";
    }
  }
  std::vector<EvaluatorArgument> outputs;
  for (const Val* output : original.outputs()) {
    auto it = values.find(output);
    BRAZE_USER_CHECK(it != values.end()) << "no segment writes output " << output->name();
    outputs.push_back(it->second);
  }
  return outputs;
}

std::vector<EvaluatorArgument> randomArguments(
    const Fusion& fusion, const std::vector<std::vector<int64_t>>& tensor_sizes,
    const std::vector<ScalarValue>& scalars, uint64_t seed, double low, double high) {
  RandomTensors random(seed);
  std::vector<EvaluatorArgument> arguments;
  size_t tensor = 0;
  size_t scalar = 0;
  for (const Val* input : fusion.inputs()) {
    if (input->isA<TensorView>()) {
      arguments.emplace_back(random.uniform(input->dtype(), tensor_sizes.at(tensor++), low, high));
    } else {
      arguments.emplace_back(scalars.at(scalar++));
    }
  }
  return arguments;
}

void expectSameAsWhole(const SegmentedFusion& segmented,
                       const std::vector<EvaluatorArgument>& arguments) {
  const std::vector<EvaluatorArgument> whole = evaluateFusion(*segmented.original, arguments);
  const std::vector<EvaluatorArgument> pieces = evaluateSegmented(segmented, arguments);
  ASSERT_EQ(whole.size(), pieces.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    if (const auto* expected = std::get_if<HostTensor>(&whole[i])) {
      // Intermediates pass through memory in their own dtype, as the whole fusion keeps them in
      // float64: results agree to the precision of the dtypes on the way.
      expectClose(std::get<HostTensor>(pieces[i]), *expected);
    } else {
      EXPECT_EQ(std::get<ScalarValue>(pieces[i]), std::get<ScalarValue>(whole[i]));
    }
  }
}

}  // namespace braze::test
