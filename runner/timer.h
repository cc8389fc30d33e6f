#pragma once
// Step 3 of evaluate: device-event timing with a cold L2. Before every timed run the stream
// writes a buffer of twice the L2 (cuMemsetD32Async) and reads it back, then the start event, the
// work, the end event: the events enclose the launches only. The read matters: after a memset
// alone L2 is full of dirty lines and the timed kernel pays for writing them back, which Nsight
// Compute's flushed-and-invalidated caches do not charge (the H200 figures: docs/measurements.md,
// "Cold L2: the flush's read-back"). Warm-up first, then at least min_reps runs or as many as the time budget allows
// (the fixed protocol), or, adaptive, until the 95% interval of the median is within +-halfWidth of it
// (core/verify/median_interval.h), summarised by median and spread. Short kernels also get a CUDA-graph replay figure,
// where launch overhead no longer dominates.
//
// Flush size: twice the L2 (the default, flushBytes 0), not a fixed 256 MiB. What must leave L2 is
// the previous run's lines; a buffer as large as the L2 is not enough because the replacement is not
// strict LRU and Hopper's L2 is two partitions that may each hold a copy of a line, so a 1x buffer
// can leave part of the old working set resident; 2x writes-then-reads every set more than once.
// Each flush costs about 2 x 2 x L2 bytes of DRAM traffic (~60 us on an H200 for 2 x 60 MiB), so a
// larger buffer only slows every repetition.
#include "core/verify/median_interval.h"
#include "core/verify/statistics.h"
#include "runner/device.h"
#include "runner/runner_kernels.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kl::runner {

struct TimingBudget {
    double warmupMs = 25.0;
    int minReps = 100;
    int maxReps = 2000;
    double budgetMs = 400.0; // for this measurement
    bool adaptive = false; // stop on the median's interval instead of spending the budget
    double halfWidth = 0.005; // adaptive: relative half-width of the median's 95% interval
    int adaptiveMinReps = 20;
};

struct Measurement {
    verify::SampleSummary summary; // microseconds
    std::vector<double> samplesUs;
    std::optional<double> graphMedianUs;
    verify::MedianInterval interval; // of samplesUs
    std::string stoppedBy; // "interval", "max-reps", "time-cap" (adaptive) or "budget" (fixed)
};

class Timer {
public:
    // flushBytes 0: twice the device's L2.
    Timer(const Device& device, const RunnerKernels& ownKernels, std::size_t flushBytes);

    // `work` enqueues one run on the device's stream and nothing else (no synchronisation).
    Measurement measure(const std::function<void()>& work, const TimingBudget& budget);
    // Median time of one run when `copies` runs are replayed as one graph (warm L2, no flush).
    double graphReplayMedian(const std::function<void()>& work, int copies = 20, int replays = 30);
    std::size_t flushBytes() const { return m_flush.bytes(); }
    // The same flush as before each timed run, then waits: for work outside timing (profiling).
    void flushCaches();

private:
    void flush();
    void timeBatch(const std::function<void()>& work, int runs, std::vector<double>& samplesUs);
    const Device& m_device;
    const RunnerKernels& m_ownKernels;
    DeviceBuffer m_flush;
    std::vector<EventPair> m_events;
    unsigned m_flushValue = 0;
};

} // namespace kl::runner
