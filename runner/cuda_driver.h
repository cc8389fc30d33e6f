#pragma once
// The CUDA driver API, opened at run time with dlopen: the runner never links libcuda, so it
// starts on a machine without a driver and says so (device_status "no-device").
//
// Entry points are looked up by their base names through cuGetProcAddress for the CUDA version
// these headers describe (13.0), which hands back the ABI version the macros in cuda.h name
// (cuMemAlloc → cuMemAlloc_v2, cuEventElapsedTime → cuEventElapsedTime_v2, ...). The member
// names below go through the same macros, so a call site reads like plain driver code.
#include <cuda.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

namespace kl::runner {

// Every driver function the runner calls. cuCtxCreate is absent on purpose (v4 in CUDA 13): the
// runner uses the device's primary context. So is cuCtxSynchronize: asked for by CUDA 13.0's version,
// cuGetProcAddress hands back cuCtxSynchronize_v2(CUcontext), while cuda.h declares the v1 (void)
// signature, and a call without the context failed with CUDA_ERROR_CONTEXT_IS_DESTROYED on the H200.
#define KL_CUDA_DRIVER_FUNCTIONS(X)                                                                                    \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuGetErrorName)                                                                                                  \
    X(cuGetErrorString)                                                                                                \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetUuid)                                                                                                 \
    X(cuDeviceTotalMem)                                                                                                \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease)                                                                                       \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetFunction)                                                                                             \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuLaunchKernel)                                                                                                  \
    X(cuMemAlloc)                                                                                                      \
    X(cuMemFree)                                                                                                       \
    X(cuMemGetInfo)                                                                                                    \
    X(cuMemAllocHost)                                                                                                  \
    X(cuMemFreeHost)                                                                                                   \
    X(cuMemcpyHtoD)                                                                                                    \
    X(cuMemcpyHtoDAsync)                                                                                               \
    X(cuMemcpyDtoH)                                                                                                    \
    X(cuMemcpyDtoHAsync)                                                                                               \
    X(cuMemcpyDtoDAsync)                                                                                               \
    X(cuMemsetD8Async)                                                                                                 \
    X(cuMemsetD32Async)                                                                                                \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamDestroy)                                                                                                 \
    X(cuStreamSynchronize)                                                                                             \
    X(cuStreamQuery)                                                                                                   \
    X(cuEventCreate)                                                                                                   \
    X(cuEventDestroy)                                                                                                  \
    X(cuEventRecord)                                                                                                   \
    X(cuEventQuery)                                                                                                    \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventElapsedTime)                                                                                              \
    X(cuStreamBeginCapture)                                                                                            \
    X(cuStreamEndCapture)                                                                                              \
    X(cuGraphInstantiateWithFlags)                                                                                     \
    X(cuGraphLaunch)                                                                                                   \
    X(cuGraphExecDestroy)                                                                                              \
    X(cuGraphDestroy)

// Entry points a driver may lack (newer than the oldest driver we run on): null when absent, and
// the runner skips what they are for. cuFuncGetParamInfo: CUDA 12.4.
// cuIpcGetMemHandle: absent from a driver without IPC support; the PyTorch worker then gets host copies.
#define KL_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) X(cuFuncGetParamInfo) X(cuIpcGetMemHandle)

struct CudaDriver {
#define KL_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
    KL_CUDA_DRIVER_FUNCTIONS(KL_CUDA_DRIVER_MEMBER)
    KL_CUDA_DRIVER_OPTIONAL_FUNCTIONS(KL_CUDA_DRIVER_MEMBER)
#undef KL_CUDA_DRIVER_MEMBER

    // Opens the driver library (`path`, default libcuda.so.1) and resolves every entry point.
    // Returns null and sets `whyNot` to the loader's or driver's own words when that fails.
    static std::unique_ptr<CudaDriver> load(std::string& whyNot, const std::string& path = {});
    ~CudaDriver();
    CudaDriver(const CudaDriver&) = delete;
    CudaDriver& operator=(const CudaDriver&) = delete;

    // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
    std::string describe(CUresult result) const;

    // Set when a kernel is left running past the wall-clock guard. Freeing memory, unloading a
    // module or destroying a stream would wait for that kernel, so the runner's releases become
    // no-ops from then on: it answers at once and exits, and the client starts a fresh runner.
    void abandonContext() const { m_abandoned.store(true); }
    bool contextAbandoned() const { return m_abandoned.load(); }

private:
    CudaDriver() = default;
    void* m_library = nullptr;
    mutable std::atomic<bool> m_abandoned { false };
};

// A failed driver call: which call, the code, and the driver's own words.
class CudaError : public std::runtime_error {
public:
    CudaError(CUresult result, std::string call, const std::string& description);
    CUresult result() const { return m_result; }
    const std::string& call() const { return m_call; }
    // True when the context is unusable afterwards (illegal address, trap, ...): the runner
    // answers and exits so that the client starts a fresh one.
    bool contextLost() const;

private:
    CUresult m_result;
    std::string m_call;
};

bool isContextLost(CUresult result);

// Throws CudaError unless `result` is CUDA_SUCCESS.
void check(const CudaDriver& driver, CUresult result, const char* call);

} // namespace kl::runner

// Calls driver function `fn` of `driver` with the arguments and throws a CudaError naming it.
#define KL_CU(driver, fn, ...) ::kl::runner::check((driver), (driver).fn(__VA_ARGS__), #fn)
