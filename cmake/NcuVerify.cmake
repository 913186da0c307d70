# NcuVerify.cmake: ncuverify's expectation files as CTest tests.
#
#   include(NcuVerify)   # with this folder on CMAKE_MODULE_PATH
#   ncuverify_add_test(NAME <name> FILES <yaml>...
#                      [ARGS <check option>...]
#                      [BINARY_TARGET <target> BINARY_KERNELS <kernel key>...])
#
# Registers one test per expectation file, <name>.<file name without .yaml>, that runs
# `ncuverify check <ARGS> <file>` from the current source folder:
#   - exit 0 passes; 3 (the claims cannot be measured here: no GPU, no ncu) is reported as skipped;
#     1 (a claim failed), 2 (bad input) and 4 (ncuverify failed) fail the test;
#   - each test asks CTest for one GPU (RESOURCE_GROUPS "gpus:1") unless ARGS holds --static-only,
#     which needs none; with ctest --resource-spec-file, it profiles on the GPU given (--gpus N, N the
#     id the spec file gives: a CUDA device index), so tests on several GPUs run side by side;
#   - BINARY_TARGET: the target's output file ($<TARGET_FILE:target>) is judged for each `binary:`
#     kernel named in BINARY_KERNELS (check --binary KEY=FILE), its folder allowed (--allow-include);
#     a test <name>.build.<target> builds the target first (a CTest fixture every test of the call
#     requires), so `ctest` alone checks what the build makes now.
#
# The ncuverify executable: the cache variable NCUVERIFY_EXECUTABLE (-DNCUVERIFY_EXECUTABLE=...), else
# found on the PATH.

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.16)
  message(FATAL_ERROR "NcuVerify.cmake needs CMake 3.16 or later (RESOURCE_GROUPS)")
endif()
# The function keeps these policies (IN_LIST among them) whatever the including project asks for.
cmake_policy(PUSH)
cmake_policy(VERSION 3.16)

find_program(NCUVERIFY_EXECUTABLE NAMES ncuverify DOC "the ncuverify executable that runs the checks")

# sh -c SCRIPT NCUVERIFY ARG...: ncuverify check ARG..., with --gpus N where ctest gave GPU N; exec keeps
# ncuverify's exit code (3 is the skip).
set(_ncuverify_on_given_gpu [=[gpu=${CTEST_RESOURCE_GROUP_0_GPUS:-}; gpu=${gpu#id:}; gpu=${gpu%%,*}; exec "$0" check ${gpu:+--gpus "$gpu"} "$@"]=])

function(ncuverify_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;BINARY_TARGET" "FILES;ARGS;BINARY_KERNELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ncuverify_add_test: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_FILES)
    message(FATAL_ERROR "ncuverify_add_test: give NAME <name> and FILES <expectation file>...")
  endif()
  if(NOT NCUVERIFY_EXECUTABLE)
    message(FATAL_ERROR "ncuverify_add_test: no ncuverify found: install it (pip install ncuverify)"
                        " or set -DNCUVERIFY_EXECUTABLE=/path/to/ncuverify")
  endif()
  if(arg_BINARY_TARGET AND NOT arg_BINARY_KERNELS)
    message(FATAL_ERROR "ncuverify_add_test: BINARY_TARGET ${arg_BINARY_TARGET} needs BINARY_KERNELS:"
                        " the `binary:` kernels of the file that it builds")
  endif()
  if(arg_BINARY_KERNELS AND NOT arg_BINARY_TARGET)
    message(FATAL_ERROR "ncuverify_add_test: BINARY_KERNELS needs the BINARY_TARGET that builds them")
  endif()

  set(check_args ${arg_ARGS})
  set(fixture "")
  if(arg_BINARY_TARGET)
    if(NOT TARGET ${arg_BINARY_TARGET})
      message(FATAL_ERROR "ncuverify_add_test: BINARY_TARGET ${arg_BINARY_TARGET} is not a target")
    endif()
    foreach(kernel IN LISTS arg_BINARY_KERNELS)
      list(APPEND check_args --binary "${kernel}=$<TARGET_FILE:${arg_BINARY_TARGET}>")
    endforeach()
    # the build folder is usually outside the project of the expectation file
    list(APPEND check_args --allow-include "$<TARGET_FILE_DIR:${arg_BINARY_TARGET}>")
    # CTest runs tests, not builds: a test that builds the target, set up before the checks
    set(fixture "ncuverify.build.${arg_BINARY_TARGET}")
    set(build_test "${arg_NAME}.build.${arg_BINARY_TARGET}")
    add_test(NAME "${build_test}"
             COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --config "$<CONFIG>"
                     --target "${arg_BINARY_TARGET}")
    set_tests_properties("${build_test}" PROPERTIES FIXTURES_SETUP "${fixture}")
  endif()

  foreach(file IN LISTS arg_FILES)
    get_filename_component(path "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${file}" NAME_WE)
    set(test "${arg_NAME}.${stem}")
    if("--static-only" IN_LIST arg_ARGS)
      add_test(NAME "${test}" COMMAND "${NCUVERIFY_EXECUTABLE}" check ${check_args} "${path}"
               WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
    else()
      # profiled on the GPU ctest gives it (CTEST_RESOURCE_GROUP_0_GPUS=id:N,slots:1 with
      # --resource-spec-file), else on ncuverify's default GPU
      add_test(NAME "${test}" COMMAND /bin/sh -c "${_ncuverify_on_given_gpu}"
                                      "${NCUVERIFY_EXECUTABLE}" ${check_args} "${path}"
               WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
      set_tests_properties("${test}" PROPERTIES RESOURCE_GROUPS "gpus:1")
    endif()
    set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 3 LABELS ncuverify)
    if(fixture)
      set_tests_properties("${test}" PROPERTIES FIXTURES_REQUIRED "${fixture}" DEPENDS "${build_test}")
    endif()
  endforeach()
endfunction()

cmake_policy(POP)
