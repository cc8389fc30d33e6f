#include "runner/job_failure.h"

namespace kl::runner {

protocol::Category categoryOf(CUresult result)
{
    using protocol::Category;
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        return Category::IllegalAddress;
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
        return Category::Trap;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
        return Category::Timeout;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return Category::TooManyResources;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return Category::OutOfMemory;
    case CUDA_ERROR_NOT_FOUND:
        return Category::MissingKernel;
    default:
        return Category::LaunchError;
    }
}

JobFailure failureFrom(const CudaError& error, const std::string& what)
{
    return JobFailure(categoryOf(error.result()), what + ": " + error.what(), error.contextLost());
}

} // namespace kl::runner
