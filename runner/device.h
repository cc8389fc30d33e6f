#pragma once
// One GPU as the runner holds it: the driver, the device's primary context made current on the
// runner's thread, one stream for everything, and the static facts `describe` reports.
#include "core/protocol/messages.h"
#include "runner/cuda_driver.h"

#include <cstddef>
#include <memory>
#include <string>

namespace kl::runner {

class Device {
public:
    // Initialises the driver and takes device `index`. Returns null with `whyNot` set when there
    // is no such device (or cuInit fails: no GPU, driver/kernel-module mismatch).
    static std::unique_ptr<Device> open(const CudaDriver& driver, int index, std::string& whyNot);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const CudaDriver& driver() const { return m_driver; }
    CUdevice handle() const { return m_device; }
    CUcontext context() const { return m_context; }
    CUstream stream() const { return m_stream; }
    int index() const { return m_index; }

    int attribute(CUdevice_attribute attribute) const;
    int computeMajor() const { return m_major; }
    int computeMinor() const { return m_minor; }
    std::string arch() const; // "sm_90"
    std::size_t l2Bytes() const;
    // Everything describe reports except the measured copy bandwidth.
    protocol::DeviceDescription staticDescription() const;

    void synchronize() const;

private:
    Device(const CudaDriver& driver, int index);
    const CudaDriver& m_driver;
    int m_index = 0;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    CUstream m_stream = nullptr;
    int m_major = 0;
    int m_minor = 0;
};

// Device memory owned by one object; freed on destruction. Blocks of 64 MiB and more go to a cache of the
// runner's instead and are handed to the next buffer of the same size (a real-size problem allocates the
// same tens of gigabytes every job); $KL_RUNNER_BLOCK_CACHE=0 frees them at once.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const CudaDriver& driver, std::size_t bytes); // throws CudaError
    // What the cache holds; its blocks freed (when a plan or an allocation needs the room).
    static std::size_t cachedBytes();
    static std::size_t releaseCached(const CudaDriver& driver);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    CUdeviceptr pointer() const { return m_pointer; }
    std::size_t bytes() const { return m_bytes; }
    explicit operator bool() const { return m_pointer != 0; }

private:
    void release();
    const CudaDriver* m_driver = nullptr;
    CUdeviceptr m_pointer = 0;
    std::size_t m_bytes = 0;
};

// Host memory for copies to and from the device: page-locked (cuMemAllocHost, the fast path) or plain
// pageable memory (the driver stages those copies); freed on destruction.
class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(const CudaDriver& driver, std::size_t bytes, bool pageLocked = true); // throws CudaError
    ~HostBuffer();
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;

    void* data() const { return m_data; }
    std::size_t bytes() const { return m_bytes; }

private:
    void release();
    const CudaDriver* m_driver = nullptr; // null: pageable (new[])
    void* m_data = nullptr;
    std::size_t m_bytes = 0;
};

// A pair of timing events, created once and reused.
class EventPair {
public:
    explicit EventPair(const CudaDriver& driver);
    ~EventPair();
    EventPair(EventPair&& other) noexcept;
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    EventPair& operator=(EventPair&&) = delete;
    CUevent start() const { return m_start; }
    CUevent end() const { return m_end; }
    double elapsedMicros() const; // after both were recorded and the end completed

private:
    const CudaDriver* m_driver;
    CUevent m_start = nullptr;
    CUevent m_end = nullptr;
};

} // namespace kl::runner
