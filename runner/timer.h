#pragma once
// Step 3 of evaluate: device-event timing with a cold L2. Before every timed run the stream
// writes a buffer of twice the L2 (cuMemsetD32Async) and reads it back, then the start event, the
// work, the end event: the events enclose the launches only. The read matters: after a memset
// alone L2 is full of dirty lines and the timed kernel pays for writing them back, which Nsight
// Compute's flushed-and-invalidated caches do not charge. On an H200, layernorm_gelu's baseline
// (71.1 us in ncu) read 76.9 us with a memset-only flush (as triton's do_bench: 77-78 us) and
// 72.6 us with the read-back. Warm-up first, then at
// least min_reps runs or as many as the time budget allows, summarised by median and spread. Short kernels also get a
// CUDA-graph replay figure, where launch overhead no longer dominates.
#include "core/verify/statistics.h"
#include "runner/device.h"
#include "runner/helper_kernels.h"

#include <functional>
#include <optional>
#include <vector>

namespace kl::runner {

struct TimingBudget {
    double warmupMs = 25.0;
    int minReps = 100;
    int maxReps = 2000;
    double budgetMs = 400.0; // for this measurement
};

struct Measurement {
    verify::SampleSummary summary; // microseconds
    std::vector<double> samplesUs;
    std::optional<double> graphMedianUs;
};

class Timer {
public:
    // flushBytes 0: twice the device's L2.
    Timer(const Device& device, const HelperKernels& helpers, std::size_t flushBytes);

    // `work` enqueues one run on the device's stream and nothing else (no synchronisation).
    Measurement measure(const std::function<void()>& work, const TimingBudget& budget);
    // Median time of one run when `copies` runs are replayed as one graph (warm L2, no flush).
    double graphReplayMedian(const std::function<void()>& work, int copies = 20, int replays = 30);
    std::size_t flushBytes() const { return m_flush.bytes(); }
    // The same flush as before each timed run, then waits: for work outside timing (profiling).
    void flushCaches();

private:
    void flush();
    const Device& m_device;
    const HelperKernels& m_helpers;
    DeviceBuffer m_flush;
    std::vector<EventPair> m_events;
    unsigned m_flushValue = 0;
};

} // namespace kl::runner
