#include "runner/python_reference.h"

#include "runner/job_failure.h"

#include <cstdlib>

namespace kl::runner {

using protocol::Category;
using Clock = std::chrono::steady_clock;

namespace {

double millisSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<SharedTensors::Tensor> tensorsOf(const CaseMemory& memory)
{
    std::vector<SharedTensors::Tensor> tensors;
    for (const TensorAllocation& t : memory.inputs())
        tensors.push_back({ t.name, false, t.layout });
    for (const TensorAllocation& t : memory.referenceOutputs())
        tensors.push_back({ t.name, true, t.layout });
    return tensors;
}

nlohmann::json baseRequest(
    const char* op, const SharedTensors& shared, const protocol::Case& testCase, const protocol::PythonReference& ref)
{
    nlohmann::json scalars = nlohmann::json::object();
    for (const auto& [name, value] : ref.scalars)
        scalars[name] = value;
    return { { "op", op }, { "source", ref.source }, { "file", ref.fileName }, { "shm", shared.path() },
        { "tensors", shared.describe(testCase.shapes) }, { "scalars", scalars } };
}

// Each tensor's data region, device to its place in the shared file.
void copyToShared(const Device& device, const std::vector<TensorAllocation>& tensors, const SharedTensors& shared)
{
    for (const TensorAllocation& t : tensors)
        if (t.layout.bytes() > 0)
            KL_CU(device.driver(), cuMemcpyDtoH, shared.at(shared.offsetOf(t.name)), t.data(), t.layout.bytes());
}

} // namespace

void computePythonReference(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, PythonReferenceSplit& split)
{
    auto mark = Clock::now();
    device.synchronize();
    SharedTensors shared(tensorsOf(memory));
    copyToShared(device, memory.inputs(), shared);
    // The reference's outputs keep their poison in the padding gaps: start from what is there.
    copyToShared(device, memory.referenceOutputs(), shared);
    split.transfer += millisSince(mark);
    mark = Clock::now();
    const nlohmann::json reply
        = worker.call(baseRequest("reference", shared, testCase, reference), std::chrono::seconds(300));
    split.worker += millisSince(mark);
    if (!reply.value("ok", false))
        throw JobFailure(Category::BadRequest,
            "the PyTorch reference (" + reference.fileName + ") failed on " + testCase.label + ": "
                + reply.value("message", std::string("no message")));
    mark = Clock::now();
    for (const TensorAllocation& t : memory.referenceOutputs())
        if (t.layout.bytes() > 0)
            KL_CU(device.driver(), cuMemcpyHtoD, t.data(), shared.at(shared.offsetOf(t.name)), t.layout.bytes());
    split.transfer += millisSince(mark);
}

void timePythonContenders(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, std::size_t flushBytes,
    protocol::CaseTiming& timed)
{
    auto summaryOf = [](const nlohmann::json& s) {
        protocol::TimingSummary t;
        t.medianUs = s.value("median_us", 0.0);
        t.p20Us = s.value("p20_us", t.medianUs);
        t.p80Us = s.value("p80_us", t.medianUs);
        t.minUs = s.value("min_us", t.medianUs);
        t.meanUs = s.value("mean_us", t.medianUs);
        t.cv = s.value("cv", 0.0);
        t.reps = s.value("reps", 0);
        for (const auto& sample : s.value("samples_us", nlohmann::json::array()))
            t.samplesUs.push_back(sample.get<double>());
        return t;
    };
    try {
        SharedTensors shared(tensorsOf(memory));
        copyToShared(device, memory.inputs(), shared);
        nlohmann::json request = baseRequest("time", shared, testCase, reference);
        request["flush_bytes"] = flushBytes;
        request["warmup"] = 5;
        request["reps"] = 50;
        // $KL_CONTENDERS: "eager" times eager alone (torch.compile costs tens of seconds a process).
        const char* contenders = std::getenv("KL_CONTENDERS");
        request["compile"] = !(contenders && std::string(contenders) == "eager");
        const nlohmann::json reply = worker.call(request, std::chrono::seconds(300));
        if (!reply.value("ok", false)) {
            timed.torchCompileError = "eager not timed: " + reply.value("message", std::string("no message"));
            return;
        }
        timed.eager = summaryOf(reply.at("eager"));
        if (timed.eager->medianUs > 0.0 && timed.candidate.medianUs > 0.0)
            timed.speedupVsEager = timed.eager->medianUs / timed.candidate.medianUs;
        if (reply.contains("compiled") && reply.at("compiled").is_object()) {
            timed.torchCompile = summaryOf(reply.at("compiled"));
            if (timed.torchCompile->medianUs > 0.0 && timed.candidate.medianUs > 0.0)
                timed.speedupVsCompile = timed.torchCompile->medianUs / timed.candidate.medianUs;
        }
        timed.torchCompileError = reply.value("compile_error", std::string());
    } catch (const JobFailure& failure) {
        timed.torchCompileError = std::string("contenders not timed: ") + failure.what();
    } catch (const CudaError& error) {
        timed.torchCompileError = std::string("contenders not timed: ") + error.what();
    }
}

} // namespace kl::runner
