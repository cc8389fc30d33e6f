# Header-only libraries Debian ships without CMake packages.
find_path(KL_DTL_INCLUDE_DIR dtl/dtl.hpp REQUIRED)
add_library(kl_dtl INTERFACE)
target_include_directories(kl_dtl SYSTEM INTERFACE ${KL_DTL_INCLUDE_DIR})

find_path(KL_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
add_library(kl_httplib INTERFACE)
target_include_directories(kl_httplib SYSTEM INTERFACE ${KL_HTTPLIB_INCLUDE_DIR})
