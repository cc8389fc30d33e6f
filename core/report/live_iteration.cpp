#include "core/report/live_iteration.h"

#include "core/loop/store_records.h"
#include "core/store/runner_result.h"

namespace kl::report {

LiveIteration liveIteration(const IterationOutcome& o)
{
    LiveIteration live;
    store::IterationRow& row = live.row;
    row.index = o.index;
    row.round = o.round;
    row.candidateId = o.candidateId;
    row.proposer = storedProposer(o.proposer);
    row.proposerDetail = o.proposerDetail;
    row.hypothesis = o.hypothesis;
    row.predictedSpeedup = o.predictedSpeedup;
    row.state = o.state;
    row.lastDecision = o.decision;
    row.startedMs = o.startedMs;
    row.endedMs = o.endedMs;
    // What IterationRecorder stores as a result: every candidate that ran (or failed before the runner)
    // has one, a proposer's failure too; a proposal the engineer refused has none.
    const bool hasResult = o.state == "proposer-error" || (o.state == "done" && !o.category.empty());
    std::optional<store::ResultRecord> result;
    if (hasResult) {
        row.status = o.status;
        row.category = o.category;
        row.medianUs = o.medianUs;
        row.gbps = o.gbps;
        row.pctOfCopy = o.pctOfCopy;
        row.speedup = o.speedup;
        result = o.reply ? store::resultFromEvaluateResult(*o.reply) : store::ResultRecord {};
        result->status = o.status;
        result->category = o.category;
        result->endpoint = o.endpoint;
    }
    if (!o.findings.empty()) {
        const auto findings = findingRecords(o.findings);
        row.topFindingRule = findings.front().ruleId;
        row.topFindingMessage = findings.front().message;
    }
    live.figures = figures::figuresOf({ row, std::nullopt, std::nullopt, result, {}, {}, {} });
    if (hasResult) {
        live.figures.registers = o.statics.registers;
        live.figures.theoreticalOccupancy = o.statics.theoreticalOccupancy;
        live.figures.occupancyLimiter = o.statics.occupancyLimiter;
    }
    live.parentCandidateId = o.parentCandidateId;
    return live;
}

} // namespace kl::report
