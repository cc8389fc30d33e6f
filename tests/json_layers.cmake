# Fails when a reader layer includes nlohmann/json.hpp or uses nlohmann:: (a JSON value reached through
# another header is reading JSON too). JSON lives in core/protocol (the wire) and
# core/store (the columns; the stored text stays as it is); the GUI (widgets/, app/), the figures and
# the review read the typed values those decode (issue 26). Run by the build (target json_layers_check)
# and by ctest (json_layers): cmake -DSOURCE_DIR=<checkout> -P tests/json_layers.cmake
cmake_minimum_required(VERSION 3.16)
set(guarded widgets app core/figures core/review)
# Readers not yet on typed values, each named with what it still reads as JSON (through the store's
# records). An entry here that no longer uses JSON fails too, so that the list only shrinks.
set(pending
    widgets/iteration_reports.cpp # the verification and timing columns (the Verification page)
    widgets/session_list_model.cpp # the session's config and summary columns
    widgets/transcript_panel.cpp # the LLM exchanges' request and response
)
set(offenders "")
set(found_pending "")
foreach(dir IN LISTS guarded)
    file(GLOB_RECURSE files LIST_DIRECTORIES false "${SOURCE_DIR}/${dir}/*.h" "${SOURCE_DIR}/${dir}/*.cpp")
    foreach(file IN LISTS files)
        file(STRINGS "${file}" hits
             REGEX "(^[ \t]*#[ \t]*include[ \t]*[<\"]nlohmann/)|nlohmann::|\\.is_(object|array|number|string|null|boolean)")
        if(hits)
            file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
            if(relative IN_LIST pending)
                list(APPEND found_pending "${relative}")
            else()
                list(APPEND offenders "${relative}")
            endif()
        endif()
    endforeach()
endforeach()
if(offenders)
    list(JOIN offenders "\n  " text)
    message(FATAL_ERROR "JSON (nlohmann/json.hpp, nlohmann::) where readers read typed values (widgets/, app/, "
                        "core/figures/, core/review/):\n  ${text}\nDecode in core/store or core/protocol and read fields.")
endif()
foreach(file IN LISTS pending)
    if(NOT file IN_LIST found_pending)
        message(FATAL_ERROR "${file} no longer uses JSON: take it off the pending list in "
                            "tests/json_layers.cmake")
    endif()
endforeach()
list(LENGTH pending left)
message(STATUS "json layers ok: no JSON in ${guarded} beyond the ${left} pending readers")
