#include "runner/verifier.h"

#include <cstdio>

#include "core/verify/device_scan.h"
#include "core/verify/element.h"
#include "core/verify/output_check.h"
#include "runner/case_memory.h"
#include "runner/guarded_wait.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace kl::runner {

using protocol::Category;

namespace {

using Clock = std::chrono::steady_clock;

Tolerance toleranceFor(const protocol::EvaluateRequest& request, DType type)
{
    if (const auto it = request.tolerances.find(type); it != request.tolerances.end())
        return it->second;
    return defaultTolerance(type);
}

// Checksums of an output's data region after a trial, the candidate's and the reference's: the
// stale-output check compares them with the next trial's.
struct OutputSums {
    std::uint64_t candidate = 0;
    std::uint64_t reference = 0;
};

protocol::CaseVerification failedCase(const protocol::Case& testCase, int trial, const JobFailure& failure)
{
    protocol::CaseVerification v;
    v.label = testCase.label;
    v.kind = testCase.kind;
    v.trial = trial;
    v.passed = false;
    v.category = failure.category();
    return v;
}

// Runs one program to completion under the wall-clock guard.
void runProgram(const Device& device, LoadedModule& module, const protocol::Program& program, const BufferMap& buffers,
    const std::string& what)
{
    ProgramRunner runner(device, module, program, buffers);
    runner.enqueue();
    waitGuarded(device, what);
}

// The report of a failed output from the device's scan: its window's elements read one by one from the
// device. $KL_VERIFY_HOST_CHECK=1 also checks the whole tensors on the host (copied back) and says on stderr
// where the two reports differ; the host's then stands (the GPU suites run with it).
verify::OutputReport failureReport(const Device& device, CaseMemory& memory, const TensorAllocation& output,
    const TensorAllocation& expectedOutput, const verify::DeviceScan& scan, const Tolerance& tolerance)
{
    const verify::TensorLayout& layout = output.layout;
    auto elementAt = [&](CUdeviceptr data, std::int64_t row, std::int64_t column) {
        std::byte raw[8] {};
        const std::size_t size = layout.elementBytes();
        KL_CU(device.driver(), cuMemcpyDtoH, raw,
            data + static_cast<CUdeviceptr>((row * layout.rowStride + column) * static_cast<std::int64_t>(size)), size);
        return verify::readElement(layout.type, raw);
    };
    verify::OutputReport report
        = verify::reportFromScan(layout, scan, false, [&](std::int64_t row, std::int64_t column) {
              return std::pair { elementAt(expectedOutput.data(), row, column), elementAt(output.data(), row, column) };
          });
    const char* hostCheck = std::getenv("KL_VERIFY_HOST_CHECK");
    if (!hostCheck || std::string(hostCheck) != "1")
        return report;
    const std::vector<std::byte> actual = memory.readWhole(output);
    const std::vector<std::byte> expected = memory.readData(expectedOutput);
    verify::OutputEvidence evidence;
    evidence.layout = layout;
    evidence.tolerance = tolerance;
    evidence.actual = actual;
    evidence.expected = expected;
    const verify::OutputReport host = verify::checkOutput(evidence);
    if (host.category != report.category || host.worstIndex != report.worstIndex || host.mismatches != report.mismatches
        || host.unwritten != report.unwritten || host.nonFinite != report.nonFinite
        || host.guardBytesChanged != report.guardBytesChanged
        || host.firstChangedGuardOffset != report.firstChangedGuardOffset || host.maxAbsError != report.maxAbsError)
        std::fprintf(stderr, "verification: device and host reports differ for %s: device \"%s\", host \"%s\"\n",
            output.name.c_str(), verify::describe(report, output.name).c_str(),
            verify::describe(host, output.name).c_str());
    else
        std::fprintf(stderr, "verification: device and host reports agree for %s: %s\n", output.name.c_str(),
            verify::describe(report, output.name).c_str());
    return host;
}

// One (case, trial). Returns the case's report; `failure` is set when it failed.
protocol::CaseVerification verifyTrial(const Device& device, const protocol::EvaluateRequest& request,
    const protocol::Case& testCase, int trial, CaseMemory& memory, LoadedModule* reference, LoadedModule& candidate,
    std::vector<OutputSums>& previous, std::optional<JobFailure>& failure, VerificationSplit& split,
    PythonWorker* worker, ReferenceCache* cache)
{
    auto mark = Clock::now();
    auto lap = [&mark](double& total) {
        const auto now = Clock::now();
        total += std::chrono::duration<double, std::milli>(now - mark).count();
        mark = now;
    };
    const std::uint64_t seed = request.options.seed + static_cast<std::uint64_t>(trial);
    memory.prepare(seed);
    device.synchronize();
    lap(split.prepare);
    const bool caching = cache && cache->enabled();
    const std::string key = caching ? referenceCacheKey(request, testCase, seed) : std::string();
    bool restored = false;
    if (caching) {
        if (const ReferenceOutputs* saved = cache->find(key)) {
            const std::string refused = memory.restoreReferenceOutputs(*saved);
            restored = refused.empty();
            if (!restored) { // changed since it was stored: never trusted again
                std::fprintf(stderr, "reference cache: %s (trial %d) not restored: %s\n", testCase.label.c_str(), trial,
                    refused.c_str());
                cache->erase(key);
                memory.prepare(seed);
                device.synchronize();
            }
        }
        lap(split.referenceRestore);
    }
    if (restored) {
        ++split.referenceHits;
    } else {
        ++split.referenceRuns;
        try {
            if (request.pythonReference && worker) {
                PythonReferenceSplit python;
                computePythonReference(device, memory, testCase, *request.pythonReference, *worker, python);
                split.referenceTransfer += python.transfer;
                split.referenceWorker += python.worker;
                split.referenceOnGpu += python.onGpu;
                if (!python.hostFallback.empty())
                    split.referenceHostFallback = python.hostFallback;
            } else if (reference) {
                runProgram(device, *reference, testCase.programs.reference, memory.buffersFor(Role::Reference),
                    "reference on " + testCase.label);
            } else {
                throw JobFailure(
                    Category::BadRequest, "the request has neither a reference module nor a Python reference");
            }
        } catch (const JobFailure& error) {
            // The reference is trusted: when it cannot run, the job cannot be done.
            failure
                = JobFailure(error.category() == Category::OutOfMemory ? Category::OutOfMemory : Category::BadRequest,
                    std::string("the reference failed: ") + error.what(), error.contextLost());
            return failedCase(testCase, trial, *failure);
        }
        lap(split.reference);
        if (caching) {
            try {
                ReferenceOutputs saved = memory.saveReferenceOutputs(
                    referenceCacheOnDevice() ? ReferenceMemory::Device : ReferenceMemory::Host);
                const std::size_t bytes = saved.bytes();
                if (!cache->insert(key, std::move(saved), bytes))
                    std::fprintf(stderr, "reference cache: %s not kept: %zu bytes, capacity %zu\n",
                        testCase.label.c_str(), bytes, cache->capacity());
            } catch (const CudaError& error) {
                // No memory to spare: not kept. A lost context fails the next call anyway.
                std::fprintf(stderr, "reference cache: %s not kept: %s\n", testCase.label.c_str(), error.what());
            }
            lap(split.referenceStore);
        }
    }
    const std::vector<std::uint64_t> before = memory.inputChecksums();
    lap(split.checks);
    try {
        runProgram(device, candidate, testCase.programs.candidate, memory.buffersFor(Role::Candidate),
            "candidate on " + testCase.label + " (trial " + std::to_string(trial) + ")");
    } catch (const JobFailure& error) {
        failure = error;
        return failedCase(testCase, trial, error);
    }
    lap(split.candidate);
    const std::vector<std::uint64_t> after = memory.inputChecksums();
    for (std::size_t i = 0; i < before.size(); ++i) {
        if (before[i] != after[i]) {
            failure = JobFailure(Category::InputModified,
                "the candidate changed input \"" + memory.inputs()[i].name + "\" on " + testCase.label);
            return failedCase(testCase, trial, *failure);
        }
    }

    protocol::CaseVerification result;
    result.label = testCase.label;
    result.kind = testCase.kind;
    result.trial = trial;
    result.passed = true;
    const RunnerKernels& ownKernels = memory.ownKernels();
    for (std::size_t i = 0; i < memory.outputs().size(); ++i) {
        const TensorAllocation& output = memory.outputs()[i];
        const TensorAllocation& expectedOutput = memory.referenceOutputs()[i];
        const Tolerance tolerance = toleranceFor(request, output.layout.type);
        // The checks on the device; a failure's report comes from its counts, indices and a window of a few
        // elements, never from copies of the tensors.
        verify::DeviceScan scan = ownKernels.compare(output.data(), expectedOutput.data(), output.layout, tolerance);
        std::tie(scan.guardBytesChanged, scan.firstChangedGuardOffset)
            = ownKernels.changedGuardBytes(output.data(), output.layout, verify::kGuardBytes);
        const OutputSums sums { ownKernels.checksum(output.data(), output.layout.bytes()),
            ownKernels.checksum(expectedOutput.data(), expectedOutput.layout.bytes()) };
        const bool stale
            = i < previous.size() && sums.candidate == previous[i].candidate && sums.reference != previous[i].reference;
        if (previous.size() <= i)
            previous.resize(i + 1);
        previous[i] = sums;

        result.elements += output.layout.dataElements();
        result.mismatches += scan.mismatches;
        result.unwritten += scan.unwritten;
        result.nan += scan.nonFinite;
        if (result.passed && scan.maxAbsError >= result.maxAbsError)
            result.worstOutput = output.name;
        result.maxAbsError = std::max(result.maxAbsError, scan.maxAbsError);
        result.maxRelError = std::max(result.maxRelError, scan.maxRelError);
        if (!result.passed)
            continue;
        std::string category
            = verify::categoryOf(scan.guardBytesChanged, scan.unwritten, scan.nonFinite, stale, scan.mismatches);
        if (category.empty())
            continue;

        result.passed = false;
        result.worstOutput = output.name;
        std::string detail;
        if (category == "stale-output") {
            detail = output.name
                + ": stale-output (bit-identical to the previous trial's output although the inputs changed)";
        } else {
            verify::OutputReport report = failureReport(device, memory, output, expectedOutput, scan, tolerance);
            category = report.category;
            result.worstIndex = { report.worstIndex[0], report.worstIndex[1] };
            protocol::ErrorWindow window;
            window.start = { report.window.start[0], report.window.start[1] };
            window.expected = report.window.expected;
            window.actual = report.window.actual;
            result.window = window;
            detail = verify::describe(report, output.name);
        }
        result.category = *protocol::parseCategory(category);
        failure = JobFailure(*result.category, detail + " on " + testCase.label + ", trial " + std::to_string(trial));
    }
    lap(split.checks);
    return result;
}

} // namespace

VerificationOutcome verifyCandidate(const Device& device, const RunnerKernels& ownKernels, LoadedModule* reference,
    LoadedModule& candidate, const protocol::EvaluateRequest& request, const ProgressFunction& progress,
    PythonWorker* worker, ReferenceCache* cache)
{
    VerificationOutcome outcome;
    const int trials = std::max(1, request.options.trials);
    const int total = static_cast<int>(request.cases.size()) * trials;
    int done = 0;
    for (const protocol::Case& testCase : request.cases) {
        std::optional<CaseMemory> memory;
        try {
            memory.emplace(device, ownKernels, testCase);
        } catch (const JobFailure& error) {
            outcome.failure = error;
            outcome.verification.cases.push_back(failedCase(testCase, 0, error));
            break;
        } catch (const CudaError& error) {
            outcome.failure = failureFrom(error, "preparing " + testCase.label);
            outcome.verification.cases.push_back(failedCase(testCase, 0, *outcome.failure));
            break;
        }
        std::vector<OutputSums> previous; // per output, from the previous trial
        for (int trial = 0; trial < trials && !outcome.failure; ++trial) {
            try {
                outcome.verification.cases.push_back(verifyTrial(device, request, testCase, trial, *memory, reference,
                    candidate, previous, outcome.failure, outcome.split, worker, cache));
            } catch (const CudaError& error) {
                // Our own calls (fills, checksums, copies) fail when the candidate broke the context.
                outcome.failure = failureFrom(error, "candidate on " + testCase.label);
                outcome.verification.cases.push_back(failedCase(testCase, trial, *outcome.failure));
            }
            progress("verify", ++done, total);
        }
        if (outcome.failure)
            break;
    }
    outcome.verification.passed = !outcome.failure;
    return outcome;
}

} // namespace kl::runner
