# Runs `kernelloop FILE --screenshot OUT ARGS...` with an option value the window has no place for (a
# tab name no bar has, an iteration the session lacks) and checks that it is refused: a non-zero exit,
# no screenshot, and EXPECT (a regular expression: the message, naming the valid values) on stderr.
file(REMOVE ${OUT})
execute_process(COMMAND ${APP} ${FILE} --screenshot ${OUT} ${ARGS} RESULT_VARIABLE rc TIMEOUT 110
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
    message(FATAL_ERROR "kernelloop ${ARGS} exited with 0: the value was not refused\n${out}\n${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
    message(FATAL_ERROR "kernelloop ${ARGS} exited with ${rc} but its message is not the refusal\n"
                        "expected: ${EXPECT}\nstderr:\n${err}")
endif()
if(EXISTS ${OUT})
    message(FATAL_ERROR "kernelloop ${ARGS} refused, yet left a screenshot at ${OUT}")
endif()
string(REGEX MATCH "kernelloop: [^\n]*" said "${err}")
message(STATUS "refused with ${rc}: ${said}")
