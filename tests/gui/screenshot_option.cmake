# Runs `kernelloop PROBLEM --screenshot OUT [ARGS...]` and checks that it quit by itself with 0, left a
# PNG of plausible size and shows what it was asked for. PROBLEM may be a problem file, a store or a
# .klsession; ARGS (a ;-list) picks the review state (--iteration, --inspector, --chart, --history).
# The app says on stdout what the picture shows (app/main.cpp, app/review_state.h):
#   shown workspace: Review
#   shown iteration: 6
#   shown inspector: Metrics
#   shown inspector content: 2140 characters, 31 rows, 0 series, 0 points: "..."
#   shown chart: Latency ...
#   shown history current row: 6 | tuner | passed | 40.22
# Each option of ARGS is compared with that: the iteration selected and the history's row of it, the
# tab shown (whose label the name asked for starts, or one of its words does), and every shown tab
# showing something (text, rows or chart points). A problem file: the editor with the problem analysed.
cmake_policy(VERSION 3.25) # if(IN_LIST), as the project
file(REMOVE ${OUT})
execute_process(COMMAND ${APP} ${PROBLEM} --screenshot ${OUT} ${ARGS} RESULT_VARIABLE rc TIMEOUT 110
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kernelloop --screenshot exited with ${rc}\n${out}\n${err}")
endif()
if(NOT EXISTS ${OUT})
    message(FATAL_ERROR "no screenshot at ${OUT}")
endif()
file(READ ${OUT} header LIMIT 8 HEX)
if(NOT header STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${OUT} is not a PNG (starts with ${header})")
endif()
file(SIZE ${OUT} size)
if(size LESS 20000)
    message(FATAL_ERROR "${OUT} is only ${size} bytes: an empty window?")
endif()

# The value of a "shown WHAT: value" line, in VAR; fails when the app did not say.
function(shown what var)
    if(NOT "\n${out}" MATCHES "\nshown ${what}: ([^\n]*)")
        message(FATAL_ERROR "kernelloop did not say which ${what} the screenshot shows\n${out}\n${err}")
    endif()
    set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# A tab shown: the one NAME asked for, and with something on it (text, rows or chart points).
function(check_tab what name)
    shown(${what} label)
    string(TOLOWER "${label}" lower)
    string(TOLOWER "${name}" wanted)
    string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" wanted "${wanted}")
    if(NOT " ${lower}" MATCHES " ${wanted}")
        message(FATAL_ERROR "--${what} ${name} asked for, the screenshot shows the ${what} tab \"${label}\"\n${out}")
    endif()
    shown("${what} content" content)
    if(NOT content MATCHES "^([0-9]+) characters, ([0-9]+) rows, [0-9]+ series, ([0-9]+) points")
        message(FATAL_ERROR "the ${what} content is not described: \"${content}\"")
    endif()
    math(EXPR amount "${CMAKE_MATCH_1} + ${CMAKE_MATCH_2} + ${CMAKE_MATCH_3}")
    if(amount EQUAL 0)
        message(FATAL_ERROR "the ${what} tab \"${label}\" shows nothing: ${content}")
    endif()
    message(STATUS "${what} \"${label}\": ${content}")
endfunction()

shown(workspace workspace)
set(review_options --iteration --inspector --chart --history)
list(LENGTH ARGS count)
set(i 0)
while(i LESS count)
    list(GET ARGS ${i} option)
    math(EXPR next "${i} + 1")
    if(option IN_LIST review_options)
        if(next GREATER_EQUAL count)
            message(FATAL_ERROR "${option} without a value in ARGS")
        endif()
        list(GET ARGS ${next} value)
        string(SUBSTRING ${option} 2 -1 what)
        if(what STREQUAL "iteration")
            shown(iteration iteration)
            if(NOT iteration STREQUAL value)
                message(FATAL_ERROR "--iteration ${value} asked for, the screenshot shows iteration ${iteration}\n${out}")
            endif()
            # ... and the history marks its row (its first column is the iteration).
            shown("history current row" row)
            if(NOT row MATCHES "^${value} [|]")
                message(FATAL_ERROR "--iteration ${value} asked for, the history marks the row \"${row}\"\n${out}")
            endif()
            message(STATUS "iteration ${iteration}, the history's row \"${row}\"")
        else()
            check_tab(${what} ${value})
        endif()
        math(EXPR next "${next} + 1")
    endif()
    set(i ${next})
endwhile()

if(PROBLEM MATCHES "\\.json$")
    if(NOT workspace STREQUAL "Editor")
        message(FATAL_ERROR "a problem file opened, the screenshot shows the ${workspace} workspace\n${out}")
    endif()
    shown(problem problem)
    shown(status status)
    if(problem STREQUAL "" OR status STREQUAL "")
        message(FATAL_ERROR "the screenshot shows no problem or no analysis (problem \"${problem}\", status \"${status}\")")
    endif()
else()
    if(NOT workspace STREQUAL "Review")
        message(FATAL_ERROR "a store opened, the screenshot shows the ${workspace} workspace\n${out}")
    endif()
    # Tabs left as they open are shown with something on them too.
    foreach(what inspector chart history)
        if(NOT "${ARGS}" MATCHES "--${what}")
            shown(${what} label)
            check_tab(${what} "${label}")
        endif()
    endforeach()
endif()
message(STATUS "screenshot ${OUT}: ${size} bytes, the ${workspace} workspace")
