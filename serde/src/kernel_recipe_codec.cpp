#include "kernel_recipe_codec.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

namespace braze::serde::detail {

namespace {

using Node = ScalarFormulas::Node;

constexpr uint8_t kBool = 0, kInteger = 1, kReal = 2, kText = 3;

std::string text(const flatbuffers::String* value) {
  return value == nullptr ? std::string() : value->str();
}

std::vector<int32_t> ints(const flatbuffers::Vector<int32_t>* values) {
  return values == nullptr ? std::vector<int32_t>()
                           : std::vector<int32_t>(values->begin(), values->end());
}

std::optional<DataType> dtypeOf(const flatbuffers::String* name, std::string& problem) {
  std::optional<DataType> dtype = parseDataType(text(name));
  if (!dtype) problem = "unknown dtype '" + text(name) + "'";
  return dtype;
}

int64_t realBits(double value) {
  int64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

void hashAttribute(ContentHasher& hasher, const Attribute& attribute) {
  hasher.add(attribute.name);
  if (const auto* flag = std::get_if<bool>(&attribute.value)) {
    hasher.add("bool").add(int64_t{*flag});
  } else if (const auto* integer = std::get_if<int64_t>(&attribute.value)) {
    hasher.add("int").add(*integer);
  } else if (const auto* real = std::get_if<double>(&attribute.value)) {
    hasher.add("real").add(realBits(*real));
  } else if (const auto* string = std::get_if<std::string>(&attribute.value)) {
    hasher.add("text").add(*string);
  } else {
    hasher.add("list");  // never recorded (recordKernelRecipe refuses list attributes)
  }
}

void hashInts(ContentHasher& hasher, const std::vector<int32_t>& values) {
  hasher.add(static_cast<int64_t>(values.size()));
  for (int32_t value : values) hasher.add(value);
}

}  // namespace

flatbuffers::Offset<fb::KernelRecipe> encodeKernelRecipe(flatbuffers::FlatBufferBuilder& builder,
                                                         const KernelRecipe& recipe) {
  std::vector<flatbuffers::Offset<fb::FormulaNode>> nodes;
  for (const Node& node : recipe.formulas.nodes) {
    std::vector<flatbuffers::Offset<fb::FormulaAttribute>> attributes;
    for (const Attribute& attribute : node.attributes) {
      const auto name = builder.CreateString(attribute.name);
      flatbuffers::Offset<flatbuffers::String> string_value;
      if (const auto* string = std::get_if<std::string>(&attribute.value))
        string_value = builder.CreateString(*string);
      fb::FormulaAttributeBuilder stored(builder);
      stored.add_name(name);
      if (const auto* flag = std::get_if<bool>(&attribute.value)) {
        stored.add_kind(kBool);
        stored.add_flag(*flag);
      } else if (const auto* integer = std::get_if<int64_t>(&attribute.value)) {
        stored.add_kind(kInteger);
        stored.add_integer(*integer);
      } else if (const auto* real = std::get_if<double>(&attribute.value)) {
        stored.add_kind(kReal);
        stored.add_real(*real);
      } else {
        stored.add_kind(kText);
        stored.add_text(string_value);
      }
      attributes.push_back(stored.Finish());
    }
    const uint8_t value_kind = std::holds_alternative<bool>(node.value)      ? kBool
                               : std::holds_alternative<int64_t>(node.value) ? kInteger
                                                                             : kReal;
    const int64_t integer = value_kind == kBool      ? int64_t{std::get<bool>(node.value)}
                            : value_kind == kInteger ? std::get<int64_t>(node.value)
                                                     : 0;
    const double real = value_kind == kReal ? std::get<double>(node.value) : 0.0;
    nodes.push_back(fb::CreateFormulaNode(
        builder, static_cast<uint8_t>(node.kind),
        builder.CreateString(std::string(toString(node.dtype))), value_kind, integer, real,
        static_cast<int32_t>(node.input), static_cast<int32_t>(node.dim),
        node.kind == Node::Kind::Op ? builder.CreateString(std::string(toString(node.op))) : 0,
        builder.CreateVector(node.operands), builder.CreateVector(attributes)));
  }
  std::vector<flatbuffers::Offset<fb::RecipeParameter>> parameters;
  for (const KernelRecipe::Parameter& p : recipe.parameters) {
    const std::vector<int32_t> map_dims(p.tensor_map.dims.begin(), p.tensor_map.dims.end());
    parameters.push_back(fb::CreateRecipeParameter(
        builder, static_cast<uint8_t>(p.kind), builder.CreateString(std::string(toString(p.dtype))),
        static_cast<int32_t>(p.rank), static_cast<int32_t>(p.fusion_position), p.workspace_bytes,
        builder.CreateVector(p.buffer_sizes), builder.CreateVector(map_dims),
        builder.CreateVector(p.tensor_map.box), static_cast<uint8_t>(p.tensor_map.swizzle),
        p.tensor_map.fill_nan));
  }
  std::vector<flatbuffers::Offset<fb::LaunchCheck>> checks;
  for (const auto& [formula, message] : recipe.launch_checks)
    checks.push_back(fb::CreateLaunchCheck(builder, formula, builder.CreateString(message)));
  std::vector<flatbuffers::Offset<fb::RecipeAlignment>> alignments;
  for (const GeneratedKernel::Alignment& alignment : recipe.alignments) {
    std::vector<int32_t> dims(alignment.stride_dims.begin(), alignment.stride_dims.end());
    alignments.push_back(fb::CreateRecipeAlignment(builder,
                                                   static_cast<int32_t>(alignment.parameter),
                                                   alignment.bytes, builder.CreateVector(dims)));
  }
  const std::vector<int32_t> grid(recipe.grid.begin(), recipe.grid.end());
  const std::vector<int32_t> block(recipe.block.begin(), recipe.block.end());
  return fb::CreateKernelRecipe(
      builder, builder.CreateString(recipe.kernel_key), builder.CreateString(recipe.kernel_name),
      builder.CreateString(std::string(toString(recipe.index_type))),
      builder.CreateVector(parameters), builder.CreateVector(grid), builder.CreateVector(block),
      recipe.dynamic_shared_memory_bytes, builder.CreateVector(checks),
      builder.CreateVector(alignments), recipe.launch_bounds.has_value(),
      recipe.launch_bounds ? recipe.launch_bounds->max_threads_per_block : 0,
      recipe.launch_bounds ? recipe.launch_bounds->min_blocks_per_sm : 0,
      builder.CreateVector(nodes),
      recipe.cluster == std::array<int64_t, 3>{1, 1, 1}
          ? 0
          : builder.CreateVector(
                std::vector<int64_t>(recipe.cluster.begin(), recipe.cluster.end())),
      recipe.arch_specific, recipe.cooperative);
}

std::optional<KernelRecipe> decodeKernelRecipe(const fb::KernelRecipe& stored,
                                               std::string& problem) {
  KernelRecipe recipe;
  recipe.kernel_key = text(stored.kernel_key());
  recipe.kernel_name = text(stored.kernel_name());
  std::optional<DataType> index_type = dtypeOf(stored.index_type(), problem);
  if (!index_type) return std::nullopt;
  recipe.index_type = *index_type;
  if (stored.formulas() != nullptr) {
    for (const fb::FormulaNode* stored_node : *stored.formulas()) {
      Node node;
      if (stored_node->kind() > static_cast<uint8_t>(Node::Kind::Op)) {
        problem = "a formula has the unknown kind " + std::to_string(stored_node->kind());
        return std::nullopt;
      }
      node.kind = static_cast<Node::Kind>(stored_node->kind());
      std::optional<DataType> dtype = dtypeOf(stored_node->dtype(), problem);
      if (!dtype) return std::nullopt;
      node.dtype = *dtype;
      switch (stored_node->value_kind()) {
        case kBool:
          node.value = stored_node->integer() != 0;
          break;
        case kInteger:
          node.value = stored_node->integer();
          break;
        case kReal:
          node.value = stored_node->real();
          break;
        default:
          problem = "a constant has the unknown kind " + std::to_string(stored_node->value_kind());
          return std::nullopt;
      }
      node.input = stored_node->input();
      node.dim = stored_node->dim();
      if (node.kind == Node::Kind::Op) {
        std::optional<OpKind> op = parseOpKind(text(stored_node->op()));
        if (!op) {
          problem = "a formula uses the unknown op '" + text(stored_node->op()) + "'";
          return std::nullopt;
        }
        node.op = *op;
      }
      node.operands = ints(stored_node->operands());
      if (stored_node->attributes() != nullptr) {
        for (const fb::FormulaAttribute* attribute : *stored_node->attributes()) {
          Attribute decoded{text(attribute->name()), false};
          switch (attribute->kind()) {
            case kBool:
              decoded.value = attribute->flag();
              break;
            case kInteger:
              decoded.value = attribute->integer();
              break;
            case kReal:
              decoded.value = attribute->real();
              break;
            case kText:
              decoded.value = text(attribute->text());
              break;
            default:
              problem = "an attribute has the unknown kind " + std::to_string(attribute->kind());
              return std::nullopt;
          }
          node.attributes.push_back(std::move(decoded));
        }
      }
      recipe.formulas.nodes.push_back(std::move(node));
    }
  }
  if (stored.parameters() != nullptr) {
    for (const fb::RecipeParameter* stored_parameter : *stored.parameters()) {
      KernelRecipe::Parameter p;
      if (stored_parameter->kind() > static_cast<uint8_t>(KernelParameter::Kind::OutputTensorMap)) {
        problem = "a parameter has the unknown kind " + std::to_string(stored_parameter->kind());
        return std::nullopt;
      }
      p.kind = static_cast<KernelParameter::Kind>(stored_parameter->kind());
      std::optional<DataType> dtype = dtypeOf(stored_parameter->dtype(), problem);
      if (!dtype) return std::nullopt;
      p.dtype = *dtype;
      p.rank = stored_parameter->rank();
      p.fusion_position = stored_parameter->fusion_position();
      p.workspace_bytes = stored_parameter->workspace_bytes();
      p.buffer_sizes = ints(stored_parameter->buffer_sizes());
      const std::vector<int32_t> map_dims = ints(stored_parameter->tensor_map_dims());
      p.tensor_map.dims.assign(map_dims.begin(), map_dims.end());
      if (stored_parameter->tensor_map_box() != nullptr) {
        p.tensor_map.box.assign(stored_parameter->tensor_map_box()->begin(),
                                stored_parameter->tensor_map_box()->end());
      }
      if (stored_parameter->tensor_map_swizzle() >
          static_cast<uint8_t>(TensorMapParameter::Swizzle::Bytes128)) {
        problem = "a tensor map has the unknown swizzle " +
                  std::to_string(stored_parameter->tensor_map_swizzle());
        return std::nullopt;
      }
      p.tensor_map.swizzle =
          static_cast<TensorMapParameter::Swizzle>(stored_parameter->tensor_map_swizzle());
      p.tensor_map.fill_nan = stored_parameter->tensor_map_fill_nan();
      recipe.parameters.push_back(std::move(p));
    }
  }
  const std::vector<int32_t> grid = ints(stored.grid());
  const std::vector<int32_t> block = ints(stored.block());
  if (grid.size() != 3 || block.size() != 3) {
    problem = "the launch geometry does not have three grid and three block dims";
    return std::nullopt;
  }
  std::copy(grid.begin(), grid.end(), recipe.grid.begin());
  std::copy(block.begin(), block.end(), recipe.block.begin());
  recipe.dynamic_shared_memory_bytes = stored.dynamic_shared_memory_bytes();
  if (stored.cluster() != nullptr) {
    if (stored.cluster()->size() != 3) {
      problem = "the cluster shape does not have three dims";
      return std::nullopt;
    }
    std::copy(stored.cluster()->begin(), stored.cluster()->end(), recipe.cluster.begin());
  }
  recipe.arch_specific = stored.arch_specific();
  recipe.cooperative = stored.cooperative();
  if (stored.launch_checks() != nullptr) {
    for (const fb::LaunchCheck* check : *stored.launch_checks())
      recipe.launch_checks.emplace_back(check->formula(), text(check->message()));
  }
  if (stored.alignments() != nullptr) {
    for (const fb::RecipeAlignment* alignment : *stored.alignments()) {
      if (alignment->parameter() < 0) {
        problem = "an alignment names a negative parameter";
        return std::nullopt;
      }
      const std::vector<int32_t> dims = ints(alignment->stride_dims());
      recipe.alignments.push_back({static_cast<size_t>(alignment->parameter()), alignment->bytes(),
                                   std::vector<int64_t>(dims.begin(), dims.end())});
    }
  }
  if (stored.has_launch_bounds())
    recipe.launch_bounds = LaunchBounds{stored.max_threads_per_block(), stored.min_blocks_per_sm()};
  return recipe;
}

void hashKernelRecipe(ContentHasher& hasher, const KernelRecipe& recipe) {
  hasher.add(recipe.kernel_key).add(recipe.kernel_name).add(toString(recipe.index_type));
  hasher.add(static_cast<int64_t>(recipe.formulas.nodes.size()));
  for (const Node& node : recipe.formulas.nodes) {
    hasher.add(static_cast<int64_t>(node.kind)).add(toString(node.dtype));
    hasher.add(node.value);
    hasher.add(node.input).add(node.dim).add(node.kind == Node::Kind::Op ? toString(node.op) : "");
    hashInts(hasher, node.operands);
    hasher.add(static_cast<int64_t>(node.attributes.size()));
    for (const Attribute& attribute : node.attributes) hashAttribute(hasher, attribute);
  }
  hasher.add(static_cast<int64_t>(recipe.parameters.size()));
  for (const KernelRecipe::Parameter& p : recipe.parameters) {
    hasher.add(static_cast<int64_t>(p.kind)).add(toString(p.dtype)).add(p.rank);
    hasher.add(p.fusion_position).add(p.workspace_bytes);
    hashInts(hasher, p.buffer_sizes);
    // Hashed only where present, so that entries written before tensor maps keep their hash.
    if (p.tensor_map != TensorMapParameter{}) {
      hasher.add(static_cast<int64_t>(p.tensor_map.dims.size()));
      for (int64_t dim : p.tensor_map.dims) hasher.add(dim);
      for (uint32_t box : p.tensor_map.box) hasher.add(static_cast<int64_t>(box));
      hasher.add(static_cast<int64_t>(p.tensor_map.swizzle)).add(int64_t{p.tensor_map.fill_nan});
    }
  }
  for (int32_t dim : recipe.grid) hasher.add(dim);
  for (int32_t dim : recipe.block) hasher.add(dim);
  hasher.add(recipe.dynamic_shared_memory_bytes);
  if (recipe.cluster != std::array<int64_t, 3>{1, 1, 1}) {
    for (int64_t ctas : recipe.cluster) hasher.add(ctas);
  }
  if (recipe.arch_specific) hasher.add(std::string_view("arch_specific"));
  if (recipe.cooperative) hasher.add(std::string_view("cooperative"));
  hasher.add(static_cast<int64_t>(recipe.launch_checks.size()));
  for (const auto& [formula, message] : recipe.launch_checks) hasher.add(formula).add(message);
  hasher.add(static_cast<int64_t>(recipe.alignments.size()));
  for (const GeneratedKernel::Alignment& alignment : recipe.alignments) {
    hasher.add(static_cast<int64_t>(alignment.parameter)).add(alignment.bytes);
    hasher.add(static_cast<int64_t>(alignment.stride_dims.size()));
    for (int64_t dim : alignment.stride_dims) hasher.add(dim);
  }
  hasher.add(int64_t{recipe.launch_bounds.has_value()});
  if (recipe.launch_bounds)
    hasher.add(recipe.launch_bounds->max_threads_per_block)
        .add(recipe.launch_bounds->min_blocks_per_sm);
}

}  // namespace braze::serde::detail
