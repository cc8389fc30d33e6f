#pragma once
// A tuning session running while the window watches it: the loop on a worker thread with its own
// store connection and runner client (the window reads history through its own read-only
// connection). The loop's events cross to the GUI thread as the immutable values the loop
// publishes (queued, never touching a destroyed receiver); streamed text and phase changes are
// coalesced to at most ten updates a second; finished iterations and review requests are handed
// on one by one, never dropped. Controls: pause after the current candidate, resume, stop now
// (the runner is killed, the session ends cancelled, committed iterations stay), extend the
// budget, answer a review, evaluate the engineer's kernel, continue from an iteration. The session
// itself is core's (core/session/session_runner.h), as for the CLI: this is its adapter to the window.
#include "core/loop/loop_events.h"
#include "core/pool/runner_pool.h"
#include "core/session/session_recipe.h"
#include "core/session/session_runner.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

class QTimer;

namespace kl::gui {

class LiveSession : public QObject {
    Q_OBJECT
public:
    explicit LiveSession(QObject* parent = nullptr);
    ~LiveSession() override; // stops the session and waits for its thread

    // Starts the worker on core's session setup (session_runner.h: the recipe, the resolved store and
    // local runner, or the one candidate to evaluate). `apiKey`, loaded by the window (ApiKeys), goes
    // only into the LLM endpoint. The setup's tokens callback is the window's own. False (with the
    // reason in lastError()) when one is still running.
    bool start(session::SessionSetup setup, std::string apiKey = {});
    bool running() const { return m_running; }
    std::int64_t sessionId() const { return m_sessionId; }
    const QString& storePath() const { return m_storePath; }
    const QString& lastError() const { return m_lastError; } // "[category] message" of a failed start
    // Why it failed in the engineer's words: "the runner did not start: REASON" when it failed before a
    // session began, else lastError(); empty when it did not fail.
    const QString& failureText() const { return m_failureText; }
    QString finalStatus() const { return m_status; } // "finished", "cancelled", "failed" once ended
    pid_t runnerPid() const; // -1 when none runs (or the recipe names runners)
    // The runners of the session (one row per endpoint, as RunnerPool::status()): live while the
    // loop runs, the last rows once it ended, empty before the first session. GUI thread.
    std::vector<pool::RunnerStatus> poolStatus() const;

    // Controls, from the GUI thread.
    void setPaused(bool paused);
    bool paused() const;
    bool holding() const; // paused and waiting: the candidate in flight has finished (holdChanged tells)
    void stopNow();
    void extendBudget(int rounds);
    int budget() const { return m_budget; } // rounds after the baseline, extensions included (0: none)
    bool answerReview(ReviewDecision decision); // false when no proposal waits
    bool reviewWaiting() const;
    // Into this session, next; its tunables applied by Candidate::withOverrides (throws kl::Error).
    void evaluateCandidate(const Candidate& candidate, const TunableValues& tunables);
    // The running session's next round starts from its iteration `index` (the stored parent of the
    // next proposals). False when no loop runs.
    bool continueFrom(int index);

    // What has arrived so far (GUI thread).
    const std::vector<IterationOutcome>& iterations() const { return m_iterations; }
    // LLM tokens of finished proposals (usage), counted in order with their text: what the strip shows.
    std::int64_t tokens() const { return m_countedTokens; }
    // Tokens of the reply being streamed, estimated from its text (~4 characters a token) until the
    // proposal finishes and its usage counts; 0 when nothing streams.
    std::int64_t streamingTokenEstimate() const { return m_streamedChars / 4; }
    int textUpdates() const { return m_textUpdates; } // coalesced flushes so far, for tests

signals:
    void sessionStarted(const kl::SessionStarted& started);
    void phaseChanged(int round, kl::LoopPhase phase, const QString& detail);
    void textArrived(const QString& role, int alternative, const QString& text);
    void reviewRequested(const kl::ReviewRequested& request);
    void iterationFinished(const kl::IterationOutcome& outcome);
    void incumbentChanged(const kl::IncumbentChanged& change);
    // The pause taken hold (the loop waits before its next proposal) or let go: each change of holding().
    void holdChanged(bool held);
    void tokensChanged(qint64 tokens);
    void streamingTokensEstimated(qint64 estimate); // as text streams (coalesced with it); 0 once counted
    // The session ended ("finished", "cancelled", "failed"); `reason` is the stop reason or the error.
    void sessionEnded(const QString& status, const QString& reason);

private:
    struct Inbox;
    struct Arrival;
    void post(Arrival arrival); // from the worker (or the loop's threads) to the GUI thread
    void work(
        std::shared_ptr<session::SessionRunner> runner, std::optional<std::pair<std::string, std::string>> failure);
    void drain();
    void flushCoalesced();
    void emitTokens();
    void scheduleFlush();
    void joinWorker();

    std::shared_ptr<Inbox> m_inbox;
    std::thread m_worker;
    // The last session's (set on the GUI thread by start(); its worker holds a copy while it runs).
    std::shared_ptr<session::SessionRunner> m_runner;
    bool m_running = false;
    std::int64_t m_sessionId = 0;
    int m_budget = 0;
    QString m_storePath;
    QString m_lastError;
    QString m_failureText;
    QString m_status;
    std::vector<IterationOutcome> m_iterations;

    // Coalesced on the GUI thread.
    QTimer* m_flushTimer;
    QElapsedTimer m_sinceFlush;
    std::optional<PhaseChanged> m_pendingPhase;
    std::vector<ProposerText> m_pendingText;
    int m_textUpdates = 0;
    std::int64_t m_streamedChars = 0; // text streamed since the tokens last counted
    std::int64_t m_countedTokens = 0; // the counted tokens, in order with the text
    bool m_tokensDirty = false; // not yet shown
    bool m_estimateDirty = false;
};

} // namespace kl::gui
