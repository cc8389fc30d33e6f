// The memory system and the roofline: where the kernel sits between measured copy bandwidth and
// peak FLOP/s, how far under its ceiling it runs, and what the counters say about DRAM, L2 and
// shared memory.
#include "core/findings/rules.h"

#include <algorithm>

namespace kl::rules {

namespace {

using S = Finding::Severity;

void rooflinePosition(Context& c)
{
    const auto r = roofline(c.t, c.th);
    if (!r)
        return;
    const char* id = r->bound == Bound::Memory ? "roofline.memory-bound"
        : r->bound == Bound::Compute           ? "roofline.compute-bound"
                                               : "roofline.balanced";
    const std::string where = r->bound == Bound::Memory ? "memory-bound"
        : r->bound == Bound::Compute                    ? "compute-bound"
                                                        : "near the ridge point";
    auto& f = add(c, id, S::Info, 0.0,
        where + ": " + num(r->intensity, 1) + " FLOP/byte against a ridge point of " + num(r->ridge, 1) + " FLOP/byte",
        "The ridge point is peak FLOP/s divided by the measured copy bandwidth; below it the bytes "
        "moved set the time, above it the arithmetic does.");
    f.evidence["arithmetic_intensity"] = r->intensity;
    f.evidence["ridge_point"] = r->ridge;
    f.evidence["copy_gbps"] = *c.t.copyGbps;
    f.evidence["peak_tflops"] = c.t.peakTflops;
    if (r->bound == Bound::Compute) {
        f.directions = { "cheaper arithmetic: fewer transcendentals, packed half2, tensor cores where they fit" };
    } else {
        f.directions = { "move fewer bytes: fuse neighbouring operators, keep data on chip, narrower types",
            "then keep enough bytes in flight to reach the copy ceiling" };
    }
}

void bandwidth(Context& c)
{
    const auto pct = positive(c.t.pctOfCopy);
    if (!pct || !notComputeBound(c.t, c.th))
        return;
    std::string figures = "bandwidth " + num(*pct) + "% of the same-size copy";
    if (c.t.gbps && c.t.copyGbps)
        figures += " (" + num(*c.t.gbps) + " of " + num(*c.t.copyGbps) + " GB/s)";
    if (*pct >= c.th.bandwidthGoodPct) {
        auto& f = add(c, "bandwidth.at-ceiling", S::Info, 0.0, figures + ": at the memory roofline",
            "Little is left to gain by moving the same bytes faster; only moving fewer bytes helps.");
        f.evidence["pct_of_copy"] = *pct;
        f.directions = { "move fewer bytes (fusion, narrower types, no re-reads) or stop here" };
        f.tunerHints = { hint::kFewerBytes };
        return;
    }
    const auto severity = *pct < c.th.bandwidthCriticalPct ? S::Critical
        : *pct < c.th.bandwidthLowPct                      ? S::Warning
                                                           : S::Info;
    auto& f = add(c, "bandwidth.under-ceiling", severity, 1.0 - *pct / 100.0, figures,
        severity == S::Info
            ? "Some headroom is left under the copy ceiling; more bytes in flight per SM may close it."
            : "A memory-bound kernel this far under the copy ceiling has too few bytes in flight per SM: "
              "DRAM latency is not hidden.");
    f.evidence["pct_of_copy"] = *pct;
    if (c.t.gbps)
        f.evidence["gbps"] = *c.t.gbps;
    if (c.t.copyGbps)
        f.evidence["copy_gbps"] = *c.t.copyGbps;
    f.directions = { "wider loads: 16 bytes per thread per load (8 halves)",
        "more independent loads per thread issued before their first use",
        "more rows per block or more resident blocks per SM, so each SM keeps more requests outstanding" };
    f.tunerHints = { hint::kWiderVectors, hint::kMoreBytesInFlight, hint::kMoreRowsPerBlock };
}

void computeCeiling(Context& c)
{
    const auto r = roofline(c.t, c.th);
    const auto tflops = positive(c.t.tflops);
    if (!r || r->bound != Bound::Compute || !tflops)
        return;
    const double pct = 100.0 * *tflops / c.t.peakTflops;
    if (pct >= c.th.computeLowPct)
        return;
    // The precision's ceiling (FP16 tensor for an fp16 GEMM), FP32 CUDA cores where it is unknown.
    const std::string peak = c.t.precision ? std::string(precisionLabel(*c.t.precision)) + " peak" : "peak";
    auto& f = add(c, "compute.under-ceiling", S::Warning, 1.0 - pct / 100.0,
        "compute " + num(pct) + "% of " + peak + " (" + num(*tflops, 1) + " of " + num(c.t.peakTflops, 1) + " TFLOP/s)",
        "The kernel is compute-bound by its arithmetic intensity but issues math far below the peak.");
    f.evidence["pct_of_peak"] = pct;
    f.evidence["tflops"] = *tflops;
    f.evidence["peak_tflops"] = c.t.peakTflops;
    // A kernel already issuing MMAs is told how to feed them, not to start using them.
    const bool issuesMma = c.t.tensorInstructions && c.t.tensorInstructions->count > 0;
    f.directions = { "more independent math per thread (ILP) and fewer address and control instructions",
        issuesMma ? "feed the tensor cores: larger tiles staged through shared memory, more pipeline stages, "
                    "fragments reused across several MMAs"
                  : "use the wider pipes: packed half2 FMA, tensor cores" };
    f.tunerHints = { hint::kMoreIlp, hint::kMoreWorkPerThread, hint::kLargerTiles };
}

void dram(Context& c)
{
    const auto pct = c.t.percent(metric::kDramThroughput);
    if (!pct || !notComputeBound(c.t, c.th) || *pct >= c.th.dramLowPct)
        return;
    const auto median = positive(c.t.medianUs);
    if (median && *median < c.th.tinyKernelUs)
        return; // a launch-bound kernel never ramps DRAM up; launch.tiny-kernel says why
    auto& f = add(c, "dram.low-throughput", S::Warning, 0.8 * (1.0 - *pct / 100.0),
        "DRAM throughput " + num(*pct) + "% of peak",
        "DRAM serves far fewer bytes per second than it can: the memory system is mostly idle, waiting for requests.");
    f.evidence["dram_throughput_pct"] = *pct;
    f.directions = { "more bytes in flight per SM: 16-byte loads, several independent loads per thread",
        "more resident warps or rows per block" };
    f.tunerHints = { hint::kMoreBytesInFlight, hint::kWiderVectors };
}

std::optional<double> dramBytes(const Telemetry& t)
{
    const auto r = t.metric(metric::kDramBytesRead), w = t.metric(metric::kDramBytesWrite);
    if (!r && !w)
        return std::nullopt;
    return r.value_or(0) + w.value_or(0);
}

void excessTraffic(Context& c)
{
    const auto moved = positive(dramBytes(c.t)), bytes = positive(c.t.bytes);
    if (!moved || !bytes || *moved / *bytes < c.th.dramExcessRatio)
        return;
    const double ratio = *moved / *bytes;
    auto& f = add(c, "memory.excess-dram-traffic", S::Warning, std::min(0.9, (ratio - 1.0) / ratio),
        "DRAM moved " + num(ratio, 2) + "× the problem's bytes (" + num(*moved / 1e6, 1) + " of " + num(*bytes / 1e6, 1)
            + " MB)",
        "Data is read or written more than once per call: re-reads that missed L2, spills, or a byte "
        "count in the problem that is too low.");
    f.evidence["dram_bytes"] = *moved;
    f.evidence["problem_bytes"] = *bytes;
    f.evidence["ratio"] = ratio;
    f.directions = { "keep the row or tile in registers or shared memory between passes instead of re-reading it",
        "check the problem's bytes expression" };
    f.tunerHints = { hint::kReuseOnChip };
}

void l2(Context& c)
{
    const auto hit = c.t.percent(metric::kL2HitRate);
    if (!hit || *hit >= c.th.l2HitLowPct)
        return;
    const auto moved = positive(dramBytes(c.t)), bytes = positive(c.t.bytes);
    if (moved && bytes && *moved / *bytes <= c.th.l2StreamingRatio)
        return; // each byte crossed DRAM once: nothing to reuse, a low hit rate is expected
    auto& f = add(c, "cache.l2-hit-rate-low", S::Info, 0.2 * (1.0 - *hit / 100.0), "L2 hit rate " + num(*hit) + "%",
        "Most L2 requests went to DRAM. That is right for data read once; for data read again it means "
        "the reuse happens too far apart in time.");
    f.evidence["l2_hit_rate_pct"] = *hit;
    if (moved)
        f.evidence["dram_bytes"] = *moved;
    f.directions = { "bring reuses closer together: block ordering (swizzled tiles) so neighbours share data in L2",
        "or keep the reused data on chip" };
    f.tunerHints = { hint::kReuseOnChip };
}

void bankConflicts(Context& c)
{
    const auto& t = c.t;
    const auto ld = t.metric(metric::kSharedLoadConflicts), st = t.metric(metric::kSharedStoreConflicts);
    if (!ld && !st)
        return;
    const double conflicts = ld.value_or(0) + st.value_or(0);
    if (!(conflicts > 0))
        return;
    const auto wl = t.metric(metric::kSharedLoadWavefronts), ws = t.metric(metric::kSharedStoreWavefronts);
    const auto il = t.metric(metric::kSharedLoads), is = t.metric(metric::kSharedStores);
    std::optional<double> share;
    std::string per;
    if (wl || ws) {
        const double wavefronts = wl.value_or(0) + ws.value_or(0);
        share = wavefronts > 0 ? conflicts / wavefronts : 1.0;
        per = num(*share * 100) + "% of shared wavefronts";
    } else if (il || is) {
        const double requests = il.value_or(0) + is.value_or(0);
        share = requests > 0 ? conflicts / requests : 1.0;
        per = num(*share, 2) + " extra wavefronts per shared instruction";
    }
    if (share ? *share < c.th.bankConflictShare : conflicts < c.th.bankConflictsAbsolute)
        return;
    auto& f = add(c, "shared.bank-conflicts", share ? S::Warning : S::Info, share ? std::min(0.9, *share) : 0.1,
        "shared-memory bank conflicts: " + count(conflicts) + (share ? " (" + per + ")" : std::string()),
        "Threads of a warp hit the same bank at different addresses, so each shared access is "
        "replayed as several wavefronts.");
    f.evidence["bank_conflicts"] = conflicts;
    if (share)
        f.evidence["conflict_share"] = *share;
    f.directions = { "pad shared arrays (e.g. [32][33]) or swizzle the index so a warp's addresses spread over banks",
        "have consecutive threads access consecutive 4-byte words",
        "use 8- or 16-byte shared accesses laid out for them" };
    f.tunerHints = { hint::kPadShared };
}

void latencyBound(Context& c)
{
    const auto sm = c.t.percent(metric::kSmThroughput), mem = c.t.percent(metric::kMemoryThroughput);
    if (!sm || !mem || *sm >= c.th.latencyBoundPct || *mem >= c.th.latencyBoundPct)
        return;
    auto& f = add(c, "throughput.latency-bound", S::Warning, 0.5 * (1.0 - std::max(*sm, *mem) / 100.0),
        "latency-bound: compute " + num(*sm) + "% and memory " + num(*mem) + "% of peak",
        "Neither the SMs nor the memory system is busy: warps spend their time waiting, and there is "
        "not enough parallel work to cover it.");
    f.evidence["sm_throughput_pct"] = *sm;
    f.evidence["memory_throughput_pct"] = *mem;
    f.directions = { "more parallel work: more resident warps, more independent loads and math per warp",
        "the dominant stall reason says what the warps wait for" };
    f.tunerHints = { hint::kMoreBytesInFlight, hint::kMoreIlp };
}

} // namespace

void memoryRules(Context& c)
{
    rooflinePosition(c);
    bandwidth(c);
    computeCeiling(c);
    dram(c);
    excessTraffic(c);
    l2(c);
    bankConflicts(c);
    latencyBound(c);
}

} // namespace kl::rules
