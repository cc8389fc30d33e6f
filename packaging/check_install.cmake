# Installs the GUI and data components into a scratch prefix and checks the files a desktop needs.
file(REMOVE_RECURSE ${PREFIX})
set(out "")
foreach(component gui data)
    execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component ${component}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE step ERROR_VARIABLE step)
    string(APPEND out "${step}")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "cmake --install --component ${component} failed:\n${out}")
    endif()
endforeach()
foreach(file bin/kernelloop share/applications/${APP_ID}.desktop share/metainfo/${APP_ID}.metainfo.xml
             share/icons/hicolor/scalable/apps/${APP_ID}.svg share/icons/hicolor/256x256/apps/${APP_ID}.png
             share/kernelloop/examples/layernorm_gelu/problem.json share/kernelloop/python/kernelloop/triton_aot.py
             share/kernelloop/sessions/layernorm_gelu-h200.klsession)
    if(NOT EXISTS ${PREFIX}/${file})
        message(FATAL_ERROR "missing after install: ${file}\n${out}")
    endif()
endforeach()
message(STATUS "install layout under ${PREFIX} is complete")
