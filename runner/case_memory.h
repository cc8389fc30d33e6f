#pragma once
// The device memory of one case: every tensor laid out as [guard | rows * row_stride | guard],
// the candidate's and the reference's outputs apart, each program's scratch, and the per-trial
// preparation (fresh inputs from the seed, poisoned outputs, sentinels in guards and gaps).
#include "core/protocol/messages.h"
#include "core/verify/patterns.h"
#include "runner/device.h"
#include "runner/program.h"
#include "runner/runner_kernels.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl::runner {

struct TensorAllocation {
    std::string name;
    verify::TensorLayout layout;
    std::optional<Distribution> distribution;
    DeviceBuffer memory; // guard + data + guard
    CUdeviceptr data() const { return memory.pointer() + verify::kGuardBytes; }
};

enum class Role { Reference, Candidate, Baseline };
const char* roleName(Role role);

// The reference's outputs as the reference left them, kept by the runner (reference_cache.h): a copy of
// each output's whole allocation (guards and gaps included), in device memory or in pageable host
// memory, and the checksum of its data region.
enum class ReferenceMemory { Device, Host };

struct ReferenceOutputs {
    std::vector<DeviceBuffer> device;
    std::vector<HostBuffer> host;
    std::vector<std::uint64_t> checksums;
    std::size_t bytes() const;
};

class CaseMemory {
public:
    // Allocates everything for `testCase`. Throws JobFailure(out-of-memory) when the device is
    // full and JobFailure(bad-request) for a malformed buffer (a stride shorter than its row).
    // `withReference` false: no reference outputs or scratch (timing and profiling never run the
    // reference; less memory also means less for CUPTI's kernel replay to save and restore).
    CaseMemory(const Device& device, const RunnerKernels& ownKernels, const protocol::Case& testCase,
        bool withReference = true);

    // Inputs generated from `seed` (one key per buffer name), outputs poisoned, guards, gaps and
    // scratch refreshed. Enqueued on the device's stream.
    void prepare(std::uint64_t seed);
    // The pointers a program sees: inputs, its outputs (the reference has its own), its scratch.
    BufferMap buffersFor(Role role) const;

    const RunnerKernels& ownKernels() const { return m_ownKernels; }
    const std::vector<TensorAllocation>& inputs() const { return m_inputs; }
    const std::vector<TensorAllocation>& outputs() const { return m_outputs; }
    const std::vector<TensorAllocation>& referenceOutputs() const { return m_referenceOutputs; }

    // Checksums of every input allocation (guards and gaps included); synchronises.
    std::vector<std::uint64_t> inputChecksums() const;
    // Host copies: a candidate output's whole allocation; a reference output's data region.
    std::vector<std::byte> readWhole(const TensorAllocation& tensor) const;
    std::vector<std::byte> readData(const TensorAllocation& tensor) const;

    // After the reference ran: copies of its outputs, in device memory or in pageable host memory.
    // Synchronises; throws CudaError (out of memory: the caller keeps none).
    ReferenceOutputs saveReferenceOutputs(ReferenceMemory where) const;
    // After prepare(): the saved outputs written back in place of running the reference. Empty when
    // restored; else why not (a size or the copy's checksum differs from the one saved: the caller
    // drops it and runs the reference after preparing again). Synchronises; throws CudaError.
    std::string restoreReferenceOutputs(const ReferenceOutputs& saved) const;

private:
    const Device& m_device;
    const RunnerKernels& m_ownKernels;
    std::vector<TensorAllocation> m_inputs;
    std::vector<TensorAllocation> m_outputs;
    std::vector<TensorAllocation> m_referenceOutputs;
    std::map<Role, std::map<std::string, DeviceBuffer>> m_scratch;
};

} // namespace kl::runner
