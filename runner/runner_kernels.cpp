#include "runner/runner_kernels.h"

#include "runner/runner_kernels_source.h"

#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kl::runner {

namespace {
void checkNvrtc(nvrtcResult result, const char* call)
{
    if (result != NVRTC_SUCCESS)
        throw std::runtime_error(std::string(call) + ": " + nvrtcGetErrorString(result));
}

std::string compileCubin(const std::string& arch)
{
    nvrtcProgram program = nullptr;
    checkNvrtc(nvrtcCreateProgram(&program, kRunnerKernelSource, "kernelloop_runner_kernels.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
    const std::string archOption = "--gpu-architecture=" + arch;
    const char* options[] = { archOption.c_str(), "-default-device" };
    const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
    if (compiled != NVRTC_SUCCESS) {
        size_t logSize = 0;
        nvrtcGetProgramLogSize(program, &logSize);
        std::string log(logSize, '\0');
        nvrtcGetProgramLog(program, log.data());
        nvrtcDestroyProgram(&program);
        throw std::runtime_error("the runner's own kernels do not compile for " + arch + ":\n" + log);
    }
    size_t size = 0;
    checkNvrtc(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    std::string cubin(size, '\0');
    checkNvrtc(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
    nvrtcDestroyProgram(&program);
    return cubin;
}

int distributionKind(Distribution::Kind kind)
{
    switch (kind) {
    case Distribution::Kind::Normal:
        return 0;
    case Distribution::Kind::Uniform:
        return 1;
    case Distribution::Kind::Constant:
        return 2;
    case Distribution::Kind::Integers:
        return 3;
    }
    return 0;
}

std::uint64_t mix(std::uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace

RunnerKernels::RunnerKernels(const Device& device)
    : m_device(device)
{
    const auto started = std::chrono::steady_clock::now();
    const std::string cubin = compileCubin(device.arch());
    m_compileMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    const CudaDriver& cu = device.driver();
    m_maxBlocks = 16 * std::int64_t { device.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) };
    KL_CU(cu, cuModuleLoadData, &m_module, cubin.data());
    const std::pair<DType, const char*> generators[] = {
        { DType::F16, "kl_generate_f16" },
        { DType::BF16, "kl_generate_bf16" },
        { DType::F32, "kl_generate_f32" },
        { DType::F64, "kl_generate_f64" },
        { DType::I8, "kl_generate_i8" },
        { DType::U8, "kl_generate_u8" },
        { DType::I32, "kl_generate_i32" },
        { DType::I64, "kl_generate_i64" },
    };
    for (const auto& [type, name] : generators)
        KL_CU(cu, cuModuleGetFunction, &m_generate[type], m_module, name);
    for (const auto& [type, name] : generators) {
        const std::string compareName = std::string("kl_compare_") + (name + std::strlen("kl_generate_"));
        KL_CU(cu, cuModuleGetFunction, &m_compare[type], m_module, compareName.c_str());
        const std::string worstName = std::string("kl_worst_") + (name + std::strlen("kl_generate_"));
        KL_CU(cu, cuModuleGetFunction, &m_worst[type], m_module, worstName.c_str());
    }
    KL_CU(cu, cuModuleGetFunction, &m_countOther, m_module, "kl_count_other");
    KL_CU(cu, cuModuleGetFunction, &m_countOtherInGaps, m_module, "kl_count_other_in_gaps");
    m_results = DeviceBuffer(cu, 8 * sizeof(std::uint64_t));
    KL_CU(cu, cuModuleGetFunction, &m_fill, m_module, "kl_fill");
    KL_CU(cu, cuModuleGetFunction, &m_fillGaps, m_module, "kl_fill_gaps");
    KL_CU(cu, cuModuleGetFunction, &m_checksum, m_module, "kl_checksum");
    KL_CU(cu, cuModuleGetFunction, &m_mmaPeak, m_module, "kl_mma_peak");
    m_checksumSlot = DeviceBuffer(cu, sizeof(std::uint64_t));
    m_touchSlot = DeviceBuffer(cu, sizeof(std::uint64_t));
}

RunnerKernels::~RunnerKernels()
{
    m_checksumSlot = DeviceBuffer();
    m_touchSlot = DeviceBuffer();
    m_results = DeviceBuffer();
    if (m_module && !m_device.driver().contextAbandoned())
        m_device.driver().cuModuleUnload(m_module);
}

void RunnerKernels::launch(CUfunction function, std::int64_t work, void** args) const
{
    constexpr std::int64_t kThreads = 256;
    const std::int64_t blocks = std::clamp<std::int64_t>((work + kThreads - 1) / kThreads, 1, m_maxBlocks);
    KL_CU(m_device.driver(), cuLaunchKernel, function, static_cast<unsigned>(blocks), 1, 1,
        static_cast<unsigned>(kThreads), 1, 1, 0, m_device.stream(), args, nullptr);
}

void RunnerKernels::generate(
    CUdeviceptr data, const verify::TensorLayout& layout, const Distribution& distribution, std::uint64_t key) const
{
    if (layout.dataElements() == 0)
        return;
    std::int64_t rows = layout.rows, length = layout.rowLength, stride = layout.rowStride;
    int kind = distributionKind(distribution.kind);
    double a = distribution.a, b = distribution.b;
    void* args[] = { &data, &rows, &length, &stride, &key, &kind, &a, &b };
    launch(m_generate.at(layout.type), layout.dataElements(), args);
}

void RunnerKernels::fill(CUdeviceptr pointer, std::size_t bytes, std::uint64_t pattern) const
{
    if (bytes == 0)
        return;
    std::uint64_t count = bytes;
    void* args[] = { &pointer, &count, &pattern };
    launch(m_fill, static_cast<std::int64_t>(std::max<std::size_t>(bytes / 8, 8)), args);
}

void RunnerKernels::fillGaps(CUdeviceptr data, const verify::TensorLayout& layout, std::byte sentinel) const
{
    if (!layout.padded() || layout.rows == 0)
        return;
    std::int64_t rows = layout.rows;
    std::int64_t rowBytes = layout.rowLength * static_cast<std::int64_t>(layout.elementBytes());
    std::int64_t strideBytes = layout.rowStride * static_cast<std::int64_t>(layout.elementBytes());
    unsigned char value = static_cast<unsigned char>(sentinel);
    void* args[] = { &data, &rows, &rowBytes, &strideBytes, &value };
    launch(m_fillGaps, rows * (strideBytes - rowBytes), args);
}

void RunnerKernels::mmaPeak(std::int64_t blocks, int threads, int iterations) const
{
    CUdeviceptr out = m_touchSlot.pointer(); // never written: the kernel stores only an impossible sum
    void* args[] = { &out, &iterations };
    KL_CU(m_device.driver(), cuLaunchKernel, m_mmaPeak, static_cast<unsigned>(blocks), 1, 1,
        static_cast<unsigned>(threads), 1, 1, 0, m_device.stream(), args, nullptr);
}

void RunnerKernels::touch(CUdeviceptr pointer, std::size_t bytes) const
{
    std::uint64_t count = bytes;
    CUdeviceptr slot = m_touchSlot.pointer();
    void* args[] = { &pointer, &count, &slot };
    launch(m_checksum, static_cast<std::int64_t>(std::max<std::size_t>(bytes / 8, 32)), args);
}

std::uint64_t RunnerKernels::checksum(CUdeviceptr pointer, std::size_t bytes) const
{
    const CudaDriver& cu = m_device.driver();
    KL_CU(cu, cuMemsetD8Async, m_checksumSlot.pointer(), 0, sizeof(std::uint64_t), m_device.stream());
    std::uint64_t count = bytes;
    CUdeviceptr slot = m_checksumSlot.pointer();
    void* args[] = { &pointer, &count, &slot };
    launch(m_checksum, static_cast<std::int64_t>(std::max<std::size_t>(bytes / 8, 32)), args);
    std::uint64_t value = 0;
    KL_CU(cu, cuMemcpyDtoHAsync, &value, slot, sizeof value, m_device.stream());
    m_device.synchronize();
    return value;
}

verify::DeviceScan RunnerKernels::compare(
    CUdeviceptr actual, CUdeviceptr expected, const verify::TensorLayout& layout, const Tolerance& tolerance) const
{
    const CudaDriver& cu = m_device.driver();
    // Slots 0-5 start at 0 (counts, maxima), 6-7 at ~0 (lowest indices).
    KL_CU(cu, cuMemsetD8Async, m_results.pointer(), 0, 6 * sizeof(std::uint64_t), m_device.stream());
    KL_CU(cu, cuMemsetD8Async, m_results.pointer() + 6 * sizeof(std::uint64_t), 0xff, 2 * sizeof(std::uint64_t),
        m_device.stream());
    std::int64_t rows = layout.rows, length = layout.rowLength, stride = layout.rowStride;
    double atol = tolerance.atol, rtol = tolerance.rtol;
    std::uint64_t poison = verify::poisonPattern(layout.type);
    CUdeviceptr results = m_results.pointer();
    auto read = [&] {
        std::uint64_t values[8] = {};
        KL_CU(cu, cuMemcpyDtoHAsync, values, m_results.pointer(), sizeof values, m_device.stream());
        m_device.synchronize();
        return std::to_array(values);
    };
    auto asDouble = [](std::uint64_t bits) {
        double value = 0.0;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    };
    auto asIndex
        = [](std::uint64_t value) { return value == ~0ull ? std::int64_t { -1 } : static_cast<std::int64_t>(value); };
    verify::DeviceScan scan;
    scan.elements = layout.dataElements();
    if (scan.elements == 0)
        return scan;
    void* args[] = { &actual, &expected, &rows, &length, &stride, &atol, &rtol, &poison, &results };
    launch(m_compare.at(layout.type), scan.elements, args);
    auto values = read();
    scan.unwritten = static_cast<std::int64_t>(values[0]);
    scan.nonFinite = static_cast<std::int64_t>(values[1]);
    scan.mismatches = static_cast<std::int64_t>(values[2]);
    scan.maxAbsError = asDouble(values[3]);
    scan.maxRelError = asDouble(values[4]);
    scan.firstUnwritten = asIndex(values[6]);
    if (scan.mismatches > 0) {
        // Second pass, on failures only: where the worst mismatch is.
        scan.maxScore = asDouble(values[5]);
        double worst = scan.maxScore;
        void* worstArgs[] = { &actual, &expected, &rows, &length, &stride, &atol, &rtol, &poison, &worst, &results };
        launch(m_worst.at(layout.type), scan.elements, worstArgs);
        values = read();
        scan.worstMismatch = asIndex(values[7]);
    }
    return scan;
}

std::pair<std::int64_t, std::int64_t> RunnerKernels::changedGuardBytes(
    CUdeviceptr data, const verify::TensorLayout& layout, std::size_t guardBytes) const
{
    const CudaDriver& cu = m_device.driver();
    KL_CU(cu, cuMemsetD8Async, m_results.pointer(), 0, sizeof(std::uint64_t), m_device.stream());
    KL_CU(cu, cuMemsetD8Async, m_results.pointer() + sizeof(std::uint64_t), 0xff, sizeof(std::uint64_t),
        m_device.stream());
    CUdeviceptr results = m_results.pointer();
    unsigned char sentinel = static_cast<unsigned char>(verify::kSentinelByte);
    std::uint64_t guard = guardBytes;
    // Offsets from the allocation's start (the front guard's first byte), as the host report gives them.
    for (std::uint64_t base : { std::uint64_t { 0 }, guardBytes + layout.bytes() }) {
        CUdeviceptr start = data - guardBytes + base;
        void* args[] = { &start, &guard, &sentinel, &base, &results };
        launch(m_countOther, static_cast<std::int64_t>(guardBytes), args);
    }
    if (layout.padded() && layout.rows > 0) {
        std::int64_t rows = layout.rows;
        std::int64_t rowBytes = layout.rowLength * static_cast<std::int64_t>(layout.elementBytes());
        std::int64_t strideBytes = layout.rowStride * static_cast<std::int64_t>(layout.elementBytes());
        std::uint64_t base = guardBytes;
        void* args[] = { &data, &rows, &rowBytes, &strideBytes, &sentinel, &base, &results };
        launch(m_countOtherInGaps, rows * (strideBytes - rowBytes), args);
    }
    std::uint64_t values[2] = {};
    KL_CU(cu, cuMemcpyDtoHAsync, values, m_results.pointer(), sizeof values, m_device.stream());
    m_device.synchronize();
    return { static_cast<std::int64_t>(values[0]), values[1] == ~0ull ? -1 : static_cast<std::int64_t>(values[1]) };
}

std::uint64_t RunnerKernels::keyFor(std::uint64_t seed, const std::string& bufferName)
{
    std::uint64_t h = 1469598103934665603ull; // FNV-1a over the name
    for (unsigned char c : bufferName)
        h = (h ^ c) * 1099511628211ull;
    return mix(mix(seed) ^ h);
}

} // namespace kl::runner
