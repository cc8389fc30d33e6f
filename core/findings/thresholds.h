#pragma once
// Every number the findings rules compare against, in one table. Percentages are 0..100,
// occupancies and shares 0..1. The defaults are tuned for Hopper (H200) and for the kind of
// kernels KernelLoop works on (memory-bound fused operators, small GEMM-like kernels); change
// them per session when a problem needs it, never inside a rule.
namespace kl {

struct FindingThresholds {
    // occupancy.<limiter>-limited: theoretical occupancy below this is reported ...
    double occupancyLow = 0.50;
    // ... and below this it is critical.
    double occupancyCritical = 0.25;
    // A kernel already at this % of the copy ceiling gains little from occupancy: Info only.
    double bandwidthGoodPct = 85.0;

    // occupancy.achieved-below-theoretical: achieved / theoretical under this ratio ...
    double achievedOccupancyRatio = 0.80;
    // ... and at least this many percentage points apart (avoids noise at low occupancy).
    double achievedOccupancyGapPct = 10.0;

    // local-memory.spills: spill bytes (stores + loads) from this many on are critical.
    double spillBytesCritical = 256.0;
    // local-memory.traffic: local instructions as a share of all instructions (when
    // smsp__inst_executed.sum is known) from which it is a warning rather than Info.
    double localInstructionShareWarning = 0.01;

    // roofline.*: a kernel within this factor of the ridge point is called balanced.
    double ridgeBalanceFactor = 1.25;
    // bandwidth.under-ceiling: memory-bound and under this % of the same-size copy: Warning ...
    double bandwidthLowPct = 60.0;
    // ... under this: Critical ...
    double bandwidthCriticalPct = 30.0;
    // ... and from bandwidthLowPct up to bandwidthGoodPct: Info (room left). At or above
    // bandwidthGoodPct: bandwidth.at-ceiling.
    // compute.under-ceiling: compute-bound and under this % of peak FLOP/s.
    double computeLowPct = 50.0;
    // compute.tensor-pipe: from this % busy the pipe is fed (Info); under it, and under computeLowPct of
    // SOL, a warning.
    double tensorPipeBusyPct = 60.0;

    // dram.low-throughput: gpu__dram_throughput % under this on a memory-bound kernel.
    double dramLowPct = 60.0;
    // memory.excess-dram-traffic: DRAM bytes / the problem's bytes from this ratio on.
    double dramExcessRatio = 1.25;
    // throughput.latency-bound: SM and memory throughput % both under this (Nsight Compute's
    // speed-of-light guidance uses 60%).
    double latencyBoundPct = 60.0;

    // waves.tail-effect: the partial last wave wastes at least this share of the run time ...
    double tailLossShare = 0.10;
    // grid.too-few-blocks: fewer blocks than SMs is critical; fewer than one full wave
    // (SMs x blocks/SM) times this factor is a warning.
    double fullWaveFactor = 1.0;

    // launch.tiny-kernel: median under this many microseconds.
    double tinyKernelUs = 5.0;
    // launch.graph-faster: plain-launch median / graph-replay median from this ratio on.
    double graphSpeedupRatio = 1.3;

    // cache.l2-hit-rate-low: lts__t_sector_hit_rate under this % ...
    double l2HitLowPct = 50.0;
    // ... unless DRAM moved no more than this multiple of the problem's bytes (streaming once
    // is optimal; a low hit rate is then expected).
    double l2StreamingRatio = 1.10;

    // shared.bank-conflicts: conflicts / shared wavefronts (or per shared instruction) ...
    double bankConflictShare = 0.10;
    // ... and without any denominator, an absolute count reported as Info.
    double bankConflictsAbsolute = 100000.0;

    // stall.<reason>: a reason's share of all stall cycles from this on is reported ...
    double stallShareMin = 0.20;
    // ... as a warning from this share on ...
    double stallShareWarning = 0.40;
    // ... and at most this many reasons.
    int stallReasonsMax = 2;

    // timing.noisy: coefficient of variation from this on (Info) ...
    double noisyCv = 0.05;
    // ... and from this on a warning.
    double noisyCvWarning = 0.15;
};

inline const FindingThresholds& defaultThresholds()
{
    static const FindingThresholds thresholds;
    return thresholds;
}

} // namespace kl
