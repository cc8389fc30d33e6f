#include "runner/cuda_driver.h"

#include <dlfcn.h>

namespace kl::runner {

namespace {
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
}

std::unique_ptr<CudaDriver> CudaDriver::load(std::string& whyNot, const std::string& path)
{
    const std::string library = path.empty() ? std::string("libcuda.so.1") : path;
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* error = dlerror();
        whyNot = error ? error : library + ": cannot be opened";
        return nullptr;
    }
    std::unique_ptr<CudaDriver> driver(new CudaDriver);
    driver->m_library = handle;
    auto getProcAddress = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
    if (!getProcAddress) {
        whyNot = library + " has no cuGetProcAddress_v2: the driver is older than CUDA 12.5";
        return nullptr;
    }
    bool complete = true;
#define KL_CUDA_DRIVER_RESOLVE(name)                                                                                   \
    {                                                                                                                  \
        void* function = nullptr;                                                                                      \
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                                   \
        if (getProcAddress(#name, &function, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS        \
            || !function) {                                                                                            \
            if (complete)                                                                                              \
                whyNot = std::string("the driver does not provide ") + #name + " for CUDA "                            \
                    + std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);            \
            complete = false;                                                                                          \
        } else {                                                                                                       \
            driver->name = reinterpret_cast<decltype(driver->name)>(function);                                         \
        }                                                                                                              \
    }
    KL_CUDA_DRIVER_FUNCTIONS(KL_CUDA_DRIVER_RESOLVE)
#undef KL_CUDA_DRIVER_RESOLVE
    if (!complete)
        return nullptr;
#define KL_CUDA_DRIVER_RESOLVE_OPTIONAL(name)                                                                          \
    {                                                                                                                  \
        void* function = nullptr;                                                                                      \
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                                   \
        if (getProcAddress(#name, &function, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS        \
            && function)                                                                                               \
            driver->name = reinterpret_cast<decltype(driver->name)>(function);                                         \
    }
    KL_CUDA_DRIVER_OPTIONAL_FUNCTIONS(KL_CUDA_DRIVER_RESOLVE_OPTIONAL)
#undef KL_CUDA_DRIVER_RESOLVE_OPTIONAL
    return driver;
}

CudaDriver::~CudaDriver()
{
    // The library stays loaded: CUPTI and the driver's own threads may still reference it at exit.
}

std::string CudaDriver::describe(CUresult result) const
{
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName)
        cuGetErrorName(result, &name);
    if (cuGetErrorString)
        cuGetErrorString(result, &text);
    std::string out = name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
    if (text)
        out += std::string(": ") + text;
    return out;
}

CudaError::CudaError(CUresult result, std::string call, const std::string& description)
    : std::runtime_error(call + " failed: " + description)
    , m_result(result)
    , m_call(std::move(call))
{
}

bool isContextLost(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
        return true;
    default:
        return false;
    }
}

bool CudaError::contextLost() const { return isContextLost(m_result); }

void check(const CudaDriver& driver, CUresult result, const char* call)
{
    if (result != CUDA_SUCCESS)
        throw CudaError(result, call, driver.describe(result));
}

} // namespace kl::runner
