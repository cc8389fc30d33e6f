#pragma once
// A campaign's report, read from the store: per problem the best kernel (the session's own best, as
// export-kernel and the GUI pick it) with its figures exactly as `history` shows them for that iteration
// (median, speedup over the baseline, over PyTorch eager and torch.compile timed in the same job, % of
// speed of light and which bound binds), candidates and time; a problem that failed is a row with its
// category. Over the campaign: fast_p as KernelBench defines it (the share of all the campaign's problems
// whose kernel passed and is faster than the contender by more than p; failures count as not fast) at
// p = 1.0 and 1.2, against eager and against torch.compile, and geometric means over the problems where
// the contender was timed.
#include "core/model/precision.h"
#include "core/store/campaign_store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::campaign {

struct ProblemRow {
    int position = 0;
    std::string problem; // as given
    std::string name; // the problem's name (its session's), else the file's stem
    std::string status; // done | failed | pending | running
    std::string category; // of a failure
    std::string detail;
    std::int64_t sessionId = 0; // 0: no session
    std::string endpoint;
    int bestIteration = 0; // 0: none passed
    std::optional<double> medianUs; // the best iteration's, first main size
    std::optional<double> speedup; // over the problem's baseline (geometric mean over main sizes)
    std::optional<double> vsEager; // over PyTorch eager, same job (geometric mean over main sizes)
    std::optional<double> vsCompile; // over torch.compile, same job
    std::string torchCompileError; // why torch.compile was not timed, where it was not
    std::optional<double> pctOfSol; // first main size
    std::optional<Bound> bound;
    std::optional<Precision> compute; // the ceiling %SOL holds the FLOPs to, and why
    std::optional<CeilingReason> computeReason;
    int candidates = 0; // evaluated in the session
    double seconds = 0.0; // the session's wall time
    bool baselineIsEager = false; // a problem with no kernel: the speedup is over eager
};

struct FastP {
    double threshold = 1.0;
    int fast = 0; // problems whose kernel passed and is faster than threshold x the contender
    int of = 0; // every problem of the campaign
    double share() const { return of > 0 ? double(fast) / of : 0.0; }
};

struct CampaignFigures {
    int problems = 0, done = 0, failed = 0, unfinished = 0;
    FastP fastEager1, fastEager12, fastCompile1, fastCompile12;
    std::optional<double> geomeanVsEager, geomeanVsCompile, geomeanSpeedup;
    int withEager = 0, withCompile = 0, withSpeedup = 0; // problems each geometric mean is over
};

// fast_p over `rows` against the contender `member` picks: `fast` counts done rows whose figure is
// > threshold (strictly, as KernelBench), `of` every row.
FastP fastP(const std::vector<ProblemRow>& rows, std::optional<double> ProblemRow::*member, double threshold);
CampaignFigures campaignFigures(const std::vector<ProblemRow>& rows);

struct CampaignReport {
    store::CampaignRecord campaign;
    std::string device; // the GPU model that measured the sessions; "" when none did
    std::vector<ProblemRow> rows;
    CampaignFigures figures;
};

// Throws "store.unknown-campaign".
CampaignReport readReport(const store::CampaignStore& campaigns, const store::Store& sessions, std::int64_t campaignId);

} // namespace kl::campaign
