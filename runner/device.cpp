#include "runner/device.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace kl::runner {

std::unique_ptr<Device> Device::open(const CudaDriver& driver, int index, std::string& whyNot)
{
    CUresult result = driver.cuInit(0);
    if (result != CUDA_SUCCESS) {
        whyNot = "cuInit: " + driver.describe(result);
        return nullptr;
    }
    int count = 0;
    result = driver.cuDeviceGetCount(&count);
    if (result != CUDA_SUCCESS || count == 0) {
        whyNot = result != CUDA_SUCCESS ? "cuDeviceGetCount: " + driver.describe(result) : "no CUDA device";
        return nullptr;
    }
    if (index < 0 || index >= count) {
        whyNot = "device " + std::to_string(index) + " out of range (" + std::to_string(count) + " device"
            + (count == 1 ? "" : "s") + ")";
        return nullptr;
    }
    std::unique_ptr<Device> device(new Device(driver, index));
    try {
        KL_CU(driver, cuDeviceGet, &device->m_device, index);
        KL_CU(driver, cuDevicePrimaryCtxRetain, &device->m_context, device->m_device);
        KL_CU(driver, cuCtxSetCurrent, device->m_context);
        KL_CU(driver, cuStreamCreate, &device->m_stream, CU_STREAM_NON_BLOCKING);
        device->m_major = device->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        device->m_minor = device->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    } catch (const CudaError& error) {
        whyNot = error.what();
        return nullptr;
    }
    return device;
}

Device::Device(const CudaDriver& driver, int index)
    : m_driver(driver)
    , m_index(index)
{
}

Device::~Device()
{
    if (m_driver.contextAbandoned())
        return;
    if (m_stream)
        m_driver.cuStreamDestroy(m_stream);
    if (m_context)
        m_driver.cuDevicePrimaryCtxRelease(m_device);
}

int Device::attribute(CUdevice_attribute which) const
{
    int value = 0;
    KL_CU(m_driver, cuDeviceGetAttribute, &value, which, m_device);
    return value;
}

std::string Device::arch() const { return "sm_" + std::to_string(m_major * 10 + m_minor); }

std::size_t Device::l2Bytes() const { return static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)); }

protocol::DeviceDescription Device::staticDescription() const
{
    protocol::DeviceDescription d;
    d.index = m_index;
    char name[256] = {};
    KL_CU(m_driver, cuDeviceGetName, name, static_cast<int>(sizeof name - 1), m_device);
    d.name = name;
    CUuuid uuid {};
    KL_CU(m_driver, cuDeviceGetUuid, &uuid, m_device);
    // nvidia-smi's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        text += hex;
        if (i == 3 || i == 5 || i == 7 || i == 9)
            text += '-';
    }
    d.uuid = text;
    d.computeCapability = std::to_string(m_major) + "." + std::to_string(m_minor);
    d.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.l2Bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d.sharedPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d.sharedPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    d.sharedPerBlockOptin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d.registersPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.maxThreadsPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d.maxBlocksPerSm = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    d.warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    size_t total = 0;
    KL_CU(m_driver, cuDeviceTotalMem, &total, m_device);
    d.memoryBytes = static_cast<std::int64_t>(total);
    d.memoryBusBits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    // Both attributes are the maximum clocks (kHz), not the current ones.
    d.smClockMhz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000.0;
    d.memoryClockMhz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000.0;
    int driverVersion = 0;
    KL_CU(m_driver, cuDriverGetVersion, &driverVersion);
    d.driverVersion = std::to_string(driverVersion / 1000) + "." + std::to_string(driverVersion % 1000 / 10);
    d.runtimeToolkit = std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
    return d;
}

void Device::synchronize() const { KL_CU(m_driver, cuStreamSynchronize, m_stream); }

namespace {

// Large blocks freed by one job, kept for the next (issue 27): a real-size problem's case memory is tens of
// gigabytes in a few allocations of the same sizes every job, and cuMemAlloc/cuMemFree of those cost more
// than the kernels. Exact sizes only (a job asks for what the last one did); given back when an allocation
// would fail, and when the memory plan needs the room. One runner thread allocates; the mutex is cheap.
class BlockCache {
public:
    static constexpr std::size_t kSmallest = 64ull << 20;

    static BlockCache& instance()
    {
        static BlockCache cache;
        return cache;
    }
    bool wanted() const
    {
        static const bool on = [] {
            const char* text = std::getenv("KL_RUNNER_BLOCK_CACHE");
            return !(text && std::string(text) == "0");
        }();
        return on;
    }
    CUdeviceptr take(std::size_t bytes)
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_blocks.find(bytes);
        if (it == m_blocks.end())
            return 0;
        const CUdeviceptr pointer = it->second;
        m_blocks.erase(it);
        m_bytes -= bytes;
        return pointer;
    }
    void keep(CUdeviceptr pointer, std::size_t bytes)
    {
        std::lock_guard lock(m_mutex);
        m_blocks.emplace(bytes, pointer);
        m_bytes += bytes;
    }
    std::size_t bytes() const
    {
        std::lock_guard lock(m_mutex);
        return m_bytes;
    }
    std::size_t release(const CudaDriver& driver)
    {
        std::lock_guard lock(m_mutex);
        const std::size_t released = m_bytes;
        if (!driver.contextAbandoned())
            for (const auto& [bytes, pointer] : m_blocks)
                driver.cuMemFree(pointer);
        m_blocks.clear();
        m_bytes = 0;
        return released;
    }

private:
    mutable std::mutex m_mutex;
    std::multimap<std::size_t, CUdeviceptr> m_blocks;
    std::size_t m_bytes = 0;
};

} // namespace

DeviceBuffer::DeviceBuffer(const CudaDriver& driver, std::size_t bytes)
    : m_driver(&driver)
    , m_bytes(bytes)
{
    BlockCache& cache = BlockCache::instance();
    if (bytes >= BlockCache::kSmallest && cache.wanted())
        m_pointer = cache.take(bytes);
    if (m_pointer)
        return;
    const CUresult result = driver.cuMemAlloc(&m_pointer, bytes == 0 ? 1 : bytes);
    if (result == CUDA_ERROR_OUT_OF_MEMORY && cache.bytes() > 0) {
        cache.release(driver); // the room another size's blocks took
        m_pointer = 0;
        KL_CU(driver, cuMemAlloc, &m_pointer, bytes == 0 ? 1 : bytes);
        return;
    }
    if (result != CUDA_SUCCESS)
        m_pointer = 0;
    check(driver, result, "cuMemAlloc");
}

std::size_t DeviceBuffer::cachedBytes() { return BlockCache::instance().bytes(); }

std::size_t DeviceBuffer::releaseCached(const CudaDriver& driver) { return BlockCache::instance().release(driver); }

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_driver(other.m_driver)
    , m_pointer(std::exchange(other.m_pointer, 0))
    , m_bytes(std::exchange(other.m_bytes, 0))
{
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept
{
    if (this != &other) {
        release();
        m_driver = other.m_driver;
        m_pointer = std::exchange(other.m_pointer, 0);
        m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
}

void DeviceBuffer::release()
{
    if (m_pointer && m_driver && !m_driver->contextAbandoned()) {
        if (m_bytes >= BlockCache::kSmallest && BlockCache::instance().wanted())
            BlockCache::instance().keep(m_pointer, m_bytes);
        else
            m_driver->cuMemFree(m_pointer);
    }
    m_pointer = 0;
}

HostBuffer::HostBuffer(const CudaDriver& driver, std::size_t bytes, bool pageLocked)
    : m_driver(pageLocked ? &driver : nullptr)
    , m_bytes(bytes)
{
    if (pageLocked)
        KL_CU(driver, cuMemAllocHost, &m_data, bytes == 0 ? 1 : bytes);
    else
        m_data = new std::byte[bytes == 0 ? 1 : bytes];
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : m_driver(other.m_driver)
    , m_data(std::exchange(other.m_data, nullptr))
    , m_bytes(std::exchange(other.m_bytes, 0))
{
}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept
{
    if (this != &other) {
        release();
        m_driver = other.m_driver;
        m_data = std::exchange(other.m_data, nullptr);
        m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
}

void HostBuffer::release()
{
    if (m_data && m_driver) {
        if (!m_driver->contextAbandoned())
            m_driver->cuMemFreeHost(m_data);
    } else
        delete[] static_cast<std::byte*>(m_data);
    m_data = nullptr;
}

EventPair::EventPair(const CudaDriver& driver)
    : m_driver(&driver)
{
    KL_CU(driver, cuEventCreate, &m_start, CU_EVENT_DEFAULT);
    KL_CU(driver, cuEventCreate, &m_end, CU_EVENT_DEFAULT);
}

EventPair::~EventPair()
{
    if (m_driver && m_driver->contextAbandoned())
        return;
    if (m_start)
        m_driver->cuEventDestroy(m_start);
    if (m_end)
        m_driver->cuEventDestroy(m_end);
}

EventPair::EventPair(EventPair&& other) noexcept
    : m_driver(other.m_driver)
    , m_start(std::exchange(other.m_start, nullptr))
    , m_end(std::exchange(other.m_end, nullptr))
{
}

double EventPair::elapsedMicros() const
{
    float millis = 0.0f;
    KL_CU(*m_driver, cuEventElapsedTime, &millis, m_start, m_end);
    return static_cast<double>(millis) * 1000.0;
}

} // namespace kl::runner
