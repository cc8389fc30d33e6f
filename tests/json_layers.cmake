# Fails when a reader layer includes nlohmann/json.hpp or uses nlohmann:: (a JSON value reached through
# another header is reading JSON too). JSON lives in core/protocol (the wire) and
# core/store (the columns; the stored text stays as it is); the GUI (widgets/, app/), the figures and
# the report read the typed values those decode (issue 26). Run by the build (target json_layers_check)
# and by ctest (json_layers): cmake -DSOURCE_DIR=<checkout> -P tests/json_layers.cmake
cmake_minimum_required(VERSION 3.16)
set(guarded widgets app core/figures core/report)
set(offenders "")
foreach(dir IN LISTS guarded)
    file(GLOB_RECURSE files LIST_DIRECTORIES false "${SOURCE_DIR}/${dir}/*.h" "${SOURCE_DIR}/${dir}/*.cpp")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" hits
             REGEX "(^[ \t]*#[ \t]*include[ \t]*[<\"]nlohmann/)|nlohmann::|\\.is_(object|array|number|string|null|boolean)")
        if(hits)
            file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
            list(APPEND offenders "${relative}")
        endif()
    endforeach()
endforeach()
if(offenders)
    list(JOIN offenders "\n  " text)
    message(FATAL_ERROR "JSON (nlohmann/json.hpp, nlohmann::) where readers read typed values (widgets/, app/, "
                        "core/figures/, core/report/):\n  ${text}\nDecode in core/store or core/protocol and read fields.")
endif()
message(STATUS "json layers ok: no JSON in ${guarded}")
