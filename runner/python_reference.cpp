#include "runner/python_reference.h"

#include "runner/job_failure.h"

#include <cstdio>
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

nlohmann::json scalarsOf(const protocol::PythonReference& ref)
{
    nlohmann::json scalars = nlohmann::json::object();
    for (const auto& [name, value] : ref.scalars)
        scalars[name] = value;
    return scalars;
}

nlohmann::json baseRequest(const char* op, const nlohmann::json& tensors, const protocol::PythonReference& ref)
{
    return { { "op", op }, { "source", ref.source }, { "file", ref.fileName }, { "tensors", tensors },
        { "scalars", scalarsOf(ref) } };
}

nlohmann::json sharedRequest(
    const char* op, const SharedTensors& shared, const protocol::Case& testCase, const protocol::PythonReference& ref)
{
    nlohmann::json request = baseRequest(op, shared.describe(testCase.shapes), ref);
    request["shm"] = shared.path();
    return request;
}

// Each tensor's data region, device to its place in the shared file.
void copyToShared(const Device& device, const std::vector<TensorAllocation>& tensors, const SharedTensors& shared)
{
    for (const TensorAllocation& t : tensors)
        if (t.layout.bytes() > 0)
            KL_CU(device.driver(), cuMemcpyDtoH, shared.at(shared.offsetOf(t.name)), t.data(), t.layout.bytes());
}

std::string hex(const unsigned char* bytes, std::size_t count)
{
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (std::size_t i = 0; i < count; ++i) {
        text += digits[bytes[i] >> 4];
        text += digits[bytes[i] & 15];
    }
    return text;
}

// Why this runner's GPU path is refused for good (the first IPC failure), empty while it works.
std::string& gpuPathRefusal()
{
    static std::string refusal;
    return refusal;
}

// The case's tensors as the worker opens them on the GPU: each allocation's IPC handle and the data
// region's offset in it. Throws CudaError when the driver refuses a handle.
nlohmann::json deviceTensors(const Device& device, const CaseMemory& memory, const protocol::Case& testCase)
{
    const CudaDriver& cu = device.driver();
    if (!cu.cuIpcGetMemHandle)
        throw CudaError(CUDA_ERROR_NOT_SUPPORTED, "cuIpcGetMemHandle", "the driver has no CUDA IPC");
    nlohmann::json tensors = nlohmann::json::array();
    auto add = [&](const TensorAllocation& t, bool output) {
        CUipcMemHandle handle {};
        KL_CU(cu, cuIpcGetMemHandle, &handle, t.memory.pointer());
        std::vector<std::int64_t> shape;
        if (const auto it = testCase.shapes.find(t.name); it != testCase.shapes.end())
            shape = it->second;
        else if (t.layout.rows == 1)
            shape = { t.layout.rowLength };
        else
            shape = { t.layout.rows, t.layout.rowLength };
        tensors.push_back(
            { { "name", t.name }, { "role", output ? "output" : "input" }, { "dtype", dtypeName(t.layout.type) },
                { "shape", shape }, { "row_stride", t.layout.rowStride }, { "offset", t.data() - t.memory.pointer() },
                { "ipc", hex(reinterpret_cast<const unsigned char*>(handle.reserved), sizeof handle.reserved) } });
    };
    for (const TensorAllocation& t : memory.inputs())
        add(t, false);
    for (const TensorAllocation& t : memory.referenceOutputs())
        add(t, true);
    return tensors;
}

// The GPU path's request, or null (the host path) with `fallback` saying why when it was asked for.
std::optional<nlohmann::json> gpuRequest(const char* op, const Device& device, const CaseMemory& memory,
    const protocol::Case& testCase, const protocol::PythonReference& reference, std::string& fallback)
{
    if (!referenceOnGpuWanted())
        return std::nullopt;
    if (!gpuPathRefusal().empty()) {
        fallback = gpuPathRefusal();
        return std::nullopt;
    }
    try {
        return baseRequest(op, deviceTensors(device, memory, testCase), reference);
    } catch (const CudaError& error) {
        gpuPathRefusal() = std::string("CUDA IPC refused: ") + error.what();
        fallback = gpuPathRefusal();
        return std::nullopt;
    }
}

// A reply that says the worker could not open the runner's buffers: the GPU path refused for good.
bool refusedOnGpu(const nlohmann::json& reply, std::string& fallback)
{
    if (reply.value("ok", false) || reply.value("category", std::string()) != "ipc-unavailable")
        return false;
    gpuPathRefusal() = "the worker cannot open the runner's buffers: " + reply.value("message", std::string());
    fallback = gpuPathRefusal();
    std::fprintf(stderr, "PyTorch reference: %s; host copies from now on\n", fallback.c_str());
    return true;
}

} // namespace

bool referenceOnGpuWanted()
{
    const char* text = std::getenv("KL_REFERENCE_ON_GPU");
    return !(text && std::string(text) == "0");
}

bool compileContenderWanted()
{
    const char* contenders = std::getenv("KL_CONTENDERS");
    return !(contenders && std::string(contenders) == "eager");
}

void computePythonReference(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, PythonReferenceSplit& split)
{
    auto mark = Clock::now();
    // Inputs generated and outputs poisoned on our stream: done before the worker reads them.
    device.synchronize();
    auto failed = [&](const nlohmann::json& reply) {
        return JobFailure(Category::BadRequest,
            "the PyTorch reference (" + reference.fileName + ") failed on " + testCase.label + ": "
                + reply.value("message", std::string("no message")));
    };
    if (std::optional<nlohmann::json> request
        = gpuRequest("reference", device, memory, testCase, reference, split.hostFallback)) {
        split.transfer += millisSince(mark);
        mark = Clock::now();
        const nlohmann::json reply = worker.call(*request, std::chrono::seconds(300));
        split.worker += millisSince(mark);
        if (reply.value("ok", false)) {
            split.onGpu = true;
            return; // the worker synchronised its writes into our buffers before it replied
        }
        if (!refusedOnGpu(reply, split.hostFallback))
            throw failed(reply);
        mark = Clock::now();
    }
    SharedTensors shared(tensorsOf(memory));
    copyToShared(device, memory.inputs(), shared);
    // The reference's outputs keep their poison in the padding gaps: start from what is there.
    copyToShared(device, memory.referenceOutputs(), shared);
    split.transfer += millisSince(mark);
    mark = Clock::now();
    const nlohmann::json reply
        = worker.call(sharedRequest("reference", shared, testCase, reference), std::chrono::seconds(300));
    split.worker += millisSince(mark);
    if (!reply.value("ok", false))
        throw failed(reply);
    mark = Clock::now();
    for (const TensorAllocation& t : memory.referenceOutputs())
        if (t.layout.bytes() > 0)
            KL_CU(device.driver(), cuMemcpyHtoD, t.data(), shared.at(shared.offsetOf(t.name)), t.layout.bytes());
    split.transfer += millisSince(mark);
}

void timePythonContenders(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, std::size_t flushBytes,
    const ContenderBudget& budget, protocol::CaseTiming& timed, std::map<std::string, double>& phasesMs,
    std::string& note)
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
        t.stoppedBy = s.value("stopped_by", std::string());
        for (const auto& sample : s.value("samples_us", nlohmann::json::array()))
            t.samplesUs.push_back(sample.get<double>());
        return t;
    };
    auto timing = [&](nlohmann::json request) {
        request["flush_bytes"] = flushBytes;
        request["compile"] = compileContenderWanted();
        if (budget.adaptive) {
            request["adaptive"]
                = { { "warmup_ms", budget.warmupMs }, { "min_reps", budget.minReps }, { "max_reps", budget.maxReps },
                      { "half_width", budget.halfWidth }, { "time_cap_ms", budget.timeCapMs } };
        } else {
            request["warmup"] = budget.fixedWarmup;
            request["reps"] = budget.fixedReps;
        }
        return request;
    };
    try {
        auto mark = Clock::now();
        device.synchronize();
        std::string fallback;
        nlohmann::json reply;
        bool answered = false;
        if (std::optional<nlohmann::json> request = gpuRequest("time", device, memory, testCase, reference, fallback)) {
            phasesMs["time_contenders_transfer"] += millisSince(mark);
            mark = Clock::now();
            reply = worker.call(timing(*request), std::chrono::seconds(300));
            phasesMs["time_contenders_worker"] += millisSince(mark);
            answered = !refusedOnGpu(reply, fallback);
        }
        if (!answered) {
            mark = Clock::now();
            SharedTensors shared(tensorsOf(memory));
            copyToShared(device, memory.inputs(), shared);
            phasesMs["time_contenders_transfer"] += millisSince(mark);
            mark = Clock::now();
            reply = worker.call(timing(sharedRequest("time", shared, testCase, reference)), std::chrono::seconds(300));
            phasesMs["time_contenders_worker"] += millisSince(mark);
        }
        if (!fallback.empty())
            note = "contenders by host copies (" + fallback + ")";
        if (const auto ms = reply.find("ms"); ms != reply.end() && ms->is_object())
            for (const auto& [part, value] : ms->items())
                if (value.is_number())
                    phasesMs["time_contenders_" + part] += value.get<double>();
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

int warmCompiledContenders(
    const protocol::EvaluateRequest& request, PythonWorker& worker, std::set<std::string>& warmed)
{
    if (!request.pythonReference || !compileContenderWanted())
        return 0;
    int sent = 0;
    for (const protocol::Case& testCase : request.cases) {
        if (!testCase.timed)
            continue;
        std::vector<SharedTensors::Tensor> tensors;
        for (const protocol::Buffer& b : testCase.buffers)
            tensors.push_back({ b.name, b.role == PlannedBuffer::Role::Output,
                verify::TensorLayout { b.dtype, b.rows, b.rowLength, b.rowStride } });
        const nlohmann::json described = SharedTensors::describeLayouts(tensors, testCase.shapes);
        const std::string key = request.pythonReference->source + "\n" + described.dump();
        if (!warmed.insert(key).second)
            continue;
        worker.send(baseRequest("warm", described, *request.pythonReference));
        ++sent;
    }
    return sent;
}

} // namespace kl::runner
