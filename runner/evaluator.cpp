#include "runner/evaluator.h"

#include "core/protocol/case_speed_of_light.h"
#include "core/protocol/profile_policy.h"
#include "core/verify/physical_floor.h"
#include "core/verify/speed_of_light.h"
#include "runner/case_memory.h"
#include "runner/copy_bandwidth.h"
#include "runner/guarded_wait.h"
#include "runner/job_failure.h"
#include "runner/memory_plan.h"
#include "runner/tensor_peak.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace kl::runner {

using protocol::Category;

namespace {

using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

protocol::TimingSummary summaryOf(const Measurement& m)
{
    protocol::TimingSummary s;
    s.medianUs = m.summary.median;
    s.p20Us = m.summary.p20;
    s.p80Us = m.summary.p80;
    s.minUs = m.summary.min;
    s.meanUs = m.summary.mean;
    s.cv = m.summary.cv;
    s.reps = static_cast<int>(m.summary.count);
    s.graphMedianUs = m.graphMedianUs;
    s.samplesUs = m.samplesUs;
    if (m.interval.known) {
        s.medianLowUs = m.interval.low;
        s.medianHighUs = m.interval.high;
    }
    s.stoppedBy = m.stoppedBy;
    return s;
}

// The request's protocol, unless $KERNELLOOP_TIMING (adaptive | fixed) overrides it for this runner:
// a knob for comparing the two protocols in one session (scripts/gpu-throughput.sh); the reply says
// which protocol ran.
bool adaptiveRepetitions(const protocol::EvaluateOptions& options)
{
    if (const char* chosen = std::getenv("KERNELLOOP_TIMING")) {
        if (std::string(chosen) == "fixed")
            return false;
        if (std::string(chosen) == "adaptive")
            return true;
    }
    return options.repetitions == protocol::EvaluateOptions::Repetitions::Adaptive;
}

// Whether a copy timed earlier still stands for now: same SM clock (within 1%, at least 15 MHz) and
// temperature (within 5 C), both read right after a candidate's timed runs, i.e. under the same load.
// Without NVML readings nothing can be compared and the copy is timed again.
bool sameConditions(std::optional<double> clockThen, std::optional<double> tempThen, std::optional<double> clockNow,
    std::optional<double> tempNow)
{
    if (!clockThen || !clockNow || !tempThen || !tempNow)
        return false;
    return std::abs(*clockNow - *clockThen) <= std::max(15.0, 0.01 * *clockThen)
        && std::abs(*tempNow - *tempThen) <= 5.0;
}

// The reference cache's bytes: as asked, and in device memory at most an eighth of what is free now.
std::size_t referenceCacheBytes(const Device& device)
{
    std::size_t capacity = referenceCacheCapacity();
    std::size_t free = 0, total = 0;
    if (referenceCacheOnDevice() && device.driver().cuMemGetInfo(&free, &total) == CUDA_SUCCESS)
        capacity = std::min(capacity, free / 8);
    return capacity;
}

// $KL_PROFILE_LEAN=0 brings back the profile phase's memory as it was before issue 14's second pass
// (for before/after figures in one run): its own freshly allocated case memory with the reference's
// outputs. Default (lean): the timing phase's memory of that case, without the reference's outputs.
bool leanProfile()
{
    const char* text = std::getenv("KL_PROFILE_LEAN");
    return !(text && std::string(text) == "0");
}

std::string formatMicros(double us)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", us);
    return text;
}

} // namespace

Evaluator::Evaluator(const Device& device)
    : m_device(device)
    , m_profiler(device)
    , m_sampler(device)
    , m_clock(device.staticDescription().uuid)
    , m_referenceCache(referenceCacheBytes(device))
{
}

Evaluator::~Evaluator() = default;

void Evaluator::startPythonWorker()
{
    try {
        m_pythonWorker.launch();
    } catch (const JobFailure& failure) { // said again by the first job that needs the worker
        std::fprintf(stderr, "PyTorch worker not started early: %s\n", failure.what());
    }
}

const RunnerKernels& Evaluator::ownKernels()
{
    if (!m_ownKernels)
        m_ownKernels = std::make_unique<RunnerKernels>(m_device);
    return *m_ownKernels;
}

std::size_t Evaluator::flushBytesFor(std::size_t asked) const
{
    return asked ? (asked + 3) / 4 * 4 : 2 * m_device.l2Bytes();
}

Timer& Evaluator::timer(std::size_t flushBytes)
{
    const std::size_t wanted = flushBytesFor(flushBytes);
    if (!m_timer || m_timer->flushBytes() != wanted) {
        m_timer.reset();
        m_timer = std::make_unique<Timer>(m_device, ownKernels(), wanted);
    }
    return *m_timer;
}

std::optional<std::string> Evaluator::planMemory(const protocol::EvaluateRequest& request)
{
    // $KL_MEMORY_PLAN=0: no plan (the allocations say it, as before issue 27); a knob should the plan's
    // estimate of the PyTorch worker's tensors prove too cautious for some reference.
    if (const char* text = std::getenv("KL_MEMORY_PLAN"); text && std::string(text) == "0")
        return std::nullopt;
    std::size_t free = 0, total = 0;
    if (m_device.driver().cuMemGetInfo(&free, &total) != CUDA_SUCCESS)
        return std::nullopt; // cannot tell: the allocations will say
    MemoryPlanContext context;
    context.flushBytes = flushBytesFor(static_cast<std::size_t>(std::max<std::int64_t>(request.options.flushBytes, 0)));
    context.flushAllocated = m_timer && m_timer->flushBytes() == context.flushBytes;
    context.leanProfile = leanProfile();
    context.referenceCacheCapacity = m_referenceCache.capacity();
    context.referenceCacheOnDevice = referenceCacheOnDevice();
    context.referenceOnGpu = request.pythonReference && referenceOnGpuWanted();
    if (request.pythonReference && !m_pythonWorker.started())
        context.headroomBytes += 512ull << 20; // the worker's own CUDA context and torch's kernels
    const MemoryPlan plan = planJobMemory(request, context);
    // What the runner holds and could give back: a flush buffer of another size, the cached outputs.
    const std::size_t oldFlush = m_timer && !context.flushAllocated ? m_timer->flushBytes() : 0;
    const std::size_t cached = referenceCacheOnDevice() ? m_referenceCache.bytes() : 0;
    const std::size_t blocks = DeviceBuffer::cachedBytes();
    if (std::optional<std::string> shortfall = memoryShortfall(plan, free + oldFlush + cached + blocks, total))
        return shortfall;
    // Blocks kept from the last job count as free for this one; where the job needs more than is free
    // beside them, they go back (a job of the same sizes takes them again instead).
    if (plan.needed() > free + oldFlush && blocks > 0) {
        std::fprintf(stderr, "memory plan: %s of kept blocks released: the job %s, %s free\n",
            formatBytes(blocks).c_str(), plan.describe().c_str(), formatBytes(free).c_str());
        DeviceBuffer::releaseCached(m_device.driver());
        if (m_device.driver().cuMemGetInfo(&free, &total) != CUDA_SUCCESS)
            return std::nullopt;
    }
    if (plan.needed() > free + oldFlush && cached > 0) {
        std::fprintf(stderr, "memory plan: the reference cache (%s) released: the job %s, %s free\n",
            formatBytes(cached).c_str(), plan.describe().c_str(), formatBytes(free).c_str());
        m_referenceCache.clear();
    }
    return std::nullopt;
}

protocol::DeviceDescription Evaluator::description()
{
    if (!m_description) {
        try {
            protocol::DeviceDescription d = m_device.staticDescription();
            d.copyBandwidthGbps = measureCopyBandwidth(m_device, timer(0));
            d.copyBandwidthBytes = kCopyBandwidthBytes;
            d.tensorFp16Tflops = measureTensorPeak(m_device, ownKernels(), timer(0));
            if (d.tensorFp16Tflops > 0.0)
                d.tensorFp16ClockMhz = m_clock.smClockMhz().value_or(d.smClockMhz);
            m_description = d;
        } catch (const CudaError& error) {
            throw failureFrom(error, "measuring the copy bandwidth and the tensor ceiling");
        }
    }
    return *m_description;
}

Evaluator::Outcome Evaluator::evaluate(const protocol::EvaluateRequest& request, const ProgressFunction& progress)
{
    Outcome outcome;
    protocol::EvaluateResult& result = outcome.result;
    result.header.id = request.id;
    auto fail = [&](const JobFailure& failure) {
        result.header.status = protocol::statusOf(failure.category());
        result.header.category = failure.category();
        result.header.detail = failure.what();
        outcome.contextLost = failure.contextLost();
    };

    try {
        result.device = description();
    } catch (const JobFailure& failure) {
        fail(failure);
        return outcome;
    }

    // Plan: the job's peak device memory against what is free, before anything is launched.
    auto started = Clock::now();
    if (const std::optional<std::string> shortfall = planMemory(request)) {
        result.phasesMs["memory_plan"] = millisSince(started);
        fail(JobFailure(Category::OutOfMemory, *shortfall));
        return outcome;
    }
    result.phasesMs["memory_plan"] = millisSince(started);

    // torch.compile's compilation for this job's sizes, once per runner: the worker compiles while the
    // runner loads and verifies, so that no timing phase waits for it.
    if (request.options.time && request.pythonReference) {
        try {
            warmCompiledContenders(request, m_pythonWorker, m_warmedContenders);
        } catch (const JobFailure& failure) { // the reference's own call says it again
            std::fprintf(stderr, "torch.compile warm-up not sent: %s\n", failure.what());
        }
    }

    // Load.
    started = Clock::now();
    progress("load", 0, 1);
    std::unique_ptr<LoadedModule> reference, candidate, baseline;
    try {
        ownKernels();
        if (!request.pythonReference)
            reference = std::make_unique<LoadedModule>(m_device, request.modules.reference.cubin, "reference");
        candidate = std::make_unique<LoadedModule>(m_device, request.modules.candidate.cubin, "candidate");
        if (request.modules.baseline)
            baseline = std::make_unique<LoadedModule>(m_device, request.modules.baseline->cubin, "baseline");
    } catch (const JobFailure& failure) {
        result.phasesMs["load"] = millisSince(started);
        fail(failure);
        return outcome;
    } catch (const std::exception& error) { // the runner's own kernels did not compile: our bug, not the candidate's
        result.phasesMs["load"] = millisSince(started);
        fail(JobFailure(Category::BadRequest, std::string("runner setup: ") + error.what()));
        return outcome;
    }
    result.phasesMs["load"] = millisSince(started);

    // Verify.
    started = Clock::now();
    VerificationOutcome verified = verifyCandidate(
        m_device, ownKernels(), reference.get(), *candidate, request, progress, &m_pythonWorker, &m_referenceCache);
    result.phasesMs["verify"] = millisSince(started);
    if (verified.split.referenceHits > 0) {
        result.phasesMs["verify_reference_restore"] = verified.split.referenceRestore;
    }
    if (verified.split.referenceStore > 0.0)
        result.phasesMs["verify_reference_store"] = verified.split.referenceStore;
    std::string notes; // said in the detail, whatever the verdict
    if (request.pythonReference) {
        // By the host path what the tensors' trip through host shared memory costs; on the GPU what
        // handing the worker our buffers costs.
        result.phasesMs[verified.split.referenceOnGpu > 0 ? "verify_reference_open" : "verify_reference_transfer"]
            = verified.split.referenceTransfer;
        result.phasesMs["verify_reference_worker"] = verified.split.referenceWorker;
        result.phasesMs["reference_worker_start"] = m_pythonWorker.startMillis();
        result.phasesMs["reference_worker_start_wait"] = m_pythonWorker.startWaitMillis();
        if (!verified.split.referenceHostFallback.empty())
            notes += "; reference by host copies (" + verified.split.referenceHostFallback + ")";
        else if (verified.split.referenceOnGpu > 0)
            notes += "; reference on the GPU";
    }
    result.phasesMs["verify_prepare"] = verified.split.prepare;
    result.phasesMs["verify_reference"] = verified.split.reference;
    result.phasesMs["verify_candidate"] = verified.split.candidate;
    result.phasesMs["verify_checks"] = verified.split.checks;
    result.verification = verified.verification;
    if (verified.failure) {
        fail(*verified.failure);
        result.header.detail += notes;
        return outcome;
    }
    result.header.status = protocol::Status::Ok;
    result.header.category = Category::Passed;
    const int trials = std::max(1, request.options.trials);
    result.header.detail = "verified " + std::to_string(request.cases.size()) + " case"
        + (request.cases.size() == 1 ? "" : "s") + " x " + std::to_string(trials) + " trial" + (trials == 1 ? "" : "s")
        + notes;

    // Time. torch.compile's warm-up, if still running in the worker, ends first: nothing of the
    // worker's may run on the GPU while the runner times.
    if (request.options.time && request.pythonReference && m_pythonWorker.started()) {
        started = Clock::now();
        try {
            m_pythonWorker.settle(std::chrono::seconds(300));
        } catch (const JobFailure& failure) { // restarted by the contenders' call, which says so
            std::fprintf(stderr, "torch.compile warm-up: %s\n", failure.what());
        }
        result.phasesMs["contenders_warm_wait"] = millisSince(started);
        for (const nlohmann::json& warmed : m_pythonWorker.takeAnswered())
            if (warmed.value("compile_ms", 0.0) > 0.0)
                result.phasesMs["contenders_compile"] += warmed.value("compile_ms", 0.0);
    }
    std::unique_ptr<CaseMemory> profiledMemory; // the timed memory of the profiled case (lean profile)
    if (request.options.time) {
        started = Clock::now();
        try {
            std::string timingNote;
            result.timing
                = timeCases(request, *candidate, baseline.get(), progress, profiledMemory, result.phasesMs, timingNote);
            if (!timingNote.empty())
                result.header.detail += "; " + timingNote;
        } catch (const JobFailure& failure) {
            result.phasesMs["time"] = millisSince(started);
            fail(failure);
            return outcome;
        } catch (const CudaError& error) {
            result.phasesMs["time"] = millisSince(started);
            fail(failureFrom(error, "timing"));
            return outcome;
        }
        result.phasesMs["time"] = millisSince(started);
        for (const protocol::CaseTiming& timed : result.timing->cases) {
            verify::FloorCheck floor;
            if (timed.copy)
                floor = verify::checkPhysicalFloor(timed.candidate.medianUs, timed.copy->medianUs);
            if (!floor.below && timed.compute && timed.ceilingTflops)
                floor = verify::checkComputeFloor(
                    timed.candidate.medianUs, timed.flops, *timed.ceilingTflops, precisionLabel(*timed.compute));
            if (floor.below) {
                result.header.status = protocol::Status::Failed;
                result.header.category = Category::BelowPhysicalFloor;
                result.header.detail = timed.label + ": " + floor.detail;
                return outcome;
            }
        }
        if (!result.timing->cases.empty()) {
            const protocol::CaseTiming& first = result.timing->cases.front();
            result.header.detail += "; " + first.label + " median " + formatMicros(first.candidate.medianUs) + " us";
            if (first.speedupVsBaseline)
                result.header.detail += ", " + formatMicros(*first.speedupVsBaseline) + "x the baseline";
        }
    }

    // Profile (never during timing), unless the loop asked only for candidates as fast as its incumbent.
    if (request.options.profile != protocol::MetricSet::None && result.timing) {
        if (const std::string skip = protocol::profileSkipReason(*result.timing, request.options.profileMinSpeedup);
            !skip.empty()) {
            protocol::Profile skipped;
            skipped.status = protocol::ProfileStatus::Skipped;
            skipped.reason = "slower-than-asked";
            result.profile = skipped;
            result.header.detail += "; " + skip; // PC sampling, part of the profile, skipped alike
            return outcome;
        }
    }
    if (request.options.profile != protocol::MetricSet::None) {
        started = Clock::now();
        progress("profile", 0, 1);
        std::string detail;
        try {
            result.profile = profileCandidate(request, *candidate, std::move(profiledMemory), detail, result.phasesMs);
        } catch (const JobFailure& failure) {
            result.phasesMs["profile"] = millisSince(started);
            fail(failure);
            return outcome;
        } catch (const CudaError& error) {
            result.phasesMs["profile"] = millisSince(started);
            fail(failureFrom(error, "profiling"));
            return outcome;
        }
        if (!detail.empty())
            result.header.detail += "; profile: " + detail;
        result.phasesMs["profile"] = millisSince(started);
        progress("profile", 1, 1);
    } else {
        protocol::Profile skipped;
        skipped.status = protocol::ProfileStatus::Skipped;
        result.profile = skipped;
    }

    // PC sampling, opt-in: after the counters, never during timing.
    if (request.options.pcSampling) {
        started = Clock::now();
        progress("pc-sampling", 0, 1);
        try {
            const lines::PcSampling sampled = sampleLines(request);
            if (sampled.status != lines::SamplingStatus::Ok || !sampled.reason.empty())
                result.header.detail += "; pc sampling: " + (sampled.reason.empty() ? sampled.detail : sampled.reason);
            result.pcSampling = sampled;
        } catch (const JobFailure& failure) {
            result.phasesMs["pc_sampling"] = millisSince(started);
            fail(failure);
            return outcome;
        } catch (const CudaError& error) {
            result.phasesMs["pc_sampling"] = millisSince(started);
            fail(failureFrom(error, "PC sampling"));
            return outcome;
        }
        result.phasesMs["pc_sampling"] = millisSince(started);
        progress("pc-sampling", 1, 1);
    }
    return outcome;
}

namespace {
// The size the counters and the samples describe: the first timed one, else the first.
const protocol::Case* profiledCase(const protocol::EvaluateRequest& request)
{
    for (const protocol::Case& c : request.cases)
        if (c.timed)
            return &c;
    return request.cases.empty() ? nullptr : &request.cases.front();
}
} // namespace

protocol::Timing Evaluator::timeCases(const protocol::EvaluateRequest& request, LoadedModule& candidate,
    LoadedModule* baseline, const ProgressFunction& progress, std::unique_ptr<CaseMemory>& kept,
    std::map<std::string, double>& phasesMs, std::string& note)
{
    const protocol::EvaluateOptions& options = request.options;
    Timer& clock = timer(static_cast<std::size_t>(std::max<std::int64_t>(options.flushBytes, 0)));
    protocol::Timing timing;

    int timedCases = 0;
    for (const protocol::Case& c : request.cases)
        timedCases += c.timed;
    // The budget is shared: half to the candidate, a quarter each to the baseline and the copy. Under
    // the adaptive protocol it is a cap, and the baseline and copy, timed right after the candidate on a
    // GPU that is already busy and clocked up, get a fifth of their warm-up.
    const bool adaptive = adaptiveRepetitions(options);
    timing.repetitions = adaptive ? "adaptive" : "fixed";
    const double share = options.timeBudgetMs / std::max(timedCases, 1);
    auto budget = [&](double fraction, bool followsCandidate) {
        const double warmup = options.warmupMs * fraction * (adaptive && followsCandidate ? 0.2 : 1.0);
        return TimingBudget { warmup, options.minReps, options.maxReps, share * fraction, adaptive,
            options.intervalHalfWidth, options.adaptiveMinReps };
    };

    int done = 0;
    const bool lean = leanProfile();
    const protocol::Case* profiled = profiledCase(request);
    for (const protocol::Case& testCase : request.cases) {
        if (!testCase.timed)
            continue;
        // Timing never runs the reference: its outputs are only needed by a PyTorch contender's worker.
        auto owned = std::make_unique<CaseMemory>(
            m_device, ownKernels(), testCase, !lean || request.pythonReference.has_value());
        CaseMemory& memory = *owned;
        memory.prepare(options.seed);
        protocol::CaseTiming timed;
        timed.label = testCase.label;
        timed.bytes = testCase.bytes;
        timed.flops = testCase.flops;
        timed.compute = testCase.compute;
        timed.computeReason = testCase.computeReason;

        ProgramRunner candidateRunner(
            m_device, candidate, testCase.programs.candidate, memory.buffersFor(Role::Candidate));
        Measurement measured = clock.measure([&] { candidateRunner.enqueue(); }, budget(0.5, false));
        const std::optional<double> clockNow = m_clock.smClockMhz(), tempNow = m_clock.temperatureC();
        if (measured.summary.median < options.graphBelowUs)
            measured.graphMedianUs = clock.graphReplayMedian([&] { candidateRunner.enqueue(); });
        timed.candidate = summaryOf(measured);
        progress("time", ++done, timedCases * 3);

        if (baseline && testCase.programs.baseline) {
            ProgramRunner baselineRunner(
                m_device, *baseline, *testCase.programs.baseline, memory.buffersFor(Role::Baseline));
            Measurement base = clock.measure([&] { baselineRunner.enqueue(); }, budget(0.25, true));
            if (base.summary.median < options.graphBelowUs)
                base.graphMedianUs = clock.graphReplayMedian([&] { baselineRunner.enqueue(); });
            timed.baseline = summaryOf(base);
            if (timed.candidate.medianUs > 0.0)
                timed.speedupVsBaseline = timed.baseline->medianUs / timed.candidate.medianUs;
        }
        progress("time", ++done, timedCases * 3);

        // A copy moving the same bytes (half read, half written), in the same job and conditions.
        // Adaptive: once per size and runner while the clock and temperature stay where they were.
        const auto half = static_cast<std::size_t>(testCase.bytes / 2.0) / 4 * 4;
        const auto cachedCopy = m_copies.find(half);
        if (half >= 4 && adaptive && cachedCopy != m_copies.end()
            && sameConditions(cachedCopy->second.smClockMhz, cachedCopy->second.temperatureC, clockNow, tempNow)) {
            timed.copy = cachedCopy->second.summary;
            timed.copySource = "cached";
            if (timed.candidate.medianUs > 0.0)
                timed.pctOfCopy = 100.0 * timed.copy->medianUs / timed.candidate.medianUs;
        } else if (half >= 4) {
            DeviceBuffer source(m_device.driver(), half);
            DeviceBuffer target(m_device.driver(), half);
            KL_CU(m_device.driver(), cuMemsetD32Async, source.pointer(), 0x3c003c00u, half / 4, m_device.stream());
            Measurement copy = clock.measure(
                [&] {
                    KL_CU(m_device.driver(), cuMemcpyDtoDAsync, target.pointer(), source.pointer(), half,
                        m_device.stream());
                },
                budget(0.25, true));
            timed.copy = summaryOf(copy);
            timed.copySource = "measured";
            if (adaptive)
                m_copies[half] = CopyTiming { *timed.copy, clockNow, tempNow };
            if (timed.candidate.medianUs > 0.0)
                timed.pctOfCopy = 100.0 * timed.copy->medianUs / timed.candidate.medianUs;
        }
        progress("time", ++done, timedCases * 3);

        if (request.pythonReference) { // PyTorch as a contender, same case, same job, repeated as the baseline
            const TimingBudget like = budget(0.25, true);
            ContenderBudget contenders;
            contenders.adaptive = like.adaptive;
            contenders.warmupMs = like.warmupMs;
            contenders.minReps = like.adaptiveMinReps;
            contenders.maxReps = like.maxReps;
            contenders.halfWidth = like.halfWidth;
            contenders.timeCapMs = like.budgetMs;
            const auto contendersStarted = Clock::now();
            timePythonContenders(m_device, memory, testCase, *request.pythonReference, m_pythonWorker,
                clock.flushBytes(), contenders, timed, phasesMs, note);
            phasesMs["time_contenders"] += millisSince(contendersStarted);
        }

        timed.gbps = verify::achievedGbps(testCase.bytes, timed.candidate.medianUs);
        timed.tflops = timed.candidate.medianUs > 0.0 ? testCase.flops / (timed.candidate.medianUs * 1e6) : 0.0;
        timing.cases.push_back(std::move(timed));
        if (lean && &testCase == profiled)
            kept = std::move(owned);
    }
    // Right after the timed runs, while the clocks are still where the runs left them.
    timing.smClockMhz = m_clock.smClockMhz();
    timing.temperatureC = m_clock.temperatureC();
    const protocol::DeviceDescription device = m_description ? *m_description : m_device.staticDescription();
    for (protocol::CaseTiming& timed : timing.cases)
        protocol::addSpeedOfLight(timed, device, timing.smClockMhz.value_or(device.smClockMhz));
    return timing;
}

protocol::Profile Evaluator::profileCandidate(const protocol::EvaluateRequest& request, LoadedModule& candidate,
    std::unique_ptr<CaseMemory> memory, std::string& detail, std::map<std::string, double>& phasesMs)
{
    const protocol::Case* chosen = profiledCase(request);
    if (!chosen) {
        protocol::Profile skipped;
        skipped.status = protocol::ProfileStatus::Skipped;
        return skipped;
    }
    const auto started = Clock::now();
    const bool lean = leanProfile();
    if (!memory) // not timed, or not lean: its own
        memory = std::make_unique<CaseMemory>(m_device, ownKernels(), *chosen, !lean);
    memory->prepare(request.options.seed); // the timed runs left their outputs: poisoned again, as verified
    m_device.synchronize();
    ProgramRunner runner(m_device, candidate, chosen->programs.candidate, memory->buffersFor(Role::Candidate));
    // Start from the same clean, cold L2 as the timed runs (the inputs were just written); with user
    // replay, every pass does.
    Timer& clock = timer(static_cast<std::size_t>(std::max<std::int64_t>(request.options.flushBytes, 0)));
    clock.flushCaches();
    phasesMs["profile_setup"] = millisSince(started);
    return m_profiler.profile(
        request.options.profile,
        [&] {
            runner.enqueue();
            waitGuarded(m_device, "profiling " + chosen->label);
        },
        [&] { clock.flushCaches(); }, runner.kernelNames(), chosen->label, detail, phasesMs);
}

lines::PcSampling Evaluator::sampleLines(const protocol::EvaluateRequest& request)
{
    const protocol::Case* chosen = profiledCase(request);
    if (!chosen) {
        lines::PcSampling skipped;
        skipped.status = lines::SamplingStatus::Skipped;
        return skipped;
    }
    CaseMemory memory(m_device, ownKernels(), *chosen);
    memory.prepare(request.options.seed);
    m_device.synchronize();
    return m_sampler.sample(
        request.modules.candidate.cubin,
        [&](LoadedModule& module) {
            ProgramRunner runner(m_device, module, chosen->programs.candidate, memory.buffersFor(Role::Candidate));
            runner.enqueue();
            waitGuarded(m_device, "PC sampling " + chosen->label);
        },
        chosen->label);
}

} // namespace kl::runner
