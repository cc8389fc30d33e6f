# Runs `kernelloop PROBLEM --screenshot OUT [ARGS...]` and checks that it quit by itself with 0 and
# left a PNG of plausible size. PROBLEM may be a store or a .klsession; ARGS (a ;-list) picks the
# review state (--iteration, --inspector, --chart).
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
message(STATUS "screenshot ${OUT}: ${size} bytes")
