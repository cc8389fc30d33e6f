#pragma once
// A campaign's problems run as sessions over the runner pool: one worker per runner endpoint, each
// taking the next pending problem and running its session on that one runner, so that the problems
// run side by side, one per GPU (with fewer problems left than runners, the runners are shared out among
// them at the start, and each session spreads its k candidates over its share). Every problem ends as a row of the
// campaign record (core/store/campaign_store.h): done, or failed with the category of what failed (import, compile,
// verification, the start kernel). A problem that failed for its runner's fault (runner.*) is handed
// to another runner; a runner that fails `faultsBeforeRetiring` problems in a row is given up while
// others remain. Rows are committed as problems start and end, so a killed campaign resumes from
// them (CampaignStore::resume) without running a finished problem again.
//
// How one problem's session is assembled and run is not the scheduler's business: it calls a
// RunProblem (the session runner of core/session), which makes this testable and keeps one copy of
// session assembly.
#include "core/loop/loop_values.h"
#include "core/session/session_recipe.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kl::campaign {

// One problem's session: the campaign's recipe with this problem and its runner: one endpoint, or, when a
// campaign has fewer problems left than runners, a share of them ("local:0+local:2") over which the
// session spreads its candidates.
struct ProblemJob {
    int position = 0;
    std::string endpoint; // the worker's runners joined by "+": "local:1", "local:0+local:2"
    session::SessionRecipe recipe; // problem set; runners: the endpoints of `endpoint`
};

struct ProblemOutcome {
    std::int64_t sessionId = 0; // 0: none was created (an import or start failure, no runner)
    std::string status = "failed"; // "done": a kernel passed and was kept; "failed"
    std::string category; // of a failure
    std::string detail;
};

// What a finished session says about its problem: done when it kept a kernel that passed; failed with
// the baseline's category when the baseline did not pass; cancelled; else nothing passed.
ProblemOutcome outcomeOf(const LoopSummary& summary);

// Runs one problem's session to its end and says how it went; calls `started` with the session's id
// once it exists. May throw kl::Error (an import, a start kernel, a runner that cannot start): the
// scheduler makes a failed row of its category.
using RunProblem = std::function<ProblemOutcome(
    const ProblemJob& job, const std::function<void(std::int64_t)>& started, std::atomic<bool>* cancel)>;

// Told on the workers' threads as problems start and end (one call at a time).
struct ProblemEvent {
    enum class Kind { Started, Finished, HandedBack };
    Kind kind = Kind::Started;
    int position = 0;
    std::string problem;
    std::string endpoint;
    ProblemOutcome outcome; // Finished, HandedBack
};

struct SchedulerOptions {
    int faultsBeforeRetiring = 2;
};

class CampaignScheduler {
public:
    // `recipe`: every problem's (its problem and runners are set per job). `endpoints`: one worker each.
    CampaignScheduler(std::filesystem::path store, std::int64_t campaignId, session::SessionRecipe recipe,
        std::vector<std::string> endpoints, RunProblem run, SchedulerOptions options = {});

    void onEvent(std::function<void(const ProblemEvent&)> listener) { m_listener = std::move(listener); }

    // Runs the campaign's pending problems and records its status: "finished" (no problem pending),
    // "cancelled", or "incomplete" (every runner was given up with problems left). Returns it.
    std::string run(std::atomic<bool>* cancel = nullptr);

private:
    std::filesystem::path m_store;
    std::int64_t m_campaignId;
    session::SessionRecipe m_recipe;
    std::vector<std::string> m_endpoints;
    RunProblem m_run;
    SchedulerOptions m_options;
    std::function<void(const ProblemEvent&)> m_listener;
};

} // namespace kl::campaign
