#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace braze {

/// Static configuration of an Expr (reduction axes, a permutation, a gelu flavor). Values
/// computed at run time are never attributes; they are scalar Val inputs.
using AttributeValue =
    std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, std::vector<bool>>;

struct Attribute {
  std::string name;
  AttributeValue value;

  bool operator==(const Attribute&) const = default;
};

/// "[0, 2]", "true", "\"tanh\"": the printer's spelling.
std::string toString(const AttributeValue& value);

}  // namespace braze
