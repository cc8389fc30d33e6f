# Header-only libraries Debian ships without CMake packages.
find_path(KL_DTL_INCLUDE_DIR dtl/dtl.hpp REQUIRED)
add_library(kl_dtl INTERFACE)
target_include_directories(kl_dtl SYSTEM INTERFACE ${KL_DTL_INCLUDE_DIR})

find_path(KL_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
add_library(kl_httplib INTERFACE)
target_include_directories(kl_httplib SYSTEM INTERFACE ${KL_HTTPLIB_INCLUDE_DIR})
# Debian ships cpp-httplib split into a header and libcpp-httplib.so (built with OpenSSL, zlib and
# brotli): link the library, and compile with the same feature macros so the classes match it.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
    pkg_check_modules(KL_CPP_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
if(KL_CPP_HTTPLIB_FOUND)
    target_link_libraries(kl_httplib INTERFACE PkgConfig::KL_CPP_HTTPLIB)
endif()
