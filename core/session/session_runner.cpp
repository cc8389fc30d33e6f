// A recipe assembled into a running session (problem, store, runners, proposer, gate) and run.
#include "core/session/session_runner.h"

#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/pool/runner_endpoint.h"
#include "core/runnerclient/runner_client.h"
#include "core/session/answered_review.h"
#include "core/session/engineer_proposer.h"
#include "core/store/store.h"

namespace kl::session {

SessionSetup onEndpoint(SessionRecipe recipe, const std::string& endpoint)
{
    recipe.runners = { endpoint };
    recipe.runnersFile.clear();
    SessionSetup setup;
    setup.recipe = std::move(recipe);
    return setup;
}

SessionRunner::SessionRunner(SessionSetup setup)
    : m_setup(std::move(setup))
    , m_cancel(m_setup.cancel ? m_setup.cancel : &m_ownCancel)
    , m_answers(std::make_unique<AnsweredReview>())
    , m_proposer(std::make_unique<EngineerProposer>(m_setup.tokens, m_setup.hold))
{
}

SessionRunner::~SessionRunner() = default;

LoopSummary SessionRunner::run()
{
    if (m_ran)
        throw Error("session.ran", {}, {}, "a session runner runs its session once");
    m_ran = true;
    return runAssembled();
}

LoopSummary SessionRunner::runAssembled()
{
    const auto& recipe = m_setup.recipe;
    const Problem problem = loadRecipeProblem(recipe);
    const auto tunables = m_setup.only ? m_setup.only->withOverrides(m_setup.onlyTunables) : TunableValues {};
    // The recipe's runners (bad endpoints fail before anything starts); none named: the local runner of
    // recipe.device, held here so that its process can be shown.
    auto config = loopConfig(recipe);
    if (m_setup.only)
        config.proposerDetail = "human";
    std::unique_ptr<RunnerClient> local;
    std::unique_ptr<pool::RunnerPool> runners;
    if (!recipe.runners.empty() || !recipe.runnersFile.empty()) {
        auto options = poolOptions(recipe, m_setup.localRunner);
        options.endpoints.base.defaultJobTimeout = config.jobTimeout;
        if (problem.pythonReference) // its worker starts with the runner, while the baseline compiles
            options.endpoints.base.extraArgs.push_back("--python-worker");
        runners = std::make_unique<pool::RunnerPool>(runnerEndpoints(recipe), options);
    } else {
        RunnerConfig rc;
        rc.deviceIndex = recipe.device;
        rc.defaultJobTimeout = config.jobTimeout;
        if (problem.pythonReference)
            rc.extraArgs.push_back("--python-worker");
        local = std::make_unique<RunnerClient>(pool::runnerStartedBy(m_setup.localRunner.string(), rc));
        runners = std::make_unique<pool::RunnerPool>(*local, "local:" + std::to_string(recipe.device));
    }
    auto store = store::Store::open(m_setup.store);
    TuningSession session(problem, store, *runners, config);
    session.setEventStream(m_events);
    RunnerClient* client = local.get();
    // Only at the start: later events may come from a runner's own thread while it holds the client
    // (pid() would wait for the job), and text from an LLM stream's thread.
    const int handle = m_events->subscribe([this, client](const std::shared_ptr<const LoopEvent>& e) {
        if (client && std::holds_alternative<SessionStarted>(*e))
            m_runnerPid.store(client->pid());
    });
    struct Unsubscribe {
        LoopEvents& events;
        int handle;
        ~Unsubscribe() { events.unsubscribe(handle); }
    } unsubscribe { *m_events, handle };
    if (!m_setup.only) {
        std::vector<std::string> notes;
        m_proposer->setInner(
            withStart(recipe, problem, makeProposer(recipe, m_setup.llm ? &*m_setup.llm : nullptr, m_events), &notes));
        if (m_setup.note)
            for (const auto& note : notes)
                m_setup.note(note);
    }
    m_setup.llm.reset(); // the key is held no longer than needed (the proposer has its own copy)
    if (recipe.mode == LoopMode::Review)
        session.setReviewGate(m_setup.reviewGate ? m_setup.reviewGate : m_answers.get());
    {
        std::lock_guard lock(m_mutex);
        m_session = &session;
        m_pool = runners.get();
        m_lastPoolStatus.clear();
        session.extendBudget(m_pendingExtension);
        m_pendingExtension = 0;
    }
    struct Detach { // the controls must not reach the session once it is gone (before the pool goes)
        SessionRunner* self;
        ~Detach()
        {
            std::lock_guard lock(self->m_mutex);
            self->m_session = nullptr;
            if (self->m_pool)
                self->m_lastPoolStatus = self->m_pool->status();
            self->m_pool = nullptr;
            self->m_runnerPid.store(-1);
        }
    } detach { this };
    if (m_setup.only && m_setup.appendTo)
        return session.evaluateInto(m_setup.appendTo, *m_setup.only, tunables, m_cancel);
    if (m_setup.only)
        return session.evaluateOne(*m_setup.only, tunables, m_cancel);
    return session.run(*m_proposer, m_cancel);
}

void SessionRunner::setPaused(bool paused) { m_proposer->setPaused(paused); }

bool SessionRunner::paused() const { return m_proposer->paused(); }

bool SessionRunner::holding() const { return m_proposer->holding(); }

void SessionRunner::stop(const std::string& reason)
{
    m_cancel->store(true); // the runner client kills a job in flight within ~20 ms
    m_answers->close(reason);
    m_proposer->wake();
}

void SessionRunner::extendBudget(int rounds)
{
    if (rounds <= 0)
        return;
    std::lock_guard lock(m_mutex);
    if (m_session)
        m_session->extendBudget(rounds);
    else
        m_pendingExtension += rounds;
}

bool SessionRunner::answerReview(ReviewDecision decision) { return m_answers->answer(std::move(decision)); }

bool SessionRunner::reviewWaiting() const { return m_answers->waiting(); }

void SessionRunner::addCandidate(const Candidate& candidate, const TunableValues& tunables)
{
    m_proposer->addCandidate(candidate, candidate.withOverrides(tunables));
}

bool SessionRunner::continueFrom(int iterationIndex)
{
    std::lock_guard lock(m_mutex);
    if (!m_session)
        return false;
    m_session->continueFrom(iterationIndex);
    return true;
}

std::vector<pool::RunnerStatus> SessionRunner::poolStatus() const
{
    std::lock_guard lock(m_mutex);
    return m_pool ? m_pool->status() : m_lastPoolStatus;
}

LoopSummary runSession(SessionSetup setup)
{
    SessionRunner runner(std::move(setup));
    return runner.run();
}

} // namespace kl::session
