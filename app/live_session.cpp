#include "app/live_session.h"

#include "app/api_keys.h"
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/pool/runner_endpoint.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"

#include <QTimer>

#include <deque>
#include <memory>

namespace kl::gui {

namespace {
constexpr int kFlushMs = 100; // at most ten text and phase updates a second
}

struct LiveSession::Arrival {
    std::shared_ptr<const LoopEvent> event;
    std::optional<std::string> failure; // "[category] message": the session could not run
    bool ended = false; // the worker is done
    std::int64_t tokens = 0; // a proposal's LLM tokens, counted after its text (in order with it)
};

struct LiveSession::Inbox {
    std::mutex mutex;
    std::deque<Arrival> items;
    bool posted = false; // a drain is queued on the GUI thread
};

LiveSession::LiveSession(QObject* parent)
    : QObject(parent)
    , m_inbox(std::make_shared<Inbox>())
    , m_flushTimer(new QTimer(this))
{
    m_flushTimer->setSingleShot(true);
    connect(m_flushTimer, &QTimer::timeout, this, &LiveSession::flushCoalesced);
}

LiveSession::~LiveSession()
{
    m_cancel.store(true);
    if (m_gate)
        m_gate->close("the window was closed");
    if (m_proposer)
        m_proposer->wake();
    joinWorker();
}

void LiveSession::joinWorker()
{
    if (m_worker.joinable())
        m_worker.join();
}

bool LiveSession::start(LiveSessionSetup setup)
{
    if (m_running) {
        m_lastError = tr("A session is already running");
        return false;
    }
    joinWorker();
    m_cancel.store(false);
    m_runnerPid.store(-1);
    m_countedTokens = 0;
    m_streamedChars = 0;
    m_tokensDirty = m_estimateDirty = false;
    m_sessionId = 0;
    m_budget = setup.only ? 1 : setup.recipe.budget;
    m_pendingExtension = 0;
    m_iterations.clear();
    m_lastError.clear();
    m_status.clear();
    m_storePath = QString::fromStdString(setup.storePath);
    m_gate = std::make_shared<GuiReviewGate>();
    // On the loop's thread, after the proposal's streamed text was posted: the usage follows it in order.
    m_proposer = std::make_shared<LiveProposer>([this](std::int64_t n) { post({ nullptr, std::nullopt, false, n }); });
    m_running = true;
    m_worker = std::thread([this, setup = std::move(setup)]() mutable { work(std::move(setup)); });
    return true;
}

void LiveSession::post(Arrival arrival)
{
    bool queue = false;
    {
        std::lock_guard lock(m_inbox->mutex);
        m_inbox->items.push_back(std::move(arrival));
        queue = !m_inbox->posted;
        m_inbox->posted = true;
    }
    if (queue) // the destructor joins the worker first, so `this` outlives the call
        QMetaObject::invokeMethod(this, &LiveSession::drain, Qt::QueuedConnection);
}

void LiveSession::work(LiveSessionSetup setup)
{
    const auto post = [this](Arrival arrival) { this->post(std::move(arrival)); };
    const auto gate = m_gate;
    const auto proposer = m_proposer;
    try {
        const auto& recipe = setup.recipe;
        const Problem problem = session::loadRecipeProblem(recipe);
        auto store = store::Store::open(setup.storePath);
        auto config = session::loopConfig(recipe);
        if (setup.only)
            config.proposerDetail = "human";
        // The recipe's runners as the CLI makes them (bad endpoints fail before anything starts);
        // none named: the local runner of recipe.device, held here so its pid can be shown.
        const bool named = !recipe.runners.empty() || !recipe.runnersFile.empty();
        std::unique_ptr<RunnerClient> local;
        std::unique_ptr<pool::RunnerPool> runners;
        if (named) {
            auto options = session::poolOptions(recipe, setup.runnerPath);
            options.endpoints.base.defaultJobTimeout = config.jobTimeout;
            runners = std::make_unique<pool::RunnerPool>(session::runnerEndpoints(recipe), options);
        } else {
            RunnerConfig rc;
            rc.deviceIndex = recipe.device;
            rc.defaultJobTimeout = config.jobTimeout;
            local = std::make_unique<RunnerClient>(pool::runnerStartedBy(setup.runnerPath, rc)); // a path or a command
            runners = std::make_unique<pool::RunnerPool>(*local, "local:" + std::to_string(recipe.device));
        }
        TuningSession session(problem, store, *runners, config);
        std::atomic<pid_t>* pid = &m_runnerPid;
        RunnerClient* client = local.get();
        const int handle = session.events().subscribe([post, pid, client](const std::shared_ptr<const LoopEvent>& e) {
            // Only here: later events may come from a runner's own thread while it holds the client
            // (pid() would wait for the job), and text from an LLM stream's thread.
            if (client && std::holds_alternative<SessionStarted>(*e))
                pid->store(client->pid());
            post({ e, std::nullopt, false });
        });
        if (!setup.only) {
            std::optional<EndpointConfig> endpoint;
            if (recipe.proposer != session::ProposerChoice::Tuner)
                endpoint = endpointFor(recipe.llm, std::move(setup.apiKey));
            proposer->setInner(session::withStart(recipe, problem,
                session::makeProposer(recipe, endpoint ? &*endpoint : nullptr, session.eventStream())));
        }
        setup.apiKey.clear();
        if (recipe.mode == LoopMode::Review)
            session.setReviewGate(gate.get());
        {
            std::lock_guard lock(m_sessionMutex);
            m_session = &session;
            m_pool = runners.get();
            m_lastPoolStatus.clear();
            session.extendBudget(m_pendingExtension); // asked for before the loop began
        }
        struct Detach { // the GUI thread must not reach the session once it is gone
            LiveSession* self;
            ~Detach()
            {
                std::lock_guard lock(self->m_sessionMutex);
                self->m_session = nullptr;
                if (self->m_pool)
                    self->m_lastPoolStatus = self->m_pool->status();
                self->m_pool = nullptr;
            }
        } detach { this };
        if (setup.only && setup.appendTo)
            session.evaluateInto(setup.appendTo, *setup.only, setup.onlyTunables, &m_cancel);
        else if (setup.only)
            session.evaluateOne(*setup.only, setup.onlyTunables, &m_cancel);
        else
            session.run(*proposer, &m_cancel);
        session.events().unsubscribe(handle);
    } catch (const Error& e) {
        post({ nullptr, "[" + e.category() + "] " + e.message(), false });
    } catch (const std::exception& e) {
        post({ nullptr, std::string("[internal] ") + e.what(), false });
    }
    m_runnerPid.store(-1);
    post({ nullptr, std::nullopt, true });
}

void LiveSession::drain()
{
    std::deque<Arrival> items;
    {
        std::lock_guard lock(m_inbox->mutex);
        items.swap(m_inbox->items);
        m_inbox->posted = false;
    }
    for (auto& a : items) {
        if (a.failure) {
            m_lastError = QString::fromStdString(*a.failure);
            m_status = QStringLiteral("failed");
        }
        if (a.ended) {
            flushCoalesced();
            m_running = false;
            joinWorker();
            if (m_status.isEmpty())
                m_status = QStringLiteral("failed");
            emit sessionEnded(m_status, m_lastError);
            continue;
        }
        if (a.tokens > 0) { // the proposal's usage replaces the estimate of its text
            m_countedTokens += a.tokens;
            m_streamedChars = 0;
            m_tokensDirty = m_estimateDirty = true;
            scheduleFlush();
        }
        if (!a.event)
            continue;
        const LoopEvent& event = *a.event;
        if (const auto* s = std::get_if<SessionStarted>(&event)) {
            m_sessionId = s->sessionId;
            emit sessionStarted(*s);
        } else if (const auto* p = std::get_if<PhaseChanged>(&event)) {
            m_pendingPhase = *p;
            scheduleFlush();
        } else if (const auto* t = std::get_if<ProposerText>(&event)) {
            if (!m_pendingText.empty() && m_pendingText.back().role == t->role
                && m_pendingText.back().alternative == t->alternative)
                m_pendingText.back().text += t->text;
            else
                m_pendingText.push_back(*t);
            m_streamedChars += std::int64_t(t->text.size());
            m_estimateDirty = true;
            scheduleFlush();
        } else if (const auto* r = std::get_if<ReviewRequested>(&event)) {
            flushCoalesced(); // the review phase shows before the panel asks
            emit reviewRequested(*r);
        } else if (const auto* f = std::get_if<IterationFinished>(&event)) {
            m_iterations.push_back(f->outcome);
            emitTokens(); // its proposal's count, before whoever follows the iteration reads the strip
            emit iterationFinished(f->outcome);
        } else if (const auto* c = std::get_if<IncumbentChanged>(&event)) {
            emit incumbentChanged(*c);
        } else if (const auto* done = std::get_if<SessionFinished>(&event)) {
            m_status = QString::fromStdString(done->status);
            m_lastError = QString::fromStdString(done->summary.stopReason);
        }
    }
}

void LiveSession::scheduleFlush()
{
    if (m_flushTimer->isActive())
        return;
    const qint64 since = m_sinceFlush.isValid() ? m_sinceFlush.elapsed() : kFlushMs;
    m_flushTimer->start(int(std::max<qint64>(0, kFlushMs - since)));
}

void LiveSession::flushCoalesced()
{
    m_flushTimer->stop();
    if (!m_pendingPhase && m_pendingText.empty() && !m_tokensDirty && !m_estimateDirty)
        return;
    m_sinceFlush.restart();
    ++m_textUpdates;
    const auto texts = std::move(m_pendingText);
    m_pendingText.clear();
    // The strip first, so that whoever sees the text sees the phase and tokens it came with. The usage
    // of a reply arrives with its end; until then the strip shows an estimate from its text.
    if (m_pendingPhase) {
        const PhaseChanged p = *m_pendingPhase;
        m_pendingPhase.reset();
        emit phaseChanged(p.round, p.phase, QString::fromStdString(p.detail));
    }
    emitTokens();
    for (const auto& t : texts)
        emit textArrived(QString::fromStdString(t.role), t.alternative, QString::fromStdString(t.text));
}

void LiveSession::emitTokens()
{
    if (m_tokensDirty)
        emit tokensChanged(m_countedTokens);
    if (m_estimateDirty)
        emit streamingTokensEstimated(streamingTokenEstimate());
    m_tokensDirty = m_estimateDirty = false;
}

void LiveSession::setPaused(bool paused)
{
    if (m_proposer)
        m_proposer->setPaused(paused);
}

bool LiveSession::paused() const { return m_proposer && m_proposer->paused(); }

void LiveSession::stopNow()
{
    if (!m_running)
        return;
    m_cancel.store(true); // the runner client kills a job in flight within ~20 ms
    m_gate->close("the engineer stopped the session");
    m_proposer->wake();
}

void LiveSession::extendBudget(int rounds)
{
    if (rounds <= 0 || !m_running || m_budget <= 0)
        return;
    m_budget += rounds;
    std::lock_guard lock(m_sessionMutex);
    if (m_session)
        m_session->extendBudget(rounds);
    else
        m_pendingExtension += rounds;
}

bool LiveSession::answerReview(ReviewDecision decision) { return m_gate && m_gate->answer(std::move(decision)); }

bool LiveSession::reviewWaiting() const { return m_gate && m_gate->waiting(); }

void LiveSession::evaluateCandidate(Candidate candidate, TunableValues tunables)
{
    if (m_proposer)
        m_proposer->addHumanCandidate(std::move(candidate), std::move(tunables));
}

std::vector<pool::RunnerStatus> LiveSession::poolStatus() const
{
    std::lock_guard lock(m_sessionMutex);
    return m_pool ? m_pool->status() : m_lastPoolStatus;
}

bool LiveSession::continueFrom(int index)
{
    std::lock_guard lock(m_sessionMutex);
    if (!m_session)
        return false;
    m_session->continueFrom(index);
    return true;
}

} // namespace kl::gui
