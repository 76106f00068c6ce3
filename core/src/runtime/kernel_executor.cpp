#include "braze/runtime/kernel_executor.h"
#include "braze/eval/strided_layout.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/primary_context.h"
#include "braze/driver/tensor_map.h"
#include "braze/error.h"
#include "braze/eval/argument_binding.h"
#include "braze/runtime/argument_signature.h"
#include "runtime/extent_equalities.h"

namespace braze {

namespace {

using Kind = KernelParameter::Kind;

std::string_view kindName(Kind kind) {
  switch (kind) {
    case Kind::InputTensor:
      return "input";
    case Kind::OutputTensor:
      return "output";
    case Kind::GlobalBuffer:
      return "global buffer";
    case Kind::InputScalar:
      return "scalar input";
    case Kind::Workspace:
      return "workspace";
    case Kind::InputTensorMap:
      return "tensor map of input";
    case Kind::OutputTensorMap:
      return "tensor map of output";
  }
  return "parameter";
}

bool isTensorMapKind(Kind kind) {
  return kind == Kind::InputTensorMap || kind == Kind::OutputTensorMap;
}

bool isTensorKind(Kind kind) {
  return kind == Kind::InputTensor || kind == Kind::OutputTensor || kind == Kind::GlobalBuffer;
}

std::string_view swizzleName(TensorMapParameter::Swizzle swizzle) {
  constexpr std::string_view kNames[] = {"none", "32B", "64B", "128B"};
  return kNames[static_cast<size_t>(swizzle)];
}

CUtensorMapSwizzle driverSwizzle(TensorMapParameter::Swizzle swizzle) {
  switch (swizzle) {
    case TensorMapParameter::Swizzle::None:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TensorMapParameter::Swizzle::Bytes32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case TensorMapParameter::Swizzle::Bytes64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case TensorMapParameter::Swizzle::Bytes128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

// The map of `tensor` that parameter `p` describes. A tensor without elements gets an all-zero
// map (the driver encodes no empty dim): a kernel must not copy boxes of it.
CUtensorMap encodeTensorMapOf(const DeviceTensor& tensor, const KernelParameter& p,
                              const std::string& label) {
  if (tensor.numel() == 0) return CUtensorMap{};
  const TensorMapParameter& map = p.tensor_map;
  driver::TensorMapSpec spec;
  spec.name = label;
  spec.dtype = driver::tensorMapDataTypeOf(p.dtype);
  spec.address = tensor.data();
  const auto inner = static_cast<size_t>(map.dims[0]);
  BRAZE_USER_CHECK(tensor.sizes()[inner] == 1 || tensor.strides()[inner] == 1)
      << label << ": the tensor " << tensor.describe() << " has stride " << tensor.strides()[inner]
      << " along dim " << inner
      << ", which the kernel copies as the contiguous rows of its boxes; pass a tensor whose "
         "dim "
      << inner << " is contiguous (a .contiguous() copy)";
  // A dim of size 1 is only read at 0, so its stride (0 for a broadcast, anything for a
  // size-1 dim) is replaced by a dense one, which the copy engine's 16-byte rule accepts.
  const int64_t stride_unit = std::max<int64_t>(1, 16 / sizeInBytes(p.dtype));
  int64_t span = 0;  // elements the map's inner dims cover
  for (size_t k = 0; k < map.dims.size(); ++k) {
    const auto dim = static_cast<size_t>(map.dims[k]);
    const int64_t size = tensor.sizes()[dim];
    int64_t stride = 1;
    if (k > 0) {
      stride =
          size == 1 ? (span + stride_unit - 1) / stride_unit * stride_unit : tensor.strides()[dim];
      spec.strides.push_back(static_cast<uint64_t>(stride));
    }
    spec.dims.push_back(static_cast<uint64_t>(size));
    span = std::max(span, stride * size);
  }
  spec.box = map.box;
  spec.swizzle = driverSwizzle(map.swizzle);
  spec.oob_fill = map.fill_nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                               : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return driver::encodeTensorMap(spec);
}

// "parameter 2 (output 0, T5)": how messages name a kernel parameter.
std::string parameterLabel(const GeneratedKernel& kernel, size_t i) {
  const KernelParameter& p = kernel.parameters[i];
  std::ostringstream os;
  os << "parameter " << i << " (" << kindName(p.kind);
  if (p.kind != Kind::GlobalBuffer && p.kind != Kind::Workspace) os << " " << p.fusion_position;
  if (p.val != nullptr) os << ", " << p.val->name();
  os << ")";
  return os.str();
}

// The user-visible sizes of a tensor the executor allocates, from its extents.
std::vector<int64_t> evaluateSizes(const std::vector<const Val*>& extents,
                                   ExpressionEvaluator& scalars, const std::string& label) {
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < extents.size(); ++d) {
    const int64_t size = toInt64(
        scalars.evaluateOrThrow(extents[d], "extent of dim " + std::to_string(d) + " of " + label));
    BRAZE_USER_CHECK(size >= 0) << label << ": dim " << d << " evaluates to the negative size "
                                << size;
    sizes.push_back(size);
  }
  return sizes;
}

// A cubin for sm_XY runs on devices of the same major version and a minor version >= Y; an
// arch-specific one (sm_90a) only on exactly that architecture. PTX is compiled by the driver
// for any newer device, except arch-specific PTX.
bool canRun(const driver::GpuArch& compiled, const driver::GpuArch& device, bool has_cubin) {
  if (compiled.arch_specific) {
    return compiled.major == device.major && compiled.minor == device.minor;
  }
  if (has_cubin) return compiled.major == device.major && compiled.minor <= device.minor;
  return compiled.major < device.major ||
         (compiled.major == device.major && compiled.minor <= device.minor);
}

}  // namespace

std::optional<std::string> tensorMapParameterProblem(const TensorMapParameter& map, int64_t rank) {
  std::ostringstream problem;
  if (rank < 1 || rank > 5 || static_cast<int64_t>(map.dims.size()) != rank ||
      map.box.size() != map.dims.size()) {
    problem << "maps " << map.dims.size() << " dims with a box of " << map.box.size()
            << " for a tensor of rank " << rank << "; tensor maps cover every dim, 1 to 5";
    return problem.str();
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t k = 0; k < map.dims.size(); ++k) {
    const int64_t dim = map.dims[k];
    if (dim < 0 || dim >= rank || seen[static_cast<size_t>(dim)]) {
      problem << "lists dim " << dim << " at map position " << k
              << "; the map's dims are a permutation of the tensor's";
      return problem.str();
    }
    seen[static_cast<size_t>(dim)] = true;
    if (map.box[k] < 1 || map.box[k] > 256) {
      problem << "has a box of " << map.box[k] << " elements along map dim " << k
              << "; boxes are 1 to 256 elements per dim";
      return problem.str();
    }
  }
  return std::nullopt;
}

KernelExecutor::KernelExecutor(const Fusion& fusion, GeneratedKernel kernel,
                               CompiledKernel compiled, ExecutorOptions options)
    : fusion_(fusion),
      kernel_(std::move(kernel)),
      compiled_(std::move(compiled)),
      options_(std::move(options)),
      output_parameters_(checkContract()),
      extent_equalities_(runtime_detail::collectExtentEqualities(fusion)) {}

struct KernelExecutor::CachedPlan {
  ArgumentSignature key;
  std::shared_ptr<const LaunchPlan> plan;
};

KernelExecutor::~KernelExecutor() {
  // A module is unloaded only once the device is done with it; destructors must not throw,
  // and at process exit the driver may be gone already.
  for (auto& [device, loaded] : loaded_) {
    try {
      driver::makePrimaryContextCurrent(device);
      const driver::DriverApi& api = driver::driverApi();
      api.ctxSynchronize();
      api.moduleUnload(loaded.module);
    } catch (const Error&) {
    }
  }
}

std::vector<size_t> KernelExecutor::checkContract() const {
  const std::string& name = kernel_.kernel_name;
  BRAZE_INTERNAL_CHECK(name == compiled_.kernelName())
      << "KernelExecutor: the generated kernel is " << name << " but the compiled one is "
      << compiled_.kernelName();
  BRAZE_INTERNAL_CHECK(kernel_.index_type == DataType::Int32 ||
                       kernel_.index_type == DataType::Int64)
      << "KernelExecutor: kernel " << name << " has index type " << kernel_.index_type
      << "; it must be int32 or int64";
  const auto& inputs = fusion_.inputs();
  const auto& outputs = fusion_.outputs();
  std::vector<int> output_seen(outputs.size(), 0);
  std::vector<size_t> output_parameters(outputs.size(), 0);
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    const KernelParameter& p = kernel_.parameters[i];
    const std::string label = "kernel " + name + ": " + parameterLabel(kernel_, i);
    if (p.kind == Kind::Workspace) {
      BRAZE_INTERNAL_CHECK(p.workspace_bytes != nullptr) << label << " has no byte count";
      continue;
    }
    if (p.kind == Kind::GlobalBuffer && p.val == nullptr) {
      // Restored without its scheduled fusion: the sizes say what to allocate.
      BRAZE_INTERNAL_CHECK(static_cast<int64_t>(p.buffer_sizes.size()) == p.rank &&
                           std::all_of(p.buffer_sizes.begin(), p.buffer_sizes.end(),
                                       [](const Val* size) { return size != nullptr; }))
          << label << " has no tensor and no sizes for its " << p.rank << " dims";
      continue;
    }
    BRAZE_INTERNAL_CHECK(p.val != nullptr) << label << " has no value";
    BRAZE_INTERNAL_CHECK(&p.val->fusion() == &fusion_)
        << label << " belongs to another fusion than the executor's";
    BRAZE_INTERNAL_CHECK(p.dtype == p.val->dtype())
        << label << " is declared " << p.dtype << " but " << p.val->name() << " is "
        << p.val->dtype();
    if (isTensorKind(p.kind) || isTensorMapKind(p.kind)) {
      const auto* tv = p.val->dynCast<TensorView>();
      BRAZE_INTERNAL_CHECK(tv != nullptr) << label << " is not a tensor";
      BRAZE_INTERNAL_CHECK(p.rank == tv->rank())
          << label << " has rank " << p.rank << " but " << tv->name() << " has rank " << tv->rank();
    }
    const auto position = static_cast<size_t>(p.fusion_position);
    switch (p.kind) {
      case Kind::InputTensor:
      case Kind::InputScalar:
        BRAZE_INTERNAL_CHECK(p.fusion_position >= 0 && position < inputs.size() &&
                             inputs[position] == p.val)
            << label << " is not input " << p.fusion_position << " of the fusion";
        BRAZE_INTERNAL_CHECK(p.kind == Kind::InputTensor || !p.val->isA<TensorView>())
            << label << " is a tensor";
        break;
      case Kind::OutputTensor:
        BRAZE_INTERNAL_CHECK(p.fusion_position >= 0 && position < outputs.size() &&
                             outputs[position] == p.val)
            << label << " is not output " << p.fusion_position << " of the fusion";
        ++output_seen[position];
        output_parameters[position] = i;
        break;
      case Kind::InputTensorMap:
      case Kind::OutputTensorMap: {
        const auto& fusion_side = p.kind == Kind::InputTensorMap ? inputs : outputs;
        BRAZE_INTERNAL_CHECK(p.fusion_position >= 0 && position < fusion_side.size() &&
                             fusion_side[position] == p.val)
            << label << " is not " << (p.kind == Kind::InputTensorMap ? "input " : "output ")
            << p.fusion_position << " of the fusion";
        const std::optional<std::string> problem = tensorMapParameterProblem(p.tensor_map, p.rank);
        BRAZE_INTERNAL_CHECK(!problem) << label << " " << *problem;
        break;
      }
      case Kind::GlobalBuffer:
      case Kind::Workspace:
        break;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    BRAZE_INTERNAL_CHECK(output_seen[j] == 1)
        << "KernelExecutor: kernel " << name << " has " << output_seen[j]
        << " parameters for fusion output " << j << " (" << outputs[j]->name()
        << "); every output needs exactly one";
  }
  for (const GeneratedKernel::Alignment& alignment : kernel_.alignments) {
    BRAZE_INTERNAL_CHECK(alignment.parameter < kernel_.parameters.size() &&
                         isTensorKind(kernel_.parameters[alignment.parameter].kind))
        << "KernelExecutor: kernel " << name << " asks for the alignment of parameter "
        << alignment.parameter << ", which is not a tensor parameter";
    BRAZE_INTERNAL_CHECK(alignment.bytes > 0 && (alignment.bytes & (alignment.bytes - 1)) == 0)
        << "KernelExecutor: kernel " << name << " asks for an alignment of " << alignment.bytes
        << " bytes, which is not a power of two";
    for (const int64_t dim : alignment.stride_dims) {
      BRAZE_INTERNAL_CHECK(dim >= 0 && dim < kernel_.parameters[alignment.parameter].rank)
          << "KernelExecutor: kernel " << name << " asks for the stride alignment of dim " << dim
          << " of parameter " << alignment.parameter << ", which has rank "
          << kernel_.parameters[alignment.parameter].rank;
    }
  }
  for (const auto& [check, message] : kernel_.launch_checks) {
    BRAZE_INTERNAL_CHECK(check != nullptr && check->isA<Scalar>())
        << "KernelExecutor: kernel " << name
        << " has a launch check that is not a scalar: " << message;
  }
  return output_parameters;
}

LaunchParams KernelExecutor::checkArguments(const std::vector<ArgumentInfo>& infos,
                                            ExpressionEvaluator& scalars) const {
  validateAndBindArguments(fusion_, infos, "KernelExecutor::run", scalars);
  const std::string& name = kernel_.kernel_name;
  runtime_detail::checkExtentEqualities(extent_equalities_, scalars, "kernel " + name);
  LaunchParams launch = evaluateLaunchParams(kernel_.launch, scalars, name);
  if (kernel_.launch_bounds) {
    const LaunchBounds& bounds = *kernel_.launch_bounds;
    BRAZE_USER_CHECK(launch.threadsPerBlock() <= bounds.max_threads_per_block)
        << "kernel " << name << " cannot run with these inputs: they need blocks of "
        << launch.threadsPerBlock() << " threads (" << launch.toString()
        << "), but the kernel was compiled for at most " << bounds.max_threads_per_block
        << " (__launch_bounds__ from the fusion's setLaunchBounds(" << bounds.max_threads_per_block
        << ", " << bounds.min_blocks_per_sm
        << ")); the scheduler must state bounds that cover the largest block its schedule "
           "launches for these sizes, or schedule these sizes again";
  }
  for (const auto& [check, message] : kernel_.launch_checks) {
    const bool holds = toBool(
        scalars.evaluateOrThrow(check, "launch check of kernel " + name + " (" + message + ")"));
    BRAZE_USER_CHECK(holds) << "kernel " << name << " cannot run with these inputs: " << message;
  }
  return launch;
}

LaunchPlan KernelExecutor::plan(const std::vector<ExecutorArgument>& inputs) const {
  std::vector<ArgumentInfo> infos;
  infos.reserve(inputs.size());
  for (const ExecutorArgument& input : inputs) {
    if (const auto* tensor = std::get_if<DeviceTensor>(&input)) {
      infos.emplace_back(tensor->argumentInfo());
    } else {
      infos.emplace_back(std::get<ScalarValue>(input));
    }
  }
  ExpressionEvaluator scalars;
  LaunchPlan plan;
  plan.launch = checkArguments(infos, scalars);
  plan.device = options_.device;
  std::optional<size_t> first_tensor;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* tensor = std::get_if<DeviceTensor>(&inputs[i]);
    if (tensor == nullptr) continue;
    if (!first_tensor) {
      first_tensor = i;
      plan.device = tensor->device();
      continue;
    }
    BRAZE_USER_CHECK(tensor->device() == plan.device)
        << "KernelExecutor::run: input " << i << " (" << fusion_.inputs()[i]->name()
        << ") is on cuda:" << tensor->device() << " but input " << *first_tensor << " ("
        << fusion_.inputs()[*first_tensor]->name() << ") is on cuda:" << plan.device
        << "; a kernel runs on one device: copy the inputs to the same device";
  }

  const std::string& name = kernel_.kernel_name;

  plan.parameters.resize(kernel_.parameters.size());
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    const KernelParameter& p = kernel_.parameters[i];
    LaunchPlan::Parameter& planned = plan.parameters[i];
    const std::string label = "kernel " + name + " " + parameterLabel(kernel_, i);
    switch (p.kind) {
      case Kind::OutputTensor:
      case Kind::GlobalBuffer: {
        std::vector<const Val*> extents = p.buffer_sizes;
        if (extents.empty()) {
          for (const IterDomain* id : p.val->as<TensorView>()->logicalNoReductions())
            extents.push_back(id->logicalExtent());
        }
        planned.sizes = evaluateSizes(extents, scalars, label);
        break;
      }
      case Kind::Workspace:
        planned.workspace_bytes =
            toInt64(scalars.evaluateOrThrow(p.workspace_bytes, "bytes of " + label));
        BRAZE_USER_CHECK(planned.workspace_bytes >= 0)
            << label << " needs " << planned.workspace_bytes << " bytes, a negative count";
        break;
      case Kind::InputScalar:
        planned.scalar = scalars.evaluateOrThrow(p.val, label);
        break;
      case Kind::InputTensor:
      case Kind::InputTensorMap:
      case Kind::OutputTensorMap:
        break;
    }
  }
  return plan;
}

KernelArguments KernelExecutor::packArguments(const LaunchPlan& plan,
                                              const std::vector<ExecutorArgument>& inputs,
                                              const std::vector<DeviceTensor>& outputs,
                                              const std::vector<CUdeviceptr>& allocations) const {
  const std::string& name = kernel_.kernel_name;
  BRAZE_INTERNAL_CHECK(plan.parameters.size() == kernel_.parameters.size() &&
                       inputs.size() == fusion_.inputs().size() &&
                       outputs.size() == fusion_.outputs().size() &&
                       allocations.size() == kernel_.parameters.size())
      << "KernelExecutor::packArguments: kernel " << name << " has " << kernel_.parameters.size()
      << " parameters; got a plan for " << plan.parameters.size() << ", " << inputs.size()
      << " inputs, " << outputs.size() << " outputs and " << allocations.size() << " allocations";
  KernelArguments arguments(kernel_.index_type);
  std::vector<CUdeviceptr> data(kernel_.parameters.size(), 0);
  std::vector<int64_t> numel(kernel_.parameters.size(), 0);
  std::vector<std::vector<int64_t>> sizes(kernel_.parameters.size());
  std::vector<std::vector<int64_t>> strides(kernel_.parameters.size());
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    const KernelParameter& p = kernel_.parameters[i];
    const std::string label = "kernel " + name + " " + parameterLabel(kernel_, i);
    const auto position = static_cast<size_t>(p.fusion_position);
    switch (p.kind) {
      case Kind::InputTensor:
      case Kind::OutputTensor: {
        const DeviceTensor& tensor = p.kind == Kind::InputTensor
                                         ? std::get<DeviceTensor>(inputs[position])
                                         : outputs[position];
        arguments.addTensor(tensor.data(), tensor.sizes(), tensor.strides(), label);
        data[i] = tensor.data();
        numel[i] = tensor.numel();
        sizes[i] = tensor.sizes();
        strides[i] = tensor.strides();
        break;
      }
      case Kind::GlobalBuffer: {
        sizes[i] = plan.parameters[i].sizes;
        strides[i] = contiguousStrides(sizes[i]);
        arguments.addTensor(allocations[i], sizes[i], strides[i], label);
        data[i] = allocations[i];
        numel[i] = numelOf(sizes[i]);
        break;
      }
      case Kind::InputScalar:
        arguments.addScalar(p.dtype, plan.parameters[i].scalar, label);
        break;
      case Kind::Workspace:
        arguments.addPointer(allocations[i]);
        break;
      case Kind::InputTensorMap:
      case Kind::OutputTensorMap: {
        const DeviceTensor& tensor = p.kind == Kind::InputTensorMap
                                         ? std::get<DeviceTensor>(inputs[position])
                                         : outputs[position];
        arguments.addTensorMap(encodeTensorMapOf(tensor, p, label));
        break;
      }
    }
  }
  for (const GeneratedKernel::Alignment& alignment : kernel_.alignments) {
    const size_t i = alignment.parameter;
    if (numel[i] == 0) continue;
    for (const int64_t dim : alignment.stride_dims) {
      const KernelParameter& p = kernel_.parameters[i];
      const auto d = static_cast<size_t>(dim);
      const int64_t stride = strides[i][d];
      // A size-1 dim is never stepped over.
      if (sizes[i][d] == 1) continue;
      BRAZE_USER_CHECK(stride * sizeInBytes(p.dtype) % alignment.bytes == 0)
          << "kernel " << name << " accesses " << parameterLabel(kernel_, i) << " with "
          << alignment.bytes << "-byte vector loads or stores, but the stride of its dim " << dim
          << " (" << stride << " elements of " << p.dtype << ") is not a multiple of "
          << alignment.bytes << " bytes; pass a tensor laid out so that it is (a contiguous "
          << "copy with a suitable innermost size), or use a kernel scheduled without "
             "vectorization";
    }
    BRAZE_USER_CHECK(data[i] % static_cast<uint64_t>(alignment.bytes) == 0)
        << "kernel " << name << " accesses " << parameterLabel(kernel_, i) << " with "
        << alignment.bytes << "-byte vector loads or stores, but its data pointer 0x" << std::hex
        << data[i] << std::dec << " is not a multiple of " << alignment.bytes
        << "; pass a tensor whose data starts on a " << alignment.bytes
        << "-byte boundary (a fresh contiguous copy does), or use a kernel scheduled without "
           "vectorization";
  }
  return arguments;
}

std::vector<DeviceTensor> KernelExecutor::checkOrAllocateOutputs(
    const LaunchPlan& plan, std::vector<DeviceTensor> outputs) const {
  const auto& fusion_outputs = fusion_.outputs();
  // Outputs are written dense in their allocation order: row-major unless stride_order made
  // them (lowering computes their strides from the extents the same way).
  const auto layoutOf = [&](size_t j) -> const std::vector<int64_t>& {
    return fusion_outputs[j]->as<TensorView>()->allocationOrder();
  };
  if (outputs.empty()) {
    for (size_t j = 0; j < fusion_outputs.size(); ++j) {
      const size_t i = output_parameters_[j];
      outputs.push_back(DeviceTensor::empty(kernel_.parameters[i].dtype, plan.parameters[i].sizes,
                                            layoutOf(j), plan.device));
    }
    return outputs;
  }
  BRAZE_USER_CHECK(outputs.size() == fusion_outputs.size())
      << "KernelExecutor::run: the fusion has " << fusion_outputs.size() << " output"
      << (fusion_outputs.size() == 1 ? "" : "s") << " but " << outputs.size()
      << " output tensors were given";
  for (size_t j = 0; j < outputs.size(); ++j) {
    const KernelParameter& p = kernel_.parameters[output_parameters_[j]];
    const std::vector<int64_t>& sizes = plan.parameters[output_parameters_[j]].sizes;
    const DeviceTensor& given = outputs[j];
    const std::string label =
        "KernelExecutor::run: output " + std::to_string(j) + " (" + fusion_outputs[j]->name() + ")";
    BRAZE_USER_CHECK(given.dtype() == p.dtype && given.sizes() == sizes)
        << label << ": expected a " << p.dtype << formatSizes(sizes) << " tensor but got "
        << given.describe();
    BRAZE_USER_CHECK(given.device() == plan.device)
        << label << ": the tensor is on cuda:" << given.device()
        << " but the kernel runs on cuda:" << plan.device;
    const std::vector<int64_t> dense = denseStrides(sizes, layoutOf(j));
    bool written_layout = true;
    for (size_t d = 0; d < sizes.size(); ++d) {
      // The stride of a size-1 dim is never used; an empty tensor is never written.
      if (sizes[d] != 1 && given.strides()[d] != dense[d]) written_layout = false;
    }
    BRAZE_USER_CHECK(given.defined() && (written_layout || given.numel() == 0))
        << label << ": the tensor " << given.describe()
        << " must be dense with storage and strides " << formatSizes(dense)
        << "; outputs are written in their allocation order " << formatSizes(layoutOf(j))
        << " (row-major unless stride_order gave another)";
  }
  return outputs;
}

KernelExecutor::LoadedFunction& KernelExecutor::load(int device) {
  if (auto it = loaded_.find(device); it != loaded_.end()) return it->second;
  const std::string& name = kernel_.kernel_name;
  const driver::DeviceProperties& properties = driver::deviceProperties(device);
  const bool has_cubin = !compiled_.cubin().empty();
  BRAZE_USER_CHECK(canRun(compiled_.arch(), properties.arch, has_cubin))
      << "kernel " << name << " was compiled for " << compiled_.arch().toString()
      << ", which cuda:" << device << " (" << properties.name << ", " << properties.arch.toString()
      << ") cannot run; compile it with CompileOptions{.arch = driver::GpuArch{"
      << properties.arch.major << ", " << properties.arch.minor
      << "}}, or leave the arch unset to use the device's";
  driver::makePrimaryContextCurrent(device);
  const driver::DriverApi& api = driver::driverApi();
  const std::string context = "(kernel " + name + " on cuda:" + std::to_string(device) + ")";
  LoadedFunction loaded;
  const void* image = has_cubin ? static_cast<const void*>(compiled_.cubin().data())
                                : static_cast<const void*>(compiled_.ptx().c_str());
  driver::checkDriver(api.moduleLoadData(&loaded.module, image), "cuModuleLoadData", context);
  driver::checkDriver(api.moduleGetFunction(&loaded.function, loaded.module, name.c_str()),
                      "cuModuleGetFunction", context);
  driver::checkDriver(
      api.funcGetAttribute(&loaded.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           loaded.function),
      "cuFuncGetAttribute", context);
  int dynamic_limit = 0;
  driver::checkDriver(
      api.funcGetAttribute(&dynamic_limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           loaded.function),
      "cuFuncGetAttribute", context);
  loaded.dynamic_shared_memory_limit = dynamic_limit;
  return loaded_.emplace(device, loaded).first->second;
}

std::shared_ptr<const LaunchPlan> KernelExecutor::cachedPlan(
    const std::vector<ExecutorArgument>& inputs) {
  ArgumentSignature key(inputs);
  {
    std::lock_guard<std::mutex> lock(plan_mutex_);
    if (last_plan_ && last_plan_->key == key) return last_plan_->plan;
  }
  // plan() throws for arguments it refuses: nothing is cached then.
  auto fresh = std::make_shared<const LaunchPlan>(plan(inputs));
  std::lock_guard<std::mutex> lock(plan_mutex_);
  last_plan_ = std::make_unique<CachedPlan>(CachedPlan{std::move(key), fresh});
  return fresh;
}

void KernelExecutor::recompileForBlock(int64_t threads) {
  // A block's registers come from one SM's 64K, allocated 8 per thread at a time.
  constexpr int64_t kRegistersPerBlock = 65536;
  CompileOptions options;
  options.arch = compiled_.arch();
  options.max_registers =
      static_cast<int>(std::min<int64_t>(255, kRegistersPerBlock / threads / 8 * 8));
  for (const std::string& flag : compiled_.nvrtcOptions()) {
    options.fast_math = options.fast_math || flag == "--use_fast_math";
    options.line_info = options.line_info || flag == "--generate-line-info";
  }
  CompiledKernel limited =
      CompiledKernel::compile(compiled_.source(), kernel_.kernel_name, options);
  // Launches of the old module may still be in flight: it is unloaded once they are done.
  const driver::DriverApi& api = driver::driverApi();
  for (auto& [device, old] : loaded_) {
    driver::makePrimaryContextCurrent(device);
    api.ctxSynchronize();
    api.moduleUnload(old.module);
  }
  loaded_.clear();
  compiled_ = std::move(limited);
}

CUfunction KernelExecutor::prepareLaunch(const LaunchPlan& plan) {
  const std::string& name = kernel_.kernel_name;
  driver::makePrimaryContextCurrent(plan.device);
  const driver::DeviceProperties& properties = driver::deviceProperties(plan.device);
  checkLaunchLimits(plan.launch, properties, compiled_.resources().static_shared_memory_bytes,
                    name);
  std::lock_guard<std::mutex> lock(mutex_);
  LoadedFunction* first = &load(plan.device);
  if (plan.launch.threadsPerBlock() > first->max_threads_per_block && !compiled_.cubin().empty()) {
    // ptxas took more registers than a block of this size can hold: the block size often
    // follows the data, so nothing told it. Compiled again with a limit that fits the block.
    recompileForBlock(plan.launch.threadsPerBlock());
    first = &load(plan.device);
  }
  LoadedFunction& loaded = *first;
  BRAZE_USER_CHECK(plan.launch.threadsPerBlock() <= loaded.max_threads_per_block)
      << "kernel " << name << ": " << plan.launch.threadsPerBlock()
      << " threads per block, but with " << compiled_.resources().registers
      << " registers per thread it can run at most " << loaded.max_threads_per_block
      << " on cuda:" << plan.device << " (" << plan.launch.toString()
      << "); schedule fewer threads per block, state launch bounds (Fusion::setLaunchBounds) "
         "or limit registers (CompileOptions::max_registers)";
  // Clusters beyond the portable size need the kernel's opt-in (checkLaunchLimits allowed the
  // size on this device).
  if (plan.launch.ctasPerCluster() > driver::kMaxPortableCluster && !loaded.non_portable_clusters) {
    driver::checkDriver(
        driver::driverApi().funcSetAttribute(
            loaded.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
        "cuFuncSetAttribute", "(kernel " + name + ", non-portable cluster size)");
    loaded.non_portable_clusters = true;
  }
  // Above 48 KiB a kernel must opt in to more dynamic shared memory.
  if (plan.launch.dynamic_shared_memory_bytes > loaded.dynamic_shared_memory_limit) {
    driver::checkDriver(driver::driverApi().funcSetAttribute(
                            loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            static_cast<int>(plan.launch.dynamic_shared_memory_bytes)),
                        "cuFuncSetAttribute", "(kernel " + name + ", dynamic shared memory)");
    loaded.dynamic_shared_memory_limit = plan.launch.dynamic_shared_memory_bytes;
  }
  return loaded.function;
}

std::vector<DeviceTensor> KernelExecutor::run(const std::vector<ExecutorArgument>& inputs,
                                              CUstream stream, std::vector<DeviceTensor> outputs) {
  const std::shared_ptr<const LaunchPlan> planned = cachedPlan(inputs);
  const LaunchPlan& plan = *planned;
  const std::string& name = kernel_.kernel_name;
  CUfunction function = prepareLaunch(plan);

  outputs = checkOrAllocateOutputs(plan, std::move(outputs));
  // Intermediates and workspaces live until the end of this call: they are freed in stream
  // order, after the launch.
  std::vector<std::shared_ptr<driver::DeviceMemory>> temporaries;
  std::vector<CUdeviceptr> allocations(kernel_.parameters.size(), 0);
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    const KernelParameter& p = kernel_.parameters[i];
    if (p.kind == Kind::GlobalBuffer) {
      const int64_t bytes = numelOf(plan.parameters[i].sizes) * sizeInBytes(p.dtype);
      temporaries.push_back(
          driver::DeviceMemory::allocateOnStream(plan.device, static_cast<size_t>(bytes), stream));
      allocations[i] = temporaries.back()->pointer();
    } else if (p.kind == Kind::Workspace) {
      const auto bytes = static_cast<size_t>(plan.parameters[i].workspace_bytes);
      temporaries.push_back(driver::DeviceMemory::allocateOnStream(plan.device, bytes, stream));
      allocations[i] = temporaries.back()->pointer();
      if (bytes > 0) BRAZE_CU(memsetD8Async, allocations[i], 0, bytes, stream);
    }
  }
  KernelArguments arguments = packArguments(plan, inputs, outputs, allocations);
  if (options_.dump.launch_params) dumpLaunch(plan, inputs, outputs, allocations);
  if (plan.launch.isEmpty()) {
    // No thread runs, so nothing is written: right only when every output is empty too.
    for (size_t j = 0; j < outputs.size(); ++j) {
      BRAZE_USER_CHECK(outputs[j].numel() == 0)
          << "kernel " << name << " launches no threads for these inputs ("
          << plan.launch.toString() << ") but output " << j << " (" << fusion_.outputs()[j]->name()
          << ") has " << outputs[j].numel()
          << " elements it would leave unwritten; inputs with zero-size dims need another "
             "schedule for this fusion";
    }
    return outputs;
  }

  DriverLaunchConfig launch_config(plan.launch, stream);
  driver::checkDriver(driver::driverApi().launchKernelEx(&launch_config.config, function,
                                                         arguments.pointers(), nullptr),
                      "cuLaunchKernelEx",
                      "while launching kernel " + name + " on cuda:" + std::to_string(plan.device) +
                          " with " + plan.launch.toString());
  return outputs;
}

void KernelExecutor::dumpLaunch(const LaunchPlan& plan, const std::vector<ExecutorArgument>& inputs,
                                const std::vector<DeviceTensor>& outputs,
                                const std::vector<CUdeviceptr>& allocations) const {
  std::ostream& out = options_.dump.out();
  out << "=== launch " << kernel_.kernel_name << " on cuda:" << plan.device << ": "
      << plan.launch.toString() << ", index type " << kernel_.index_type
      << (plan.launch.isEmpty() ? " (empty: not launched)" : "") << "\n";
  for (size_t i = 0; i < kernel_.parameters.size(); ++i) {
    const KernelParameter& p = kernel_.parameters[i];
    const auto position = static_cast<size_t>(p.fusion_position);
    out << "  " << parameterLabel(kernel_, i) << ": ";
    switch (p.kind) {
      case Kind::InputTensor:
      case Kind::OutputTensor: {
        const DeviceTensor& tensor = p.kind == Kind::InputTensor
                                         ? std::get<DeviceTensor>(inputs[position])
                                         : outputs[position];
        out << tensor.describe() << " at 0x" << std::hex << tensor.data() << std::dec;
        break;
      }
      case Kind::GlobalBuffer:
        out << p.dtype << formatSizes(plan.parameters[i].sizes) << " at 0x" << std::hex
            << allocations[i] << std::dec;
        break;
      case Kind::InputScalar:
        out << p.dtype << " " << toString(plan.parameters[i].scalar);
        break;
      case Kind::Workspace:
        out << plan.parameters[i].workspace_bytes << " zeroed bytes at 0x" << std::hex
            << allocations[i] << std::dec;
        break;
      case Kind::InputTensorMap:
      case Kind::OutputTensorMap: {
        const DeviceTensor& tensor = p.kind == Kind::InputTensorMap
                                         ? std::get<DeviceTensor>(inputs[position])
                                         : outputs[position];
        out << "map of " << tensor.describe() << ", dims " << formatSizes(p.tensor_map.dims)
            << " innermost first, box "
            << formatSizes(std::vector<int64_t>(p.tensor_map.box.begin(), p.tensor_map.box.end()))
            << ", swizzle " << swizzleName(p.tensor_map.swizzle);
        break;
      }
    }
    out << "\n";
  }
}

}  // namespace braze
