# Writes OUTPUT: a C++ file defining braze::codegen::runtimeHeaders(), the list of
# (file name, text) of every header in HEADERS. Run as `cmake -P` at build time.
set(content "// Generated from core/src/codegen/runtime/*.cuh; do not edit.\n")
string(APPEND content "#include <string_view>\n#include <utility>\n#include <vector>\n\n")
string(APPEND content "namespace braze::codegen {\n\n")
string(APPEND content "const std::vector<std::pair<std::string_view, std::string_view>>& runtimeHeaders() {\n")
string(APPEND content "  static const std::vector<std::pair<std::string_view, std::string_view>> headers = {\n")
foreach(header ${HEADERS})
  get_filename_component(name ${header} NAME)
  file(READ ${header} text)
  # Raw string literals with a delimiter that cannot occur in CUDA source.
  string(APPEND content "      {\"${name}\", R\"braze_runtime(${text})braze_runtime\"},\n")
endforeach()
string(APPEND content "  };\n  return headers;\n}\n\n}  // namespace braze::codegen\n")
file(WRITE ${OUTPUT} "${content}")
