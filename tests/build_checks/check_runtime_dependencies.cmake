# Fails when building TARGET alone (`ninja TARGET`, as tools/run-demo.sh does) would not build
# what TARGET loads at run time: the plugin scanner and every shipped plugin with its manifest.
# It reads Ninja's build graph, so it needs no build of its own:
#   ninja -t inputs TARGET    every file TARGET's build depends on, transitively
#   ninja -t commands TARGET  every command it runs, transitively; a plugin's manifest is
#                             written by a post-link command (`braze plugins manifest LIB`), so
#                             the manifest is built when that command is among them
#
#   cmake -DNINJA=ninja -DBUILD_DIR=build -DTARGET=braze_demo -DSCANNER=<path>
#         "-DPLUGINS=<path>|<path>|..." -P check_runtime_dependencies.cmake
cmake_minimum_required(VERSION 3.22...3.31)

foreach(variable NINJA BUILD_DIR TARGET SCANNER PLUGINS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "check_runtime_dependencies: -D${variable}=... is missing")
  endif()
endforeach()
string(REPLACE "|" ";" plugins "${PLUGINS}")

function(ninja_tool tool output)
  execute_process(COMMAND ${NINJA} -C ${BUILD_DIR} -t ${tool} ${TARGET}
                  OUTPUT_VARIABLE text ERROR_VARIABLE error RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "ninja -t ${tool} ${TARGET} failed (${result}): ${error}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(${output} "${lines}" PARENT_SCOPE)
endfunction()
ninja_tool(inputs inputs)
ninja_tool(commands commands)
string(JOIN "\n" commands_text ${commands})

set(missing)
foreach(file ${SCANNER} ${plugins})
  # Ninja names files built in the tree relative to the build folder.
  file(RELATIVE_PATH relative ${BUILD_DIR} ${file})
  if(NOT relative IN_LIST inputs AND NOT file IN_LIST inputs)
    list(APPEND missing "${relative}")
  endif()
endforeach()
foreach(plugin ${plugins})
  string(FIND "${commands_text}" "plugins manifest ${plugin} " at)
  if(at EQUAL -1)
    file(RELATIVE_PATH relative ${BUILD_DIR} ${plugin})
    list(APPEND missing "the manifest of ${relative} (braze plugins manifest ${plugin})")
  endif()
endforeach()

if(missing)
  list(JOIN missing "\n  " listed)
  message(FATAL_ERROR "Building ${TARGET} alone does not build what it loads at run time:\n"
          "  ${listed}\n"
          "Without the scanner every plugin is refused; without a plugin its schedulers are "
          "missing. Link ${TARGET} to braze_runtime_plugins (plugins/CMakeLists.txt), which "
          "depends on the scanner and every shipped plugin.")
endif()
list(LENGTH plugins count)
message(STATUS "${TARGET} builds the plugin scanner and all ${count} shipped plugins with their "
        "manifests")
