# CUDA toolkit pieces found without enabling the CUDA language: the core only needs NVRTC and the
# header-only occupancy calculator; the runner needs CUPTI. libcuda is never linked: the runner
# opens it with dlopen so that everything starts on a machine without a GPU or driver.
find_path(KL_CUDA_INCLUDE_DIR nvrtc.h PATHS ${KL_CUDA_ROOT}/include REQUIRED NO_DEFAULT_PATH)
find_library(KL_NVRTC_LIBRARY nvrtc PATHS ${KL_CUDA_ROOT}/lib64 REQUIRED NO_DEFAULT_PATH)

add_library(kl_cuda_headers INTERFACE)
target_include_directories(kl_cuda_headers SYSTEM INTERFACE ${KL_CUDA_INCLUDE_DIR})

add_library(kl_nvrtc INTERFACE)
target_link_libraries(kl_nvrtc INTERFACE ${KL_NVRTC_LIBRARY} kl_cuda_headers)

if(KL_WITH_CUPTI)
    find_path(KL_CUPTI_INCLUDE_DIR cupti_range_profiler.h
              PATHS ${KL_CUDA_ROOT}/include ${KL_CUDA_ROOT}/extras/CUPTI/include NO_DEFAULT_PATH)
    find_library(KL_CUPTI_LIBRARY cupti PATHS ${KL_CUDA_ROOT}/lib64 ${KL_CUDA_ROOT}/extras/CUPTI/lib64
                 NO_DEFAULT_PATH)
    find_library(KL_NVPERF_HOST_LIBRARY nvperf_host PATHS ${KL_CUDA_ROOT}/lib64
                 ${KL_CUDA_ROOT}/extras/CUPTI/lib64 NO_DEFAULT_PATH)
    if(NOT KL_CUPTI_INCLUDE_DIR OR NOT KL_CUPTI_LIBRARY)
        message(WARNING "CUPTI not found under ${KL_CUDA_ROOT}: the runner is built without counters")
        set(KL_WITH_CUPTI OFF CACHE BOOL "" FORCE)
    else()
        add_library(kl_cupti INTERFACE)
        target_include_directories(kl_cupti SYSTEM INTERFACE ${KL_CUPTI_INCLUDE_DIR})
        target_link_libraries(kl_cupti INTERFACE ${KL_CUPTI_LIBRARY} kl_cuda_headers)
        target_compile_definitions(kl_cupti INTERFACE KL_WITH_CUPTI=1)
    endif()
endif()
