#include "runner/program.h"

#include "core/verify/element.h"
#include "runner/job_failure.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kl::runner {

using protocol::Category;

LoadedModule::LoadedModule(const Device& device, const std::string& cubin, const std::string& role)
    : m_device(device)
    , m_role(role)
{
    const CUresult result = device.driver().cuModuleLoadData(&m_module, cubin.data());
    if (result != CUDA_SUCCESS) {
        if (isContextLost(result))
            throw JobFailure(categoryOf(result), role + " module: " + device.driver().describe(result), true);
        throw JobFailure(result == CUDA_ERROR_OUT_OF_MEMORY ? Category::OutOfMemory : Category::LaunchError,
            "the " + role + " module does not load on " + device.arch() + ": " + device.driver().describe(result));
    }
}

LoadedModule::~LoadedModule()
{
    if (m_module && !m_device.driver().contextAbandoned())
        m_device.driver().cuModuleUnload(m_module);
}

CUfunction LoadedModule::function(const std::string& loweredName)
{
    if (const auto it = m_functions.find(loweredName); it != m_functions.end())
        return it->second;
    CUfunction function = nullptr;
    const CUresult result = m_device.driver().cuModuleGetFunction(&function, m_module, loweredName.c_str());
    if (result != CUDA_SUCCESS)
        throw JobFailure(
            Category::MissingKernel, "the " + m_role + " module has no kernel named \"" + loweredName + "\"");
    m_functions.emplace(loweredName, function);
    return function;
}

namespace {
std::uint64_t packScalar(const protocol::ScalarArg& arg)
{
    std::uint64_t slot = 0;
    const double real = std::holds_alternative<double>(arg.value)
        ? std::get<double>(arg.value)
        : static_cast<double>(std::get<std::int64_t>(arg.value));
    const std::int64_t whole = std::holds_alternative<std::int64_t>(arg.value) ? std::get<std::int64_t>(arg.value)
                                                                               : static_cast<std::int64_t>(real);
    auto put = [&slot](const auto value) { std::memcpy(&slot, &value, sizeof value); };
    switch (arg.type) {
    case DType::F16:
        put(verify::doubleToHalf(real));
        break;
    case DType::BF16:
        put(verify::doubleToBfloat16(real));
        break;
    case DType::F32:
        put(static_cast<float>(real));
        break;
    case DType::F64:
        put(real);
        break;
    case DType::I8:
        put(static_cast<std::int8_t>(whole));
        break;
    case DType::U8:
        put(static_cast<std::uint8_t>(whole));
        break;
    case DType::I32:
        put(static_cast<std::int32_t>(whole));
        break;
    case DType::I64:
        put(whole);
        break;
    }
    return slot;
}

std::size_t argBytes(const protocol::Arg& arg)
{
    if (std::holds_alternative<protocol::BufferArg>(arg))
        return sizeof(CUdeviceptr);
    return dtypeSize(std::get<protocol::ScalarArg>(arg).type);
}

std::string sizesText(const std::vector<std::size_t>& sizes)
{
    std::string text;
    for (const auto size : sizes)
        text += (text.empty() ? "" : ", ") + std::to_string(size) + " B";
    return "[" + text + "]";
}

// The kernel's own parameter sizes against the launch's arguments: a missing argument makes the
// driver read past our slots and crashed the runner. Skipped where the driver lacks the query.
void checkParameters(const CudaDriver& cu, CUfunction function, const protocol::Launch& launch, const std::string& what)
{
    if (!cu.cuFuncGetParamInfo)
        return;
    constexpr std::size_t kMostParameters = 4096; // 32 KiB of parameters hold no more
    std::vector<std::size_t> kernel;
    for (std::size_t index = 0; index < kMostParameters; ++index) {
        std::size_t offset = 0, size = 0;
        const CUresult result = cu.cuFuncGetParamInfo(function, index, &offset, &size);
        if (result == CUDA_ERROR_INVALID_VALUE)
            break; // past the last parameter
        if (result != CUDA_SUCCESS)
            return; // the driver cannot say: launch as before
        kernel.push_back(size);
    }
    std::vector<std::size_t> given;
    for (const protocol::Arg& arg : launch.args)
        given.push_back(argBytes(arg));
    if (kernel != given)
        throw JobFailure(Category::LaunchError,
            what + ": the launch passes " + std::to_string(given.size()) + " arguments " + sizesText(given)
                + " but the kernel takes " + std::to_string(kernel.size()) + " parameters " + sizesText(kernel)
                + " (plan.args-mismatch)");
}

int functionAttribute(const CudaDriver& cu, CUfunction function, CUfunction_attribute attribute)
{
    int value = 0;
    KL_CU(cu, cuFuncGetAttribute, &value, attribute, function);
    return value;
}
} // namespace

ProgramRunner::ProgramRunner(
    const Device& device, LoadedModule& module, const protocol::Program& program, const BufferMap& buffers)
    : m_device(device)
    , m_role(module.role())
{
    const CudaDriver& cu = device.driver();
    const int maxGrid[3] = { device.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
        device.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y), device.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) };
    const int maxBlock[3] = { device.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
        device.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y), device.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z) };
    const int sharedOptin = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    const int sharedDefault = device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);

    for (const protocol::Scratch& scratch : program.scratch) {
        if (scratch.zeroed) {
            const auto it = buffers.find(scratch.name);
            if (it != buffers.end())
                m_zeroed.push_back(
                    { it->second, static_cast<std::size_t>(scratch.elements) * dtypeSize(scratch.dtype) });
        }
    }

    for (std::size_t index = 0; index < program.launches.size(); ++index) {
        const protocol::Launch& launch = program.launches[index];
        const std::string what = m_role + " launch " + std::to_string(index + 1) + " (" + launch.kernel + ")";
        PreparedLaunch prepared;
        prepared.kernel = launch.kernel;
        prepared.function = module.function(launch.kernel);
        checkParameters(cu, prepared.function, launch, what);
        std::int64_t threads = 1;
        for (int d = 0; d < 3; ++d) {
            if (launch.grid[d] < 1 || launch.grid[d] > maxGrid[d] || launch.block[d] < 1
                || launch.block[d] > maxBlock[d])
                throw JobFailure(Category::LaunchError,
                    what + ": grid (" + std::to_string(launch.grid[0]) + ", " + std::to_string(launch.grid[1]) + ", "
                        + std::to_string(launch.grid[2]) + ") or block (" + std::to_string(launch.block[0]) + ", "
                        + std::to_string(launch.block[1]) + ", " + std::to_string(launch.block[2])
                        + ") is outside the device's limits");
            prepared.grid[d] = static_cast<unsigned>(launch.grid[d]);
            prepared.block[d] = static_cast<unsigned>(launch.block[d]);
            threads *= launch.block[d];
        }
        try {
            const int maxThreads = functionAttribute(cu, prepared.function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
            const int registers = functionAttribute(cu, prepared.function, CU_FUNC_ATTRIBUTE_NUM_REGS);
            const int staticShared = functionAttribute(cu, prepared.function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
            if (threads > maxThreads)
                throw JobFailure(Category::TooManyResources,
                    what + ": " + std::to_string(threads) + " threads per block, but with " + std::to_string(registers)
                        + " registers per thread the kernel runs at most " + std::to_string(maxThreads));
            if (launch.sharedBytes < 0 || staticShared + launch.sharedBytes > sharedOptin)
                throw JobFailure(Category::TooManyResources,
                    what + ": " + std::to_string(launch.sharedBytes) + " bytes of dynamic shared memory + "
                        + std::to_string(staticShared) + " static exceed the device's " + std::to_string(sharedOptin)
                        + " bytes per block");
            if (staticShared + launch.sharedBytes > sharedDefault || launch.sharedBytes > 0)
                KL_CU(cu, cuFuncSetAttribute, prepared.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    static_cast<int>(launch.sharedBytes));
        } catch (const CudaError& error) {
            throw failureFrom(error, what);
        }
        prepared.sharedBytes = static_cast<unsigned>(launch.sharedBytes);

        for (const protocol::Arg& arg : launch.args) {
            if (const auto* buffer = std::get_if<protocol::BufferArg>(&arg)) {
                const auto it = buffers.find(buffer->name);
                if (it == buffers.end())
                    throw JobFailure(
                        Category::BadRequest, what + ": argument names no buffer \"" + buffer->name + "\"");
                prepared.storage.push_back(it->second);
            } else {
                prepared.storage.push_back(packScalar(std::get<protocol::ScalarArg>(arg)));
            }
        }
        m_kernelNames.push_back(launch.kernel);
        m_launches.push_back(std::move(prepared));
    }
    // Pointers into storage are taken only once every vector has its final address.
    for (PreparedLaunch& launch : m_launches) {
        launch.pointers.clear();
        for (std::uint64_t& slot : launch.storage)
            launch.pointers.push_back(&slot);
    }
}

void ProgramRunner::enqueue() const
{
    const CudaDriver& cu = m_device.driver();
    for (const ZeroedScratch& scratch : m_zeroed) {
        try {
            KL_CU(cu, cuMemsetD8Async, scratch.pointer, 0, scratch.bytes, m_device.stream());
        } catch (const CudaError& error) {
            throw failureFrom(error, m_role + " scratch");
        }
    }
    for (std::size_t index = 0; index < m_launches.size(); ++index) {
        const PreparedLaunch& launch = m_launches[index];
        const CUresult result = cu.cuLaunchKernel(launch.function, launch.grid[0], launch.grid[1], launch.grid[2],
            launch.block[0], launch.block[1], launch.block[2], launch.sharedBytes, m_device.stream(),
            launch.pointers.data(), nullptr);
        if (result != CUDA_SUCCESS)
            throw failureFrom(CudaError(result, "cuLaunchKernel", cu.describe(result)),
                m_role + " launch " + std::to_string(index + 1) + " (" + launch.kernel + ")");
    }
}

} // namespace kl::runner
