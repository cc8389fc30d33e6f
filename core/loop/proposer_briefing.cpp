// What the proposer is told: the incumbent, the device, the history, the steering, earlier sessions.
#include "core/loop/proposer_briefing.h"

#include "core/findings/telemetry.h"
#include "core/model/precision.h"
#include "core/store/store.h"

#include <cstdio>

namespace kl {

DeviceLimits limitsOf(const protocol::DeviceDescription& d, const std::string& arch)
{
    auto limits = DeviceLimits::forArch(arch);
    limits.name = d.name;
    if (d.smCount > 0)
        limits.smCount = d.smCount;
    if (d.sharedPerSm > 0)
        limits.sharedPerSm = d.sharedPerSm;
    if (d.sharedPerBlock > 0)
        limits.sharedPerBlock = d.sharedPerBlock;
    if (d.sharedPerBlockOptin > 0)
        limits.sharedPerBlockOptin = d.sharedPerBlockOptin;
    if (d.registersPerSm > 0)
        limits.registersPerSm = int(d.registersPerSm);
    if (d.maxThreadsPerSm > 0)
        limits.maxThreadsPerSm = d.maxThreadsPerSm;
    if (d.maxBlocksPerSm > 0)
        limits.maxBlocksPerSm = d.maxBlocksPerSm;
    if (d.l2Bytes > 0)
        limits.l2Bytes = d.l2Bytes;
    return limits;
}

ProposerBriefing::ProposerBriefing(const Problem& problem)
    : m_problem(problem)
{
}

void ProposerBriefing::setDevice(const protocol::DeviceDescription& device, const DeviceLimits& limits)
{
    m_device = device;
    m_limits = limits;
}

void ProposerBriefing::readExamples(const store::Store& store, std::int64_t sessionId)
{
    m_examples.clear();
    for (const auto& row : store.bestVerifiedCandidates(m_problem.name, { sessionId }, 3)) {
        char text[64];
        std::snprintf(text, sizeof text, "%.2fx over its baseline", row.speedup);
        std::string summaryText = text;
        if (row.pctOfCopy) {
            std::snprintf(text, sizeof text, ", %.0f%% of a same-size copy", *row.pctOfCopy);
            summaryText += text;
        }
        m_examples.push_back({ row.problemName, summaryText + ", verified", row.source, row.speedup });
    }
}

ProposalContext ProposerBriefing::context(const Incumbent& best, int round, int remaining, bool withHistory) const
{
    ProposalContext ctx;
    ctx.problem = &m_problem;
    ctx.iteration = round;
    ctx.best = best.proposal.candidate;
    ctx.bestTunables = best.proposal.tunables;
    ctx.bestSourceHash = best.outcome.sourceHash;
    ctx.bestMedianUs = best.outcome.medianUs;
    ctx.bestSpeedup = best.outcome.speedup;
    if (m_baseline)
        ctx.baselineMedianUs = *m_baseline;
    else if (best.outcome.medianUs && best.outcome.speedup) // PyTorch eager's, from the best's own job
        ctx.baselineMedianUs = *best.outcome.medianUs * *best.outcome.speedup;
    ctx.bestStatic = best.statics;
    ctx.bestFindings = best.outcome.findings;
    ctx.bestGbps = best.outcome.gbps;
    ctx.bestPctOfCopy = best.outcome.pctOfCopy;
    ctx.bestPctOfSol = best.outcome.pctOfSol;
    ctx.bestSolBound = best.outcome.solBound ? std::string(boundName(*best.outcome.solBound)) : std::string();
    ctx.hardware.name = m_device.name;
    ctx.hardware.arch = m_problem.arch;
    ctx.hardware.smCount = m_device.smCount;
    ctx.hardware.l2Bytes = m_device.l2Bytes;
    ctx.hardware.sharedPerSm = m_device.sharedPerSm;
    ctx.hardware.sharedPerBlockOptIn = m_limits.sharedPerBlockOptin;
    ctx.hardware.registersPerSm = m_limits.registersPerSm;
    ctx.hardware.maxWarpsPerSm = m_limits.maxThreadsPerSm / m_limits.warpSize;
    ctx.hardware.smClockMhz = m_device.smClockMhz;
    ctx.hardware.copyGbps = m_device.copyBandwidthGbps;
    const ComputeCeiling computeCeiling = m_problem.computeCeiling();
    const Precision precision = computeCeiling.precision;
    ctx.hardware.fp32Tflops = peakFp32Tflops(m_device.smCount, m_device.smClockMhz, m_device.computeCapability);
    ctx.hardware.peakTflops
        = ceilingTflops(precision, m_device.computeCapability, m_device.smCount, m_device.smClockMhz);
    if (ctx.hardware.peakTflops <= 0)
        ctx.hardware.peakTflops = ctx.hardware.fp32Tflops;
    else {
        ctx.hardware.precision = precisionLabel(precision);
        ctx.hardware.precisionWhy = ceilingReasonText(computeCeiling.reason);
    }
    ctx.hardware.measuredTensorTflops = m_device.tensorFp16Tflops;
    ctx.steering = m_steering;
    ctx.remainingBudget = remaining;
    ctx.examples = m_examples;
    if (withHistory)
        ctx.history = m_history;
    return ctx;
}

EvaluatedProposal historyEntry(const IterationOutcome& o, std::string rejection)
{
    EvaluatedProposal h;
    h.iteration = o.index;
    h.proposer = o.proposer;
    h.sourceHash = o.sourceHash;
    h.tunables = o.tunables;
    h.hypothesis = o.hypothesis;
    h.category = o.category;
    h.detail = o.detail;
    h.medianUs = o.medianUs;
    h.speedup = o.speedup;
    h.kept = o.kept;
    h.findings = o.findings;
    h.rejection = std::move(rejection);
    return h;
}

} // namespace kl
