#pragma once
// A program of the job (reference, candidate or baseline): its module loaded, its kernels
// resolved, and its launch sequence run against the case's buffers.
#include "core/protocol/messages.h"
#include "runner/device.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl::runner {

class LoadedModule {
public:
    // Throws JobFailure(launch-error) when the driver refuses the cubin.
    LoadedModule(const Device& device, const std::string& cubin, const std::string& role);
    ~LoadedModule();
    LoadedModule(const LoadedModule&) = delete;
    LoadedModule& operator=(const LoadedModule&) = delete;

    // Throws JobFailure(missing-kernel).
    CUfunction function(const std::string& loweredName);
    const std::string& role() const { return m_role; }

private:
    const Device& m_device;
    std::string m_role;
    CUmodule m_module = nullptr;
    std::map<std::string, CUfunction> m_functions;
};

// Device pointers by buffer name: the case's tensors, then this program's scratch.
using BufferMap = std::map<std::string, CUdeviceptr>;

class ProgramRunner {
public:
    // Resolves every kernel and checks every launch against the device's limits up front:
    // throws JobFailure (missing-kernel, too-many-resources, launch-error, bad-request for an
    // argument naming no buffer).
    ProgramRunner(
        const Device& device, LoadedModule& module, const protocol::Program& program, const BufferMap& buffers);

    // Enqueues the launches (zeroing zeroed scratch first) on the device's stream.
    // Throws JobFailure for a refused launch.
    void enqueue() const;
    const std::vector<std::string>& kernelNames() const { return m_kernelNames; }
    const std::string& role() const { return m_role; }

private:
    struct PreparedLaunch {
        CUfunction function = nullptr;
        std::string kernel;
        std::array<unsigned, 3> grid {};
        std::array<unsigned, 3> block {};
        unsigned sharedBytes = 0;
        std::vector<std::uint64_t> storage; // one 8-byte slot per argument
        mutable std::vector<void*> pointers;
    };
    struct ZeroedScratch {
        CUdeviceptr pointer;
        std::size_t bytes;
    };
    const Device& m_device;
    std::string m_role;
    std::vector<PreparedLaunch> m_launches;
    std::vector<ZeroedScratch> m_zeroed;
    std::vector<std::string> m_kernelNames;
};

} // namespace kl::runner
