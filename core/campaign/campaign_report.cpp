#include "core/campaign/campaign_report.h"

#include "core/figures/iteration_figures.h"
#include "core/model/error.h"
#include "core/model/geometric_mean.h"
#include "core/report/kernel_export.h"
#include "core/store/store.h"

#include <algorithm>
#include <filesystem>

namespace kl::campaign {

namespace {

std::string nameOfFile(const std::string& problem)
{
    std::filesystem::path p(problem);
    if (p.filename() == "problem.json")
        p = p.parent_path();
    return (p.has_stem() ? p.stem() : p.filename()).string();
}

std::optional<double> geomean(const std::vector<ProblemRow>& rows, std::optional<double> ProblemRow::*member, int& n)
{
    std::vector<std::optional<double>> values;
    for (const auto& r : rows)
        if (r.status == "done" && r.*member)
            values.push_back(r.*member);
    n = int(values.size());
    return geometricMean(values);
}

// The best iteration's figures, as `history` prints that iteration's row and its PyTorch line.
void readBest(const store::Store& store, ProblemRow& row)
{
    const auto session = store.session(row.sessionId);
    if (!session)
        return;
    row.name = session->problemName;
    const auto& summary = session->summary;
    const auto rows = store.listIterations(row.sessionId);
    row.baselineIsEager = !rows.empty()
        && std::none_of(rows.begin(), rows.end(), [](const auto& r) { return r.proposerDetail == "baseline"; });
    row.candidates = summary && summary->evaluated ? *summary->evaluated : int(rows.size());
    if (summary && summary->wallSeconds)
        row.seconds = *summary->wallSeconds;
    else if (session->endedMs)
        row.seconds = double(*session->endedMs - session->startedMs) / 1000.0;
    const auto best = report::bestIteration(store, row.sessionId);
    if (!best)
        return;
    row.bestIteration = *best;
    for (const auto& r : rows)
        if (r.index == *best) {
            row.medianUs = r.medianUs;
            row.speedup = r.speedup;
        }
    for (const auto& f : figures::readFigures(store, row.sessionId)) {
        if (f.index != *best)
            continue;
        row.vsEager = figures::speedupVsEager(f);
        row.vsCompile = figures::speedupVsCompile(f);
        if (!f.sizes.empty()) {
            row.pctOfSol = f.sizes.front().pctOfSol;
            row.bound = f.sizes.front().solBound;
            row.compute = f.sizes.front().compute;
            row.computeReason = f.sizes.front().computeReason;
            row.torchCompileError = f.sizes.front().torchCompileError;
        }
    }
}

} // namespace

FastP fastP(const std::vector<ProblemRow>& rows, std::optional<double> ProblemRow::*member, double threshold)
{
    FastP f;
    f.threshold = threshold;
    f.of = int(rows.size());
    f.fast = int(std::count_if(rows.begin(), rows.end(),
        [&](const ProblemRow& r) { return r.status == "done" && r.*member && *(r.*member) > threshold; }));
    return f;
}

CampaignFigures campaignFigures(const std::vector<ProblemRow>& rows)
{
    CampaignFigures c;
    c.problems = int(rows.size());
    for (const auto& r : rows) {
        if (r.status == "done")
            ++c.done;
        else if (r.status == "failed")
            ++c.failed;
        else
            ++c.unfinished;
    }
    c.fastEager1 = fastP(rows, &ProblemRow::vsEager, 1.0);
    c.fastEager12 = fastP(rows, &ProblemRow::vsEager, 1.2);
    c.fastCompile1 = fastP(rows, &ProblemRow::vsCompile, 1.0);
    c.fastCompile12 = fastP(rows, &ProblemRow::vsCompile, 1.2);
    c.geomeanVsEager = geomean(rows, &ProblemRow::vsEager, c.withEager);
    c.geomeanVsCompile = geomean(rows, &ProblemRow::vsCompile, c.withCompile);
    c.geomeanSpeedup = geomean(rows, &ProblemRow::speedup, c.withSpeedup);
    return c;
}

CampaignReport readReport(const store::CampaignStore& campaigns, const store::Store& sessions, std::int64_t campaignId)
{
    CampaignReport report;
    const auto campaign = campaigns.campaign(campaignId);
    if (!campaign)
        throw Error("store.unknown-campaign", sessions.path().string(), std::to_string(campaignId), "no such campaign");
    report.campaign = *campaign;
    for (const auto& p : campaigns.problems(campaignId)) {
        ProblemRow row;
        row.position = p.position;
        row.problem = p.problem;
        row.name = nameOfFile(p.problem);
        row.status = p.status;
        row.category = p.category;
        row.detail = p.detail;
        row.endpoint = p.endpoint;
        row.sessionId = p.sessionId.value_or(0);
        if (row.sessionId) {
            readBest(sessions, row);
            if (report.device.empty())
                for (const auto& [index, on] : sessions.sessionRunners(row.sessionId))
                    if (!on.model.empty()) {
                        report.device = on.model;
                        break;
                    }
        }
        report.rows.push_back(std::move(row));
    }
    report.figures = campaignFigures(report.rows);
    return report;
}

} // namespace kl::campaign
