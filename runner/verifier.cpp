#include "runner/verifier.h"

#include "core/verify/output_check.h"
#include "runner/case_memory.h"
#include "runner/guarded_wait.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kl::runner {

using protocol::Category;

namespace {

Tolerance toleranceFor(const protocol::EvaluateRequest& request, DType type)
{
    if (const auto it = request.tolerances.find(type); it != request.tolerances.end())
        return it->second;
    return defaultTolerance(type);
}

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

// One (case, trial). Returns the case's report; `failure` is set when it failed.
protocol::CaseVerification verifyTrial(const Device& device, const protocol::EvaluateRequest& request,
                                       const protocol::Case& testCase, int trial, CaseMemory& memory,
                                       LoadedModule& reference, LoadedModule& candidate,
                                       std::vector<std::vector<std::byte>>& previousActual,
                                       std::vector<std::vector<std::byte>>& previousExpected,
                                       std::optional<JobFailure>& failure)
{
    memory.prepare(request.options.seed + static_cast<std::uint64_t>(trial));
    try {
        runProgram(device, reference, testCase.programs.reference, memory.buffersFor(Role::Reference),
                   "reference on " + testCase.label);
    } catch (const JobFailure& error) {
        // The reference is trusted: when it cannot run, the job cannot be done.
        failure = JobFailure(error.category() == Category::OutOfMemory ? Category::OutOfMemory : Category::BadRequest,
                             std::string("the reference failed: ") + error.what(), error.contextLost());
        return failedCase(testCase, trial, *failure);
    }
    const std::vector<std::uint64_t> before = memory.inputChecksums();
    try {
        runProgram(device, candidate, testCase.programs.candidate, memory.buffersFor(Role::Candidate),
                   "candidate on " + testCase.label + " (trial " + std::to_string(trial) + ")");
    } catch (const JobFailure& error) {
        failure = error;
        return failedCase(testCase, trial, error);
    }
    const std::vector<std::uint64_t> after = memory.inputChecksums();
    for (std::size_t i = 0; i < before.size(); ++i) {
        if (before[i] != after[i]) {
            failure = JobFailure(Category::InputModified, "the candidate changed input \"" + memory.inputs()[i].name
                                                              + "\" on " + testCase.label);
            return failedCase(testCase, trial, *failure);
        }
    }

    protocol::CaseVerification result;
    result.label = testCase.label;
    result.kind = testCase.kind;
    result.trial = trial;
    result.passed = true;
    bool haveWorst = false;
    for (std::size_t i = 0; i < memory.outputs().size(); ++i) {
        const TensorAllocation& output = memory.outputs()[i];
        const std::vector<std::byte> actual = memory.readWhole(output);
        std::vector<std::byte> expected = memory.readData(memory.referenceOutputs()[i]);
        std::vector<std::byte> actualData(actual.begin() + verify::kGuardBytes,
                                          actual.begin() + verify::kGuardBytes + output.layout.bytes());
        verify::OutputEvidence evidence;
        evidence.layout = output.layout;
        evidence.tolerance = toleranceFor(request, output.layout.type);
        evidence.actual = actual;
        evidence.expected = expected;
        if (i < previousActual.size()) {
            evidence.previousActual = previousActual[i];
            evidence.previousExpected = previousExpected[i];
        }
        const verify::OutputReport report = verify::checkOutput(evidence);

        result.elements += report.elements;
        result.mismatches += report.mismatches;
        result.unwritten += report.unwritten;
        result.nan += report.nonFinite;
        if (result.passed && (report.passed() ? !haveWorst || report.maxAbsError > result.maxAbsError : true)) {
            result.worstOutput = output.name;
            result.worstIndex = { report.worstIndex[0], report.worstIndex[1] };
            haveWorst = true;
        }
        result.maxAbsError = std::max(result.maxAbsError, report.maxAbsError);
        result.maxRelError = std::max(result.maxRelError, report.maxRelError);
        if (!report.passed() && result.passed) {
            result.passed = false;
            result.category = *protocol::parseCategory(report.category);
            protocol::ErrorWindow window;
            window.start = { report.window.start[0], report.window.start[1] };
            window.expected = report.window.expected;
            window.actual = report.window.actual;
            result.window = window;
            failure = JobFailure(*result.category, verify::describe(report, output.name) + " on " + testCase.label
                                                       + ", trial " + std::to_string(trial));
        }
        if (previousActual.size() <= i) {
            previousActual.resize(i + 1);
            previousExpected.resize(i + 1);
        }
        previousActual[i] = std::move(actualData);
        previousExpected[i] = std::move(expected);
    }
    return result;
}

} // namespace

VerificationOutcome verifyCandidate(const Device& device, const HelperKernels& helpers, LoadedModule& reference,
                                    LoadedModule& candidate, const protocol::EvaluateRequest& request,
                                    const ProgressFunction& progress)
{
    VerificationOutcome outcome;
    const int trials = std::max(1, request.options.trials);
    const int total = static_cast<int>(request.cases.size()) * trials;
    int done = 0;
    for (const protocol::Case& testCase : request.cases) {
        std::optional<CaseMemory> memory;
        try {
            memory.emplace(device, helpers, testCase);
        } catch (const JobFailure& error) {
            outcome.failure = error;
            outcome.verification.cases.push_back(failedCase(testCase, 0, error));
            break;
        } catch (const CudaError& error) {
            outcome.failure = failureFrom(error, "preparing " + testCase.label);
            outcome.verification.cases.push_back(failedCase(testCase, 0, *outcome.failure));
            break;
        }
        std::vector<std::vector<std::byte>> previousActual, previousExpected;
        for (int trial = 0; trial < trials && !outcome.failure; ++trial) {
            try {
                outcome.verification.cases.push_back(verifyTrial(device, request, testCase, trial, *memory, reference,
                                                                 candidate, previousActual, previousExpected,
                                                                 outcome.failure));
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
