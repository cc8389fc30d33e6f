#pragma once
// The live session's progress in one line: the round (of the budget), each phase of the round
// (propose, review, compile, verify, benchmark, profile, decide) with the current one marked and
// its elapsed time (stopped while the loop is paused), the LLM tokens used so far (counted, plus an
// estimate for the reply still being written) and the session's state (running, paused, ...).
#include "core/loop/loop_values.h"

#include <QElapsedTimer>
#include <QWidget>

#include <map>

class QLabel;
class QTimer;

namespace kl::gui {

class PhaseStrip : public QWidget {
    Q_OBJECT
public:
    explicit PhaseStrip(QWidget* parent = nullptr);

    void setPhase(int round, LoopPhase phase, const QString& detail);
    void setBudget(int rounds); // 0: none
    void setTokens(qint64 tokens); // counted: the usage of finished replies
    void setStreamingTokens(qint64 estimate); // the reply being written, estimated from its text; 0: none
    QString tokensText() const; // "1,234 tokens + ~56 streaming (estimate)", empty before any
    void setState(const QString& state); // "running", "paused", "waiting for your review", "cancelled", ...
    // Held: the loop waits at the engineer's pause; the phase's clock stops (no time passes for it) and
    // says so. Released: the clock starts again with the next phase.
    void setHeld(bool held);
    bool isHeld() const { return m_held; }
    bool isTiming() const; // the elapsed time is counting (a phase under way, not held)
    void reset();

    QString text() const; // what the strip says, for tests and tooltips
    LoopPhase phase() const { return m_phase; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override; // the state label's resize

private:
    void refresh();
    void showTokens();
    void showState(); // the state elided to the room left, whole in the tooltip

    std::map<LoopPhase, QLabel*> m_labels;
    QLabel* m_round;
    QLabel* m_elapsed;
    QLabel* m_tokens;
    QLabel* m_state;
    QString m_stateText; // whole; the label may show it elided
    QTimer* m_tick;
    QElapsedTimer m_sincePhase;
    LoopPhase m_phase = LoopPhase::Propose;
    bool m_active = false;
    bool m_held = false;
    bool m_roundBegan = false; // a phase arrived: the round is the loop's (none when a session never began)
    int m_roundNumber = 0;
    int m_budget = 0;
    qint64 m_countedTokens = 0;
    qint64 m_streamingTokens = 0;
    QString m_detail;
};

} // namespace kl::gui
