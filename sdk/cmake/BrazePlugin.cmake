# braze_add_scheduler_plugin: builds a Braze scheduler plugin and writes its manifest.
#
#   braze_add_scheduler_plugin(TARGET acme_pointwise
#                              SOURCES acme_pointwise.cpp
#                              ID acme::pointwise VERSION 1.2.0
#                              [INSTALL_DESTINATION <dir>] [NO_INSTALL])
#
# - A shared library `lib<TARGET>.so` linked to Braze::core, compiled as C++20 with hidden
#   visibility (only the entry point BRAZE_DEFINE_PLUGIN exports is visible, so plugins loaded
#   side by side never bind to each other's symbols) and linked with --no-undefined.
# - BRAZE_PLUGIN_ID and BRAZE_PLUGIN_VERSION are defined for the sources: give the scheduler
#   class `kId = BRAZE_PLUGIN_ID` and `kVersion = BRAZE_PLUGIN_VERSION`.
# - After every link, `braze plugins manifest` writes lib<TARGET>.braze-plugin.json beside the
#   library from the plugin's own descriptor, and fails the build if the plugin does not declare
#   ID@VERSION.
# - `cmake --install` puts the library in INSTALL_DESTINATION (default: <libdir>/braze/plugins,
#   where an installed Braze looks; elsewhere, add the folder to BRAZE_PLUGIN_PATH) and writes
#   the manifest again there, since installing rewrites the library's RPATH and so its sha256.
include_guard(GLOBAL)
include(GNUInstallDirs)

function(braze_add_scheduler_plugin)
  cmake_parse_arguments(PARSE_ARGV 0 arg "NO_INSTALL" "TARGET;ID;VERSION;INSTALL_DESTINATION"
                        "SOURCES")
  set(usage "braze_add_scheduler_plugin(TARGET name SOURCES files... ID vendor::name VERSION x.y.z)")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "braze_add_scheduler_plugin: unknown arguments '${arg_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  foreach(required TARGET SOURCES ID VERSION)
    if(NOT arg_${required})
      message(FATAL_ERROR "braze_add_scheduler_plugin: ${required} is missing; usage: ${usage}")
    endif()
  endforeach()
  if(NOT arg_ID MATCHES "^[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "braze_add_scheduler_plugin(${arg_TARGET}): ID '${arg_ID}' must read vendor::name (letters, digits, underscores)")
  endif()
  if(NOT arg_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "braze_add_scheduler_plugin(${arg_TARGET}): VERSION '${arg_VERSION}' must be a semantic version major.minor.patch, e.g. 1.0.0")
  endif()
  if(NOT TARGET Braze::core OR NOT TARGET Braze::braze)
    message(FATAL_ERROR "braze_add_scheduler_plugin(${arg_TARGET}): Braze::core and Braze::braze are not defined; call find_package(Braze CONFIG REQUIRED) first")
  endif()

  set(target ${arg_TARGET})
  add_library(${target} SHARED ${arg_SOURCES})
  target_link_libraries(${target} PUBLIC Braze::core)
  target_compile_definitions(${target} PRIVATE BRAZE_PLUGIN_ID="${arg_ID}"
                             BRAZE_PLUGIN_VERSION="${arg_VERSION}")
  target_link_options(${target} PRIVATE LINKER:--no-undefined)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)

  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND Braze::braze plugins manifest $<TARGET_FILE:${target}> --expect ${arg_ID}@${arg_VERSION}
    COMMENT "Writing the manifest of ${target}"
    VERBATIM)
  # In Braze's own tree the command is built here too: build it first.
  get_target_property(cli Braze::braze ALIASED_TARGET)
  if(cli)
    add_dependencies(${target} ${cli})
  endif()

  if(arg_NO_INSTALL)
    return()
  endif()
  set(destination "${arg_INSTALL_DESTINATION}")
  get_target_property(core_imported Braze::core IMPORTED)
  if(core_imported)
    # Out of Braze's tree: the installed plugin finds libbraze_core where it was linked.
    set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    if(NOT destination)
      set(destination ${CMAKE_INSTALL_LIBDIR}/braze/plugins)
    endif()
  else()
    # In Braze's tree: the plugin is installed beside the installed core's libdir.
    if(NOT destination)
      set(destination ${BRAZE_PLUGIN_INSTALL_DESTINATION})
    endif()
    file(RELATIVE_PATH to_libdir ${CMAKE_INSTALL_PREFIX}/${destination}
         ${CMAKE_INSTALL_FULL_LIBDIR})
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/${to_libdir}")
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION ${destination})
  if(IS_ABSOLUTE "${destination}")
    set(installed "\$ENV{DESTDIR}${destination}/$<TARGET_FILE_NAME:${target}>")
  else()
    set(installed "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${destination}/$<TARGET_FILE_NAME:${target}>")
  endif()
  install(CODE "
    execute_process(COMMAND \"$<TARGET_FILE:Braze::braze>\" plugins manifest \"${installed}\"
                            --expect ${arg_ID}@${arg_VERSION}
                    RESULT_VARIABLE braze_manifest_result)
    if(NOT braze_manifest_result EQUAL 0)
      message(FATAL_ERROR \"Could not write the manifest of the installed plugin ${installed}\")
    endif()")
endfunction()
