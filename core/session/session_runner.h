#pragma once
// One session runner for every front end: a recipe becomes a running session here (its problem, the
// store, the runners (a pool of the recipe's endpoints, or the local runner), the proposer with its
// start, the review gate, the engineer's controls) and runs to its typed summary. The CLI's `tune` and
// `evaluate`, the window's LiveSession and a campaign's problems are thin adapters over it: they
// subscribe to events() before run() and call the controls from their own threads.
#include "core/llm/chat_client.h"
#include "core/loop/loop_events.h"
#include "core/loop/loop_values.h"
#include "core/loop/tuning_session.h"
#include "core/pool/runner_pool.h"
#include "core/session/session_recipe.h"

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace kl::session {

class AnsweredReview;
class EngineerProposer;

struct SessionSetup {
    SessionRecipe recipe;
    std::filesystem::path store; // resolved (the recipe's db, $KERNELLOOP_DB or the default)
    std::filesystem::path localRunner; // resolved: the local runner's path, or a command line that starts it
    std::optional<EndpointConfig> llm; // with its key (loaded by the front end): llm and llm+tuner
    // Set: evaluate this one candidate (proposer "human") instead of the loop: into stored session
    // `appendTo` of the store (its next iteration) or, when 0, in a session of its own. Its tunables
    // are applied by Candidate::withOverrides (a name it does not declare, a value outside its set:
    // refused before anything starts).
    std::optional<Candidate> only;
    TunableValues onlyTunables;
    std::int64_t appendTo = 0;
    // Review mode's gate: the front end's own (a terminal prompt); null: answerReview() answers.
    ReviewGate* reviewGate = nullptr;
    // The flag that cancels the session (a signal handler's, a campaign's); null: the runner's own.
    // stop() sets it either way.
    std::atomic<bool>* cancel = nullptr;
    // Where the session starts, said once (core/propose/starting_kernel.h); on the running thread.
    std::function<void(const std::string&)> note;
    // Each proposal's LLM tokens, after its streamed text; on the loop's thread.
    std::function<void(std::int64_t)> tokens;
    // The engineer's pause taken hold (true: the loop waits before its next proposal) or let go (false):
    // each change of holding(), in order; on the loop's thread or setPaused's caller's, under the
    // proposer's lock (it must not call the runner back). What a front end shows instead of polling.
    std::function<void(bool)> hold;
};

// `recipe` run on one runner endpoint ("local:2", "ssh:host:0", "slurm:ARGS", "cmd:..."), as a campaign
// runs each of its problems: the recipe's own runners replaced by it.
SessionSetup onEndpoint(SessionRecipe recipe, const std::string& endpoint);

class SessionRunner {
public:
    explicit SessionRunner(SessionSetup setup);
    ~SessionRunner();
    SessionRunner(const SessionRunner&) = delete;
    SessionRunner& operator=(const SessionRunner&) = delete;

    // The loop's events (loop_events.h): subscribe before run(). The proposer's streamed text too.
    LoopEvents& events() { return *m_events; }

    // Assembles the session and runs it: the loop, or the one candidate of the setup. Once. Throws
    // kl::Error when it cannot run (a bad problem, endpoint or candidate, "runner.no-device" before
    // anything is stored, "problem.no-kernel", "session.*" of evaluateInto); a session that ran
    // returns its summary, cancelled included.
    LoopSummary run();

    // Controls: any thread, before or while run() runs.
    void setPaused(bool paused);
    bool paused() const;
    bool holding() const; // paused and waiting: the candidate in flight has finished
    // Cancels: the runner's job in flight is killed, a waiting review is refused with `reason`, a
    // paused loop wakes; committed iterations stay.
    void stop(const std::string& reason = "the engineer stopped the session");
    bool cancelled() const { return m_cancel->load(); }
    void extendBudget(int rounds); // no effect on a session without a budget
    bool answerReview(ReviewDecision decision); // false when no proposal waits
    bool reviewWaiting() const;
    // The engineer's candidate, run before the next proposal. Its tunables are applied here by
    // Candidate::withOverrides (throws candidate.unknown-tunable / candidate.value-not-allowed).
    void addCandidate(const Candidate& candidate, const TunableValues& tunables);
    // "Continue from here" (TuningSession::continueFrom). False while no loop runs.
    bool continueFrom(int iterationIndex);

    // The runners, one row per endpoint: live while the loop runs, the last rows once it ended.
    std::vector<pool::RunnerStatus> poolStatus() const;
    // The local runner's process (no endpoints named): from the session's start to its end; -1 otherwise.
    pid_t localRunnerPid() const { return m_runnerPid.load(); }

private:
    LoopSummary runAssembled();

    SessionSetup m_setup;
    std::atomic<bool> m_ownCancel { false };
    std::atomic<bool>* m_cancel;
    std::shared_ptr<LoopEvents> m_events = std::make_shared<LoopEvents>();
    std::unique_ptr<AnsweredReview> m_answers;
    std::unique_ptr<EngineerProposer> m_proposer;
    std::atomic<pid_t> m_runnerPid { -1 };
    mutable std::mutex m_mutex;
    TuningSession* m_session = nullptr; // while the loop runs, under m_mutex
    pool::RunnerPool* m_pool = nullptr; // while the loop runs, under m_mutex
    std::vector<pool::RunnerStatus> m_lastPoolStatus; // once it ended, under m_mutex
    int m_pendingExtension = 0; // asked for before the loop began, under m_mutex
    bool m_ran = false;
};

// One session from a setup to its summary, no controls: what a campaign runs per problem.
LoopSummary runSession(SessionSetup setup);

} // namespace kl::session
