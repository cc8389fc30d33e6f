#include "core/campaign/campaign_scheduler.h"

#include "core/model/error.h"
#include "core/store/campaign_store.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kl::campaign {

ProblemOutcome outcomeOf(const LoopSummary& summary)
{
    ProblemOutcome o;
    o.sessionId = summary.sessionId;
    if (summary.cancelled) {
        o.category = "cancelled";
        o.detail = "the campaign was stopped while the session ran";
    } else if (summary.best && summary.best->category == "passed") {
        o.status = "done";
        o.detail = summary.stopReason;
    } else if (summary.baseline && summary.baseline->category != "passed") {
        o.category = summary.baseline->category;
        o.detail = "the baseline did not pass: " + summary.baseline->detail;
    } else {
        o.category = "session.nothing-passed";
        o.detail = summary.stopReason;
    }
    return o;
}

CampaignScheduler::CampaignScheduler(std::filesystem::path store, std::int64_t campaignId,
    session::SessionRecipe recipe, std::vector<std::string> endpoints, RunProblem run, SchedulerOptions options)
    : m_store(std::move(store))
    , m_campaignId(campaignId)
    , m_recipe(std::move(recipe))
    , m_endpoints(std::move(endpoints))
    , m_run(std::move(run))
    , m_options(options)
{
}

namespace {

// What the workers share, under `mutex`: the record's own connection and the queue of pending problems.
struct Board {
    std::mutex mutex;
    std::condition_variable wake;
    store::CampaignStore record;
    std::vector<int> pending; // positions, in order
    std::map<int, std::string> problems; // position -> file
    std::map<int, std::set<std::string>> excluded; // endpoints a problem failed on for the runner's fault
    std::set<std::string> live; // endpoints still taking problems
    int running = 0;
    std::mutex eventMutex;
};

} // namespace

std::string CampaignScheduler::run(std::atomic<bool>* cancel)
{
    Board board { {}, {}, store::CampaignStore::open(m_store), {}, {}, {}, {}, 0, {} };
    for (const auto& p : board.record.problems(m_campaignId)) {
        board.problems[p.position] = p.problem;
        if (p.status == "pending")
            board.pending.push_back(p.position);
    }
    // Runners per worker: one each; with fewer problems to run than runners, the runners are shared out
    // among the problems so that none idles while a session could spread its candidates over it.
    const std::size_t workers
        = board.pending.empty() ? m_endpoints.size() : std::min(m_endpoints.size(), board.pending.size());
    std::map<std::string, std::vector<std::string>> runnersOf; // worker (its runners joined by "+") -> runners
    std::vector<std::string> names;
    {
        std::vector<std::vector<std::string>> groups(std::max<std::size_t>(1, workers));
        for (std::size_t i = 0; i < m_endpoints.size(); ++i)
            groups[i % groups.size()].push_back(m_endpoints[i]);
        for (auto& group : groups) {
            if (group.empty())
                continue;
            std::string name;
            for (const auto& e : group)
                name += (name.empty() ? "" : "+") + e;
            runnersOf[name] = std::move(group);
            names.push_back(name);
        }
    }
    board.live.insert(names.begin(), names.end());
    const auto tell = [&](const ProblemEvent& event) {
        if (!m_listener)
            return;
        std::lock_guard lock(board.eventMutex);
        m_listener(event);
    };
    const auto cancelled = [cancel] { return cancel && cancel->load(); };

    // The next problem this endpoint may take (with board.mutex held): one that has not failed here for
    // the runner's fault, unless no other live runner is left that it has not failed on.
    const auto next = [&](const std::string& endpoint) -> std::optional<int> {
        for (auto it = board.pending.begin(); it != board.pending.end(); ++it) {
            const auto& tried = board.excluded[*it];
            const bool elsewhere = std::any_of(board.live.begin(), board.live.end(),
                [&](const std::string& e) { return e != endpoint && !tried.count(e); });
            if (!tried.count(endpoint) || !elsewhere) {
                const int position = *it;
                board.pending.erase(it);
                return position;
            }
        }
        return std::nullopt;
    };

    const auto work = [&](const std::string& endpoint) {
        int faultsInRow = 0;
        for (;;) {
            int position = 0;
            {
                std::unique_lock lock(board.mutex);
                std::optional<int> taken;
                board.wake.wait(lock, [&] {
                    if (cancelled())
                        return true;
                    taken = next(endpoint);
                    // Nothing for this runner now; a problem running elsewhere may still be handed back.
                    return taken.has_value() || board.running == 0;
                });
                if (!taken || cancelled())
                    break;
                position = *taken;
                ++board.running;
                board.record.startProblem(m_campaignId, position, endpoint);
            }
            ProblemJob job;
            job.position = position;
            job.endpoint = endpoint;
            job.recipe = m_recipe;
            job.recipe.problem = board.problems[position];
            job.recipe.runners = runnersOf.at(endpoint);
            job.recipe.runnersFile.clear();
            tell({ ProblemEvent::Kind::Started, position, job.recipe.problem, endpoint, {} });
            ProblemOutcome outcome;
            try {
                outcome = m_run(
                    job,
                    [&](std::int64_t sessionId) {
                        std::lock_guard lock(board.mutex);
                        board.record.linkSession(m_campaignId, position, sessionId);
                    },
                    cancel);
            } catch (const Error& e) {
                outcome.category = e.category();
                outcome.detail = e.message();
            } catch (const std::exception& e) {
                outcome.category = "campaign.error";
                outcome.detail = e.what();
            }
            if (cancelled() && outcome.status != "done" && outcome.category.empty())
                outcome.category = "cancelled";
            bool retire = false;
            ProblemEvent::Kind kind = ProblemEvent::Kind::Finished;
            {
                std::lock_guard lock(board.mutex);
                --board.running;
                const std::optional<std::int64_t> session
                    = outcome.sessionId ? std::optional(outcome.sessionId) : std::nullopt;
                const bool runnersFault = outcome.status != "done" && outcome.category != "cancelled"
                    && store::retryableCategory(outcome.category);
                if (runnersFault) {
                    ++faultsInRow;
                    auto& tried = board.excluded[position];
                    tried.insert(endpoint);
                    const bool untried = std::any_of(
                        board.live.begin(), board.live.end(), [&](const std::string& e) { return !tried.count(e); });
                    if (untried && !cancelled()) {
                        kind = ProblemEvent::Kind::HandedBack;
                        board.pending.insert(board.pending.begin(), position);
                    }
                    retire = faultsInRow >= m_options.faultsBeforeRetiring && board.live.size() > 1;
                    if (retire)
                        board.live.erase(endpoint);
                } else {
                    faultsInRow = 0;
                }
                board.record.finishProblem(m_campaignId, position,
                    kind == ProblemEvent::Kind::HandedBack ? "pending" : outcome.status, outcome.category,
                    outcome.detail + (retire ? " (runner " + endpoint + " given up)" : ""), session);
            }
            board.wake.notify_all();
            tell({ kind, position, job.recipe.problem, endpoint, outcome });
            if (retire)
                break;
        }
        {
            std::lock_guard lock(board.mutex);
            board.live.erase(endpoint); // a problem handed back later is not held for this runner
        }
        board.wake.notify_all();
    };

    std::vector<std::thread> threads;
    for (const auto& name : names)
        threads.emplace_back(work, name);
    // Cancellation is watched here too: a worker waiting for work wakes to see it.
    std::thread watcher;
    std::atomic<bool> done { false };
    if (cancel)
        watcher = std::thread([&] {
            while (!done.load()) {
                if (cancel->load()) {
                    board.wake.notify_all();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
    for (auto& t : threads)
        t.join();
    done = true;
    if (watcher.joinable())
        watcher.join();

    const std::string status = cancelled() ? "cancelled" : board.pending.empty() ? "finished" : "incomplete";
    board.record.finish(m_campaignId, status);
    return status;
}

} // namespace kl::campaign
