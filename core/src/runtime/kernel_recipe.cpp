#include "braze/runtime/kernel_recipe.h"

#include "braze/runtime/kernel_executor.h"

#include <unordered_map>

#include "braze/error.h"
#include "braze/ir/scalar.h"
#include "braze/ir/tensor_view.h"

namespace braze {

namespace {

using Node = ScalarFormulas::Node;
using Kind = KernelParameter::Kind;

bool isScalarAttribute(const AttributeValue& value) {
  return std::holds_alternative<bool>(value) || std::holds_alternative<int64_t>(value) ||
         std::holds_alternative<double>(value) || std::holds_alternative<std::string>(value);
}

/// Turns Vals of the scheduled fusion into formula nodes, sharing common subexpressions.
class Recorder {
 public:
  explicit Recorder(const Fusion& scheduled) {
    const std::vector<Val*>& inputs = scheduled.inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      Node leaf;
      leaf.input = static_cast<int64_t>(i);
      if (const auto* tv = inputs[i]->dynCast<TensorView>()) {
        const std::vector<IterDomain*> dims = tv->logicalNoReductions();
        for (size_t d = 0; d < dims.size(); ++d) {
          const Scalar* extent = dims[d]->logicalExtent();
          if (extent->isConstant() || leaves_.count(extent)) continue;
          leaf.kind = Node::Kind::InputExtent;
          leaf.dim = static_cast<int64_t>(d);
          leaf.dtype = extent->dtype();
          leaves_.emplace(extent, leaf);
        }
      } else {
        leaf.kind = Node::Kind::InputScalar;
        leaf.dtype = inputs[i]->dtype();
        leaves_.emplace(inputs[i], leaf);
      }
    }
  }

  /// The node of `val` (-1 for null), or nullopt with `failure_` set.
  std::optional<int32_t> record(const Val* val) {
    if (val == nullptr) return -1;
    // Post-order without recursion: extent chains can be long.
    std::vector<const Val*> stack{val};
    while (!stack.empty()) {
      const Val* top = stack.back();
      if (nodes_.count(top)) {
        stack.pop_back();
        continue;
      }
      const auto* scalar = top->dynCast<Scalar>();
      if (scalar == nullptr) return fail(top->name() + " is not a scalar");
      if (auto leaf = leaves_.find(top); leaf != leaves_.end()) {
        add(top, leaf->second);
        stack.pop_back();
        continue;
      }
      if (scalar->isConstant()) {
        Node constant;
        constant.dtype = scalar->dtype();
        constant.value = *scalar->value();
        add(top, constant);
        stack.pop_back();
        continue;
      }
      const Expr* definition = top->definition();
      if (definition == nullptr)
        return fail(top->name() + " is neither an input's extent nor a scalar input");
      if (!isElementwise(definition->op()) || definition->outputs().size() != 1)
        return fail(top->name() + " is computed by " + std::string(toString(definition->op())) +
                    ", which is not a scalar op");
      bool ready = true;
      for (const Val* operand : definition->inputs()) {
        if (!nodes_.count(operand)) {
          ready = false;
          stack.push_back(operand);
        }
      }
      if (!ready) continue;
      Node op;
      op.kind = Node::Kind::Op;
      op.dtype = top->dtype();
      op.op = definition->op();
      for (const Val* operand : definition->inputs()) op.operands.push_back(nodes_.at(operand));
      for (const Attribute& attribute : definition->attributes()) {
        if (!isScalarAttribute(attribute.value))
          return fail(top->name() + " has the list attribute " + attribute.name);
        op.attributes.push_back(attribute);
      }
      add(top, op);
      stack.pop_back();
    }
    return nodes_.at(val);
  }

  std::optional<int32_t> fail(std::string reason) {
    failure_ = std::move(reason);
    return std::nullopt;
  }

  ScalarFormulas formulas;
  std::string failure_;

 private:
  void add(const Val* val, Node node) {
    nodes_.emplace(val, static_cast<int32_t>(formulas.nodes.size()));
    formulas.nodes.push_back(std::move(node));
  }

  std::unordered_map<const Val*, Node> leaves_;
  std::unordered_map<const Val*, int32_t> nodes_;
};

/// Checks `recipe`'s formulas against `segment` and adds them to it as scalar expressions.
class Rebuilder {
 public:
  Rebuilder(const KernelRecipe& recipe, Fusion& segment) : recipe_(recipe), segment_(segment) {
    const std::vector<Node>& nodes = recipe.formulas.nodes;
    vals_.reserve(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) vals_.push_back(build(n, nodes[n]));
  }

  /// The Val of node `index` (null for -1); `what` names the use in errors.
  const Val* val(int32_t index, std::string_view what) const {
    if (index == -1) return nullptr;
    BRAZE_USER_CHECK(index >= 0 && static_cast<size_t>(index) < vals_.size())
        << "kernel " << recipe_.kernel_name << ": " << what << " refers to formula " << index
        << " of " << vals_.size();
    return vals_[static_cast<size_t>(index)];
  }

 private:
  Val* build(size_t n, const Node& node) {
    const std::string where = "kernel " + recipe_.kernel_name + ": formula " + std::to_string(n);
    const std::vector<Val*>& inputs = segment_.inputs();
    const bool input_in_range = node.input >= 0 && node.input < static_cast<int64_t>(inputs.size());
    switch (node.kind) {
      case Node::Kind::Constant:
        return segment_.constant(node.value, node.dtype);
      case Node::Kind::InputExtent: {
        const auto* tv = input_in_range
                             ? inputs[static_cast<size_t>(node.input)]->dynCast<TensorView>()
                             : nullptr;
        BRAZE_USER_CHECK(tv != nullptr)
            << where << " reads an extent of input " << node.input << ", which is not a tensor";
        const std::vector<IterDomain*> dims = tv->logicalNoReductions();
        BRAZE_USER_CHECK(node.dim >= 0 && node.dim < static_cast<int64_t>(dims.size()))
            << where << " reads dim " << node.dim << " of input " << node.input << " ("
            << tv->name() << "), which has rank " << dims.size();
        return dims[static_cast<size_t>(node.dim)]->logicalExtent();
      }
      case Node::Kind::InputScalar: {
        BRAZE_USER_CHECK(input_in_range &&
                         !inputs[static_cast<size_t>(node.input)]->isA<TensorView>())
            << where << " reads input " << node.input << " as a scalar, which it is not";
        return inputs[static_cast<size_t>(node.input)];
      }
      case Node::Kind::Op: {
        BRAZE_USER_CHECK(isElementwise(node.op))
            << where << " is a " << toString(node.op) << ", which is not a scalar op";
        BRAZE_USER_CHECK(static_cast<int64_t>(node.operands.size()) == elementwiseArity(node.op))
            << where << ": " << toString(node.op) << " takes " << elementwiseArity(node.op)
            << " operands, not " << node.operands.size();
        std::vector<Val*> operands;
        for (int32_t operand : node.operands) {
          BRAZE_USER_CHECK(operand >= 0 && static_cast<size_t>(operand) < n)
              << where << " uses formula " << operand << ", which does not come before it";
          operands.push_back(vals_[static_cast<size_t>(operand)]);
        }
        for (const Attribute& attribute : node.attributes) {
          BRAZE_USER_CHECK(isScalarAttribute(attribute.value))
              << where << ": attribute " << attribute.name << " is a list";
        }
        Val* result = segment_.create<Scalar>(node.dtype);
        segment_.create<Expr>(node.op, std::move(operands), std::vector<Val*>{result},
                              node.attributes);
        return result;
      }
    }
    BRAZE_USER_CHECK(false) << where << " has an unknown kind";
    return nullptr;
  }

  const KernelRecipe& recipe_;
  Fusion& segment_;
  std::vector<Val*> vals_;
};

}  // namespace

std::variant<KernelRecipe, std::string> recordKernelRecipe(const GeneratedKernel& kernel,
                                                           const Fusion& scheduled,
                                                           std::string kernel_key) {
  Recorder recorder(scheduled);
  KernelRecipe recipe;
  recipe.kernel_key = std::move(kernel_key);
  recipe.kernel_name = kernel.kernel_name;
  recipe.index_type = kernel.index_type;
  auto record = [&](const Val* val, int32_t& slot) {
    std::optional<int32_t> node = recorder.record(val);
    if (node) slot = *node;
    return node.has_value();
  };
  for (const KernelParameter& p : kernel.parameters) {
    KernelRecipe::Parameter stored;
    stored.kind = p.kind;
    stored.dtype = p.dtype;
    stored.rank = p.rank;
    stored.fusion_position = p.fusion_position;
    stored.tensor_map = p.tensor_map;
    if (p.kind == Kind::Workspace && !record(p.workspace_bytes, stored.workspace_bytes))
      return recorder.failure_;
    for (const Val* size : p.buffer_sizes) {
      if (!record(size, stored.buffer_sizes.emplace_back())) return recorder.failure_;
    }
    recipe.parameters.push_back(std::move(stored));
  }
  for (size_t axis = 0; axis < 3; ++axis) {
    if (!record(kernel.launch.grid[axis], recipe.grid[axis]) ||
        !record(kernel.launch.block[axis], recipe.block[axis]))
      return recorder.failure_;
  }
  if (!record(kernel.launch.dynamic_shared_memory_bytes, recipe.dynamic_shared_memory_bytes))
    return recorder.failure_;
  recipe.cluster = kernel.launch.cluster;
  recipe.cooperative = kernel.launch.cooperative;
  recipe.arch_specific = kernel.arch_specific;
  for (const auto& [check, message] : kernel.launch_checks) {
    int32_t node = -1;
    if (!record(check, node)) return recorder.failure_;
    recipe.launch_checks.emplace_back(node, message);
  }
  recipe.alignments = kernel.alignments;
  recipe.launch_bounds = kernel.launch_bounds;
  recipe.formulas = std::move(recorder.formulas);
  return recipe;
}

GeneratedKernel rebuildKernel(const KernelRecipe& recipe, Fusion& segment, std::string source) {
  const Rebuilder formulas(recipe, segment);
  const std::string& name = recipe.kernel_name;
  BRAZE_USER_CHECK(recipe.index_type == DataType::Int32 || recipe.index_type == DataType::Int64)
      << "kernel " << name << " has index type " << recipe.index_type;
  GeneratedKernel kernel;
  kernel.source = std::move(source);
  kernel.kernel_name = name;
  kernel.index_type = recipe.index_type;
  const std::vector<Val*>& inputs = segment.inputs();
  const std::vector<Val*>& outputs = segment.outputs();
  std::vector<int> output_seen(outputs.size(), 0);
  for (size_t i = 0; i < recipe.parameters.size(); ++i) {
    const KernelRecipe::Parameter& stored = recipe.parameters[i];
    const std::string label = "kernel " + name + " parameter " + std::to_string(i);
    KernelParameter p;
    p.kind = stored.kind;
    p.dtype = stored.dtype;
    p.rank = stored.rank;
    p.fusion_position = stored.fusion_position;
    p.tensor_map = stored.tensor_map;
    const auto position = static_cast<size_t>(stored.fusion_position);
    switch (stored.kind) {
      case Kind::InputTensor:
      case Kind::InputScalar:
        BRAZE_USER_CHECK(stored.fusion_position >= 0 && position < inputs.size() &&
                         inputs[position]->isA<TensorView>() == (stored.kind == Kind::InputTensor))
            << label << " is not input " << stored.fusion_position << " of the segment";
        p.val = inputs[position];
        break;
      case Kind::OutputTensor:
        BRAZE_USER_CHECK(stored.fusion_position >= 0 && position < outputs.size() &&
                         outputs[position]->isA<TensorView>())
            << label << " is not output " << stored.fusion_position << " of the segment";
        BRAZE_USER_CHECK(++output_seen[position] == 1)
            << label << " is a second parameter for output " << position;
        p.val = outputs[position];
        break;
      case Kind::InputTensorMap:
      case Kind::OutputTensorMap: {
        const auto& side = stored.kind == Kind::InputTensorMap ? inputs : outputs;
        BRAZE_USER_CHECK(stored.fusion_position >= 0 && position < side.size() &&
                         side[position]->isA<TensorView>())
            << label << " is not a tensor map of "
            << (stored.kind == Kind::InputTensorMap ? "input " : "output ")
            << stored.fusion_position << " of the segment";
        p.val = side[position];
        const std::optional<std::string> problem =
            tensorMapParameterProblem(stored.tensor_map, stored.rank);
        BRAZE_USER_CHECK(!problem) << label << " " << *problem;
        break;
      }
      case Kind::GlobalBuffer:
        BRAZE_USER_CHECK(static_cast<int64_t>(stored.buffer_sizes.size()) == stored.rank)
            << label << " has rank " << stored.rank << " but " << stored.buffer_sizes.size()
            << " sizes";
        for (int32_t size : stored.buffer_sizes) {
          const Val* extent = formulas.val(size, label + " size");
          BRAZE_USER_CHECK(extent != nullptr) << label << " has a missing size";
          p.buffer_sizes.push_back(extent);
        }
        break;
      case Kind::Workspace:
        p.workspace_bytes = formulas.val(stored.workspace_bytes, label + " bytes");
        BRAZE_USER_CHECK(p.workspace_bytes != nullptr) << label << " has no byte count";
        break;
      default:
        BRAZE_USER_CHECK(false) << label << " has an unknown kind";
    }
    if (p.val != nullptr) {
      BRAZE_USER_CHECK(p.dtype == p.val->dtype())
          << label << " is " << p.dtype << " but the segment's " << p.val->name() << " is "
          << p.val->dtype();
      const auto* tv = p.val->dynCast<TensorView>();
      BRAZE_USER_CHECK(tv == nullptr || tv->rank() == p.rank)
          << label << " has rank " << p.rank << " but the segment's " << tv->name() << " has rank "
          << tv->rank();
    }
    kernel.parameters.push_back(std::move(p));
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    BRAZE_USER_CHECK(output_seen[j] == 1)
        << "kernel " << name << " writes no parameter for output " << j << " of the segment";
  }
  for (size_t axis = 0; axis < 3; ++axis) {
    kernel.launch.grid[axis] = formulas.val(recipe.grid[axis], "the grid");
    kernel.launch.block[axis] = formulas.val(recipe.block[axis], "the block");
  }
  kernel.launch.dynamic_shared_memory_bytes =
      formulas.val(recipe.dynamic_shared_memory_bytes, "the dynamic shared memory");
  for (const int64_t ctas : recipe.cluster) {
    BRAZE_USER_CHECK(ctas >= 1 && ctas <= 16)
        << "kernel " << name << " has a cluster of " << ctas << " CTAs along a dim";
  }
  kernel.launch.cluster = recipe.cluster;
  kernel.launch.cooperative = recipe.cooperative;
  kernel.arch_specific = recipe.arch_specific;
  for (const auto& [check, message] : recipe.launch_checks) {
    const Val* val = formulas.val(check, "a launch check");
    BRAZE_USER_CHECK(val != nullptr) << "kernel " << name << " has an empty launch check";
    kernel.launch_checks.emplace_back(val, message);
  }
  kernel.alignments = recipe.alignments;
  kernel.launch_bounds = recipe.launch_bounds;
  return kernel;
}

}  // namespace braze
