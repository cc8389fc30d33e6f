#include "runner/case_memory.h"

#include "runner/job_failure.h"

namespace kl::runner {

using protocol::Category;

const char* roleName(Role role)
{
    switch (role) {
    case Role::Reference:
        return "reference";
    case Role::Candidate:
        return "candidate";
    case Role::Baseline:
        return "baseline";
    }
    return "candidate";
}

namespace {
// Scratch the program does not ask to be zeroed still starts as garbage we chose, so that a
// candidate reading it before writing behaves the same in every run.
constexpr std::uint64_t kScratchPattern = 0xa5a5a5a5a5a5a5a5ull;

DeviceBuffer allocate(const CudaDriver& cu, std::size_t bytes, const std::string& what)
{
    try {
        return DeviceBuffer(cu, bytes);
    } catch (const CudaError& error) {
        if (error.result() == CUDA_ERROR_OUT_OF_MEMORY)
            throw JobFailure(Category::OutOfMemory,
                "cannot allocate " + std::to_string(bytes) + " bytes for " + what + ": " + error.what());
        throw failureFrom(error, "allocating " + what);
    }
}

TensorAllocation allocateTensor(const CudaDriver& cu, const protocol::Buffer& buffer)
{
    if (buffer.rows < 0 || buffer.rowLength < 0 || buffer.rowStride < buffer.rowLength)
        throw JobFailure(Category::BadRequest,
            "buffer \"" + buffer.name + "\": row_stride " + std::to_string(buffer.rowStride)
                + " is shorter than row_length " + std::to_string(buffer.rowLength));
    TensorAllocation tensor;
    tensor.name = buffer.name;
    tensor.layout = { buffer.dtype, buffer.rows, buffer.rowLength, buffer.rowStride };
    tensor.distribution = buffer.distribution;
    tensor.memory = allocate(cu, tensor.layout.bytes() + 2 * verify::kGuardBytes, "buffer \"" + buffer.name + "\"");
    return tensor;
}
} // namespace

CaseMemory::CaseMemory(
    const Device& device, const RunnerKernels& ownKernels, const protocol::Case& testCase, bool withReference)
    : m_device(device)
    , m_ownKernels(ownKernels)
{
    const CudaDriver& cu = device.driver();
    for (const protocol::Buffer& buffer : testCase.buffers) {
        if (buffer.role == PlannedBuffer::Role::Output) {
            m_outputs.push_back(allocateTensor(cu, buffer));
            if (withReference)
                m_referenceOutputs.push_back(allocateTensor(cu, buffer));
        } else {
            m_inputs.push_back(allocateTensor(cu, buffer));
        }
    }
    auto addScratch = [&](Role role, const protocol::Program& program) {
        for (const protocol::Scratch& scratch : program.scratch)
            m_scratch[role].emplace(scratch.name,
                allocate(cu, static_cast<std::size_t>(scratch.elements) * dtypeSize(scratch.dtype),
                    std::string(roleName(role)) + " scratch \"" + scratch.name + "\""));
    };
    if (withReference)
        addScratch(Role::Reference, testCase.programs.reference);
    addScratch(Role::Candidate, testCase.programs.candidate);
    if (testCase.programs.baseline)
        addScratch(Role::Baseline, *testCase.programs.baseline);
}

void CaseMemory::prepare(std::uint64_t seed)
{
    for (const TensorAllocation& input : m_inputs) {
        m_ownKernels.fill(input.memory.pointer(), input.memory.bytes(), verify::kSentinelPattern);
        m_ownKernels.generate(input.data(), input.layout, input.distribution.value_or(Distribution {}),
            RunnerKernels::keyFor(seed, input.name));
    }
    for (const auto* outputs : { &m_outputs, &m_referenceOutputs }) {
        for (const TensorAllocation& output : *outputs) {
            m_ownKernels.fill(output.memory.pointer(), output.memory.bytes(), verify::kSentinelPattern);
            m_ownKernels.fill(output.data(), output.layout.bytes(), verify::poisonPattern(output.layout.type));
            m_ownKernels.fillGaps(output.data(), output.layout, verify::kSentinelByte);
        }
    }
    for (const auto& [role, buffers] : m_scratch)
        for (const auto& [name, buffer] : buffers)
            m_ownKernels.fill(buffer.pointer(), buffer.bytes(), kScratchPattern);
}

BufferMap CaseMemory::buffersFor(Role role) const
{
    BufferMap map;
    for (const TensorAllocation& input : m_inputs)
        map[input.name] = input.data();
    for (const TensorAllocation& output : role == Role::Reference ? m_referenceOutputs : m_outputs)
        map[output.name] = output.data();
    if (const auto it = m_scratch.find(role); it != m_scratch.end())
        for (const auto& [name, buffer] : it->second)
            map[name] = buffer.pointer();
    return map;
}

std::vector<std::uint64_t> CaseMemory::inputChecksums() const
{
    std::vector<std::uint64_t> sums;
    for (const TensorAllocation& input : m_inputs)
        sums.push_back(m_ownKernels.checksum(input.memory.pointer(), input.memory.bytes()));
    return sums;
}

std::vector<std::byte> CaseMemory::readWhole(const TensorAllocation& tensor) const
{
    std::vector<std::byte> host(tensor.memory.bytes());
    KL_CU(m_device.driver(), cuMemcpyDtoHAsync, host.data(), tensor.memory.pointer(), host.size(), m_device.stream());
    m_device.synchronize();
    return host;
}

std::vector<std::byte> CaseMemory::readData(const TensorAllocation& tensor) const
{
    std::vector<std::byte> host(tensor.layout.bytes());
    if (!host.empty()) {
        KL_CU(m_device.driver(), cuMemcpyDtoHAsync, host.data(), tensor.data(), host.size(), m_device.stream());
        m_device.synchronize();
    }
    return host;
}

std::size_t ReferenceOutputs::bytes() const
{
    std::size_t total = 0;
    for (const DeviceBuffer& output : device)
        total += output.bytes();
    for (const HostBuffer& output : host)
        total += output.bytes();
    return total;
}

ReferenceOutputs CaseMemory::saveReferenceOutputs(ReferenceMemory where) const
{
    ReferenceOutputs saved;
    const CudaDriver& cu = m_device.driver();
    // The legacy stream as well as ours: a PyTorch reference's outputs arrive by cuMemcpyHtoD on it.
    KL_CU(cu, cuStreamSynchronize, CU_STREAM_LEGACY);
    m_device.synchronize();
    for (const TensorAllocation& output : m_referenceOutputs) {
        const std::size_t bytes = output.memory.bytes();
        if (where == ReferenceMemory::Device) {
            DeviceBuffer copy(cu, bytes);
            KL_CU(cu, cuMemcpyDtoDAsync, copy.pointer(), output.memory.pointer(), bytes, m_device.stream());
            saved.device.push_back(std::move(copy));
        } else {
            HostBuffer copy(cu, bytes, false);
            KL_CU(cu, cuMemcpyDtoHAsync, copy.data(), output.memory.pointer(), bytes, m_device.stream());
            saved.host.push_back(std::move(copy));
        }
        saved.checksums.push_back(m_ownKernels.checksum(output.data(), output.layout.bytes()));
    }
    m_device.synchronize();
    return saved;
}

std::string CaseMemory::restoreReferenceOutputs(const ReferenceOutputs& saved) const
{
    const CudaDriver& cu = m_device.driver();
    const std::size_t count = m_referenceOutputs.size();
    if (saved.checksums.size() != count || (saved.device.size() != count && saved.host.size() != count))
        return "kept " + std::to_string(saved.checksums.size()) + " outputs, the case has " + std::to_string(count);
    for (std::size_t i = 0; i < count; ++i) {
        const TensorAllocation& output = m_referenceOutputs[i];
        const std::size_t bytes = output.memory.bytes();
        const std::size_t kept = saved.device.size() == count ? saved.device[i].bytes() : saved.host[i].bytes();
        if (kept != bytes)
            return "output " + std::to_string(i) + " kept " + std::to_string(kept) + " bytes, now "
                + std::to_string(bytes);
        if (saved.device.size() == count)
            KL_CU(cu, cuMemcpyDtoDAsync, output.memory.pointer(), saved.device[i].pointer(), bytes, m_device.stream());
        else
            KL_CU(cu, cuMemcpyHtoDAsync, output.memory.pointer(), saved.host[i].data(), bytes, m_device.stream());
    }
    // A copy kept in device memory can be hit by a later candidate's wild write: the checksum says so.
    for (std::size_t i = 0; i < count; ++i) {
        const TensorAllocation& output = m_referenceOutputs[i];
        const std::uint64_t now = m_ownKernels.checksum(output.data(), output.layout.bytes());
        if (now != saved.checksums[i])
            return "output " + std::to_string(i) + " checksum " + std::to_string(now) + ", kept "
                + std::to_string(saved.checksums[i]);
    }
    return {};
}

} // namespace kl::runner
