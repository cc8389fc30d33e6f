#include "runner/timer.h"

#include "runner/guarded_wait.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kl::runner {

namespace {
constexpr int kBatch = 128; // timed runs enqueued before the host waits
}

Timer::Timer(const Device& device, const RunnerKernels& ownKernels, std::size_t flushBytes)
    : m_device(device)
    , m_ownKernels(ownKernels)
    , m_flush(device.driver(), flushBytes ? (flushBytes + 3) / 4 * 4 : 2 * device.l2Bytes())
{
    for (int i = 0; i < kBatch; ++i)
        m_events.emplace_back(device.driver());
}

void Timer::flush()
{
    // A different value each time, so that no cache level can keep the old lines as "already zero".
    KL_CU(
        m_device.driver(), cuMemsetD32Async, m_flush.pointer(), ++m_flushValue, m_flush.bytes() / 4, m_device.stream());
    m_ownKernels.touch(m_flush.pointer(), m_flush.bytes());
}

void Timer::flushCaches()
{
    flush();
    waitGuarded(m_device, "flushing L2");
}

Measurement Timer::measure(const std::function<void()>& work, const TimingBudget& budget)
{
    using Clock = std::chrono::steady_clock;

    // Warm-up: module loading, instruction caches, clocks ramping up under load.
    const auto warmStart = Clock::now();
    int warmRuns = 0;
    do {
        flush();
        work();
        if (++warmRuns % 8 == 0)
            waitGuarded(m_device, "warm-up");
    } while (
        warmRuns < 3 || std::chrono::duration<double, std::milli>(Clock::now() - warmStart).count() < budget.warmupMs);
    waitGuarded(m_device, "warm-up");
    const double perRunMs
        = std::chrono::duration<double, std::milli>(Clock::now() - warmStart).count() / std::max(warmRuns, 1);

    Measurement measurement;
    if (!budget.adaptive) {
        const int reps = std::clamp(static_cast<int>(budget.budgetMs / std::max(perRunMs, 1e-3)),
            std::max(budget.minReps, 1), std::max(budget.maxReps, budget.minReps));
        measurement.samplesUs.reserve(static_cast<std::size_t>(reps));
        for (int done = 0; done < reps; done += std::min(kBatch, reps - done))
            timeBatch(work, std::min(kBatch, reps - done), measurement.samplesUs);
        measurement.stoppedBy = "budget";
    } else {
        // The minimum first, then a quarter more (at least 10) at a time until the rule stops it: each
        // check costs a host wait, so checking after every run would idle the GPU.
        const verify::StopRule rule { budget.halfWidth, std::max(budget.adaptiveMinReps, 1),
            std::max(budget.maxReps, 1), budget.budgetMs };
        const auto started = Clock::now();
        std::size_t next = static_cast<std::size_t>(std::min(rule.minReps, rule.maxReps));
        for (;;) {
            while (measurement.samplesUs.size() < next)
                timeBatch(work, static_cast<int>(std::min<std::size_t>(kBatch, next - measurement.samplesUs.size())),
                    measurement.samplesUs);
            const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
            if (const auto stop = verify::shouldStop(measurement.samplesUs, elapsed, rule)) {
                measurement.stoppedBy = std::string(verify::stopReasonName(*stop));
                break;
            }
            next = std::min(static_cast<std::size_t>(rule.maxReps), next + std::max<std::size_t>(10, next / 4));
        }
    }
    measurement.summary = verify::summarize(measurement.samplesUs);
    measurement.interval = verify::medianInterval(measurement.samplesUs);
    return measurement;
}

void Timer::timeBatch(const std::function<void()>& work, int runs, std::vector<double>& samplesUs)
{
    const CudaDriver& cu = m_device.driver();
    for (int i = 0; i < runs; ++i) {
        flush();
        KL_CU(cu, cuEventRecord, m_events[static_cast<std::size_t>(i)].start(), m_device.stream());
        work();
        KL_CU(cu, cuEventRecord, m_events[static_cast<std::size_t>(i)].end(), m_device.stream());
    }
    waitGuarded(m_device, "timing");
    for (int i = 0; i < runs; ++i)
        samplesUs.push_back(m_events[static_cast<std::size_t>(i)].elapsedMicros());
}

double Timer::graphReplayMedian(const std::function<void()>& work, int copies, int replays)
{
    const CudaDriver& cu = m_device.driver();
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    KL_CU(cu, cuStreamBeginCapture, m_device.stream(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    try {
        for (int i = 0; i < copies; ++i)
            work();
    } catch (...) {
        cu.cuStreamEndCapture(m_device.stream(), &graph);
        if (graph)
            cu.cuGraphDestroy(graph);
        throw;
    }
    KL_CU(cu, cuStreamEndCapture, m_device.stream(), &graph);
    const CUresult instantiated = cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
    cu.cuGraphDestroy(graph);
    check(cu, instantiated, "cuGraphInstantiateWithFlags");

    std::vector<double> perRun;
    try {
        for (int i = 0; i < 2; ++i)
            KL_CU(cu, cuGraphLaunch, exec, m_device.stream());
        for (int done = 0; done < replays;) {
            const int batch = std::min(kBatch, replays - done);
            for (int i = 0; i < batch; ++i) {
                KL_CU(cu, cuEventRecord, m_events[static_cast<std::size_t>(i)].start(), m_device.stream());
                KL_CU(cu, cuGraphLaunch, exec, m_device.stream());
                KL_CU(cu, cuEventRecord, m_events[static_cast<std::size_t>(i)].end(), m_device.stream());
            }
            waitGuarded(m_device, "graph replay");
            for (int i = 0; i < batch; ++i)
                perRun.push_back(m_events[static_cast<std::size_t>(i)].elapsedMicros() / copies);
            done += batch;
        }
    } catch (...) {
        cu.cuGraphExecDestroy(exec);
        throw;
    }
    cu.cuGraphExecDestroy(exec);
    return verify::summarize(perRun).median;
}

} // namespace kl::runner
