# Fails when a tracked C/C++ file drifts from the committed .clang-format (docs/style.md, Formatting): the formatting
# is checked by the test command, not only by a hook. Kernels (.cu, .py) are left as written: a problem's
# baseline is content-hashed, so reformatting it would orphan stored sessions.
#   cmake -DSOURCE_DIR=<checkout> -DCLANG_FORMAT=<clang-format> -P tests/format_check.cmake
# clang-format versions format differently; the config is checked with version 14 (Debian 12's
# clang-format package, scripts/install-deps.sh). Any other version skips (ctest's SKIP_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.16)
if(NOT CLANG_FORMAT)
    message(FATAL_ERROR "format_check: clang-format not found; run scripts/install-deps.sh")
endif()
execute_process(COMMAND ${CLANG_FORMAT} --version OUTPUT_VARIABLE version_text OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "version ([0-9]+)" _ "${version_text}")
if(NOT CMAKE_MATCH_1 STREQUAL "14")
    message(STATUS "format_check skipped: ${version_text} is not clang-format 14")
    return()
endif()
execute_process(
    COMMAND git ls-files -- "*.c" "*.cc" "*.cpp" "*.h" "*.hpp"
    WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_VARIABLE tracked
    RESULT_VARIABLE git_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT git_rc EQUAL 0)
    # Not a git checkout (a source package): every C/C++ file of the parts.
    set(tracked "")
    foreach(dir app bench cli core runner tests widgets)
        file(GLOB_RECURSE found RELATIVE ${SOURCE_DIR} "${SOURCE_DIR}/${dir}/*.cpp" "${SOURCE_DIR}/${dir}/*.h")
        list(APPEND tracked ${found})
    endforeach()
else()
    string(REPLACE "\n" ";" tracked "${tracked}")
endif()
list(LENGTH tracked count)
if(count EQUAL 0)
    message(FATAL_ERROR "format_check: no C/C++ files found under ${SOURCE_DIR}")
endif()
execute_process(
    COMMAND ${CLANG_FORMAT} --style=file --dry-run -Werror ${tracked}
    WORKING_DIRECTORY ${SOURCE_DIR}
    RESULT_VARIABLE rc
    ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
    string(REGEX MATCHALL "[^\n]+: error: code should be clang-formatted" lines "${errors}")
    set(files "")
    foreach(line IN LISTS lines)
        string(REGEX REPLACE ":[0-9]+:[0-9]+: error:.*" "" file "${line}")
        list(APPEND files ${file})
    endforeach()
    list(REMOVE_DUPLICATES files)
    list(JOIN files "\n  " text)
    message(FATAL_ERROR "format_check: not formatted as .clang-format says (clang-format -i FILE):\n  ${text}")
endif()
message(STATUS "format ok: ${count} C/C++ files as .clang-format says")
