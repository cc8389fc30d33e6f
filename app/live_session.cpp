#include "app/live_session.h"

#include "app/api_keys.h"
#include "core/model/error.h"

#include <QTimer>

#include <deque>
#include <memory>

namespace kl::gui {

namespace {
constexpr int kFlushMs = 100; // at most ten text and phase updates a second
}

struct LiveSession::Arrival {
    std::shared_ptr<const LoopEvent> event;
    std::optional<std::pair<std::string, std::string>> failure; // category, message: the session could not run
    bool ended = false; // the worker is done
    std::int64_t tokens = 0; // a proposal's LLM tokens, counted after its text (in order with it)
    std::optional<bool> hold {}; // the pause taken hold (true) or let go
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
    if (m_runner)
        m_runner->stop("the window was closed");
    joinWorker();
}

void LiveSession::joinWorker()
{
    if (m_worker.joinable())
        m_worker.join();
}

bool LiveSession::start(session::SessionSetup setup, std::string apiKey)
{
    if (m_running) {
        m_lastError = tr("A session is already running");
        return false;
    }
    joinWorker();
    m_countedTokens = 0;
    m_streamedChars = 0;
    m_tokensDirty = m_estimateDirty = false;
    m_sessionId = 0;
    m_budget = setup.only ? 0 : setup.recipe.budget; // an evaluation is one candidate, no rounds to count
    m_iterations.clear();
    m_lastError.clear();
    m_failureText.clear();
    m_status.clear();
    m_storePath = QString::fromStdString(setup.store.string());

    session::SessionSetup& s = setup;
    // On the loop's thread, after the proposal's streamed text was posted: the usage follows it in order.
    s.tokens = [this](std::int64_t n) { post({ nullptr, std::nullopt, false, n }); };
    // Under the proposer's lock: only posted (the inbox's own lock), never calling the runner back.
    s.hold = [this](bool held) { post({ nullptr, std::nullopt, false, 0, held }); };
    // Told as the session's end, as a failure while it runs would be.
    std::optional<std::pair<std::string, std::string>> failure;
    try {
        if (!s.only && s.recipe.proposer != session::ProposerChoice::Tuner)
            s.llm = endpointFor(s.recipe.llm, std::move(apiKey));
    } catch (const Error& e) {
        failure = std::pair { e.category(), e.message() };
    }
    apiKey.clear();
    m_runner = std::make_shared<session::SessionRunner>(std::move(setup));
    m_runner->events().subscribe([this](const std::shared_ptr<const LoopEvent>& e) {
        post({ e, std::nullopt, false });
    });
    m_running = true;
    m_worker = std::thread([this, runner = m_runner, failure] { work(runner, failure); });
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

void LiveSession::work(
    std::shared_ptr<session::SessionRunner> runner, std::optional<std::pair<std::string, std::string>> failure)
{
    try {
        if (failure)
            post({ nullptr, failure, false });
        else
            runner->run();
    } catch (const Error& e) {
        post({ nullptr, std::pair { e.category(), e.message() }, false });
    } catch (const std::exception& e) {
        post({ nullptr, std::pair { std::string("internal"), std::string(e.what()) }, false });
    }
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
            const auto& [category, message] = *a.failure;
            m_lastError = QString::fromStdString("[" + category + "] " + message);
            // Before any session began, a runner that failed never started: said so, not "runner-lost".
            m_failureText = m_sessionId == 0 && category.rfind("runner.", 0) == 0
                ? tr("the runner did not start: %1").arg(QString::fromStdString(message))
                : m_lastError;
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
        if (a.hold)
            emit holdChanged(*a.hold);
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
    if (m_runner)
        m_runner->setPaused(paused);
}

bool LiveSession::paused() const { return m_runner && m_runner->paused(); }

bool LiveSession::holding() const { return m_running && m_runner && m_runner->holding(); }

pid_t LiveSession::runnerPid() const { return m_runner ? m_runner->localRunnerPid() : -1; }

void LiveSession::stopNow()
{
    if (!m_running)
        return;
    m_runner->stop("the engineer stopped the session"); // the runner client kills a job in flight within ~20 ms
}

void LiveSession::extendBudget(int rounds)
{
    if (rounds <= 0 || !m_running || m_budget <= 0)
        return;
    m_budget += rounds;
    m_runner->extendBudget(rounds);
}

bool LiveSession::answerReview(ReviewDecision decision)
{
    return m_runner && m_runner->answerReview(std::move(decision));
}

bool LiveSession::reviewWaiting() const { return m_runner && m_runner->reviewWaiting(); }

void LiveSession::evaluateCandidate(const Candidate& candidate, const TunableValues& tunables)
{
    if (m_runner)
        m_runner->addCandidate(candidate, tunables);
}

std::vector<pool::RunnerStatus> LiveSession::poolStatus() const
{
    return m_runner ? m_runner->poolStatus() : std::vector<pool::RunnerStatus> {};
}

bool LiveSession::continueFrom(int index) { return m_runner && m_runner->continueFrom(index); }

} // namespace kl::gui
