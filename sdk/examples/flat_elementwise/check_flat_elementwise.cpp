// Loads the acme::flat_elementwise plugin from the folder given on the command line through
// Braze's scheduler registry, chooses it by name, and checks what it does: it schedules an
// elementwise fusion (the generated kernel compiles with NVRTC; with a GPU, it runs and
// matches Braze's CPU reference evaluator) and declines a broadcast with its reason.
// Exit status 0 when every check passes.

#include <cmath>
#include <iostream>
#include <random>

#include "braze/sdk/scheduler_author.h"

namespace {

using namespace braze;

constexpr const char* kScheduler = "acme::flat_elementwise";

int failures = 0;

void check(bool ok, const std::string& what) {
  std::cout << (ok ? "pass " : "FAIL ") << what << "\n";
  failures += ok ? 0 : 1;
}

HostTensor randomTensor(std::vector<int64_t> sizes, std::mt19937_64& rng) {
  HostTensor tensor = HostTensor::empty(DataType::Float32, std::move(sizes));
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.setFlat(i, uniform(rng));
  return tensor;
}

SchedulerRuntimeInfo runtimeInfo(const std::vector<HostTensor>& inputs) {
  SchedulerRuntimeInfo info;
  info.device = driver::isDriverAvailable() ? driver::deviceProperties() : driver::h100Properties();
  for (const HostTensor& input : inputs) {
    info.arguments.emplace_back(argumentInfoOf(input));
    info.data_alignments.push_back(16);  // device allocations are 256-byte aligned
  }
  return info;
}

void checkElementwise(const SchedulerRegistry& registry) {
  auto define = [] {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    TensorView* z = makeSymbolicTensor(*fusion, 2);
    fusion->addOutput(relu(add(mul(x, 2.0), z)));
    return fusion;
  };
  std::mt19937_64 rng(7);
  const std::vector<HostTensor> inputs = {randomTensor({1000, 260}, rng),
                                          randomTensor({1000, 260}, rng)};
  ScheduledFusion scheduled = registry.schedule(*define(), runtimeInfo(inputs), kScheduler);
  check(scheduled.scheduler->id == kScheduler,
        "chosen by name: " + scheduled.scheduler->id + "@" + scheduled.scheduler->version);
  check(scheduled.summary == "flat: 128 threads x vector 4", "params: " + scheduled.summary);

  GeneratedKernel kernel = generateCuda(*scheduled.fusion);
  std::string no_gpu;
  const bool has_gpu = driver::isDriverAvailable(&no_gpu);
  CompileOptions options;
  if (!has_gpu) options.arch = driver::GpuArch{9, 0, false};
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name, options);
  check(!compiled.cubin().empty(),
        "compiled " + kernel.kernel_name + " for " + compiled.arch().toString());
  if (!has_gpu) {
    std::cout << "skip running on the GPU: " << no_gpu << "\n";
    return;
  }
  KernelExecutor executor(*scheduled.fusion, std::move(kernel), std::move(compiled));
  std::vector<ExecutorArgument> device_inputs;
  for (const HostTensor& input : inputs) device_inputs.emplace_back(DeviceTensor::fromHost(input));
  DeviceTensor output = DeviceTensor::empty(DataType::Float32, {1000, 260});
  output.fillBytes(0xFF);  // NaN everywhere: an element never written shows
  const HostTensor actual = executor.run(device_inputs, nullptr, {output})[0].toHost();
  const HostTensor expected = evaluateFusionTensors(*define(), inputs)[0];
  double worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double difference = std::abs(toDouble(actual.atFlat(i)) - toDouble(expected.atFlat(i)));
    worst = std::isnan(difference) ? INFINITY : std::max(worst, difference);
  }
  check(worst <= 1e-6, "ran on " + driver::deviceProperties().name +
                           ", max |GPU - CPU reference| = " + std::to_string(worst));
}

void checkDeclinesBroadcast(const SchedulerRegistry& registry) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(add(x, broadcast(bias, {true, false})));
  std::mt19937_64 rng(8);
  try {
    registry.schedule(fusion, runtimeInfo({randomTensor({4, 8}, rng), randomTensor({8}, rng)}),
                      kScheduler);
    check(false, "a broadcast is declined");
  } catch (const Error& e) {
    const std::string message = e.what();
    check(message.find("declined: op broadcast is not elementwise") != std::string::npos,
          "a broadcast is declined with its reason:\n" + message);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: check_flat_elementwise PLUGIN_FOLDER\n";
    return 2;
  }
  try {
    RegistryOptions options;
    options.explicit_paths = {argv[1]};
    const SchedulerRegistry registry(options);
    const SchedulerEntry& entry = registry.find(kScheduler);
    check(entry.available(), "found " + entry.path.string());
    checkElementwise(registry);
    checkDeclinesBroadcast(registry);
  } catch (const std::exception& e) {
    std::cerr << "check_flat_elementwise: " << e.what() << "\n";
    return 1;
  }
  std::cout << (failures == 0 ? "all checks passed\n" : "some checks FAILED\n");
  return failures == 0 ? 0 : 1;
}
