#pragma once
// One runner's work for evaluate and describe, with what it keeps between jobs: the helper
// kernels (compiled once), the flush buffer, the measured copy bandwidth, CUPTI's configurations.
#include "core/protocol/messages.h"
#include "runner/case_memory.h"
#include "runner/clock_reader.h"
#include "runner/device.h"
#include "runner/pc_sampling.h"
#include "runner/profiler.h"
#include "runner/python_reference.h"
#include "runner/runner_kernels.h"
#include "runner/timer.h"
#include "runner/verifier.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace kl::runner {

class Evaluator {
public:
    explicit Evaluator(const Device& device);
    ~Evaluator();

    struct Outcome {
        protocol::EvaluateResult result;
        bool contextLost = false; // answer, then exit: the client starts a fresh runner
    };
    Outcome evaluate(const protocol::EvaluateRequest& request, const ProgressFunction& progress);

    // Starts the PyTorch worker now without waiting for it (kernelloop-runner --python-worker): its
    // start overlaps the runner's describe and the client's compile of the baseline.
    void startPythonWorker();

    // The static description plus the copy bandwidth (measured on first use). Throws JobFailure.
    protocol::DeviceDescription description();

private:
    const RunnerKernels& ownKernels();
    std::size_t flushBytesFor(std::size_t asked) const; // 0: twice the L2
    Timer& timer(std::size_t flushBytes);
    // The job's peak memory against the free memory (runner/memory_plan.h): the out-of-memory detail when
    // it cannot fit, else null (the reference cache released first where that makes it fit).
    std::optional<std::string> planMemory(const protocol::EvaluateRequest& request);
    // `kept` receives the memory of the case the profile describes (lean: reused by profileCandidate).
    protocol::Timing timeCases(const protocol::EvaluateRequest& request, LoadedModule& candidate,
        LoadedModule* baseline, const ProgressFunction& progress, std::unique_ptr<CaseMemory>& kept,
        std::map<std::string, double>& phasesMs, std::string& note);
    protocol::Profile profileCandidate(const protocol::EvaluateRequest& request, LoadedModule& candidate,
        std::unique_ptr<CaseMemory> memory, std::string& detail, std::map<std::string, double>& phasesMs);
    lines::PcSampling sampleLines(const protocol::EvaluateRequest& request);

    const Device& m_device;
    std::unique_ptr<RunnerKernels> m_ownKernels;
    std::unique_ptr<Timer> m_timer;
    std::optional<protocol::DeviceDescription> m_description;
    // The same-size copy per bytes copied, with the SM clock and temperature when it was timed.
    struct CopyTiming {
        protocol::TimingSummary summary;
        std::optional<double> smClockMhz, temperatureC;
    };
    std::map<std::size_t, CopyTiming> m_copies;
    Profiler m_profiler;
    PcSampler m_sampler;
    ClockReader m_clock;
    PythonWorker m_pythonWorker; // started with the runner (--python-worker) or at the first job needing it
    std::set<std::string> m_warmedContenders; // torch.compile's warm-ups sent, by source and size
    ReferenceCache m_referenceCache; // the reference's outputs by (reference, case, seed)
};

} // namespace kl::runner
