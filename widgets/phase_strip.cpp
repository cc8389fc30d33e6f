#include "widgets/phase_strip.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QTimer>

namespace kl::gui {

namespace {

// The phases a round shows, in order (synthesis is part of profiling for the engineer).
const LoopPhase kShown[] = { LoopPhase::Propose, LoopPhase::Review, LoopPhase::Compile, LoopPhase::Verify,
    LoopPhase::Benchmark, LoopPhase::Profile, LoopPhase::Decide };

LoopPhase shownPhase(LoopPhase phase) { return phase == LoopPhase::Synthesise ? LoopPhase::Profile : phase; }

QString phaseTitle(LoopPhase phase)
{
    switch (phase) {
    case LoopPhase::Propose:
        return PhaseStrip::tr("propose");
    case LoopPhase::Review:
        return PhaseStrip::tr("review");
    case LoopPhase::Compile:
        return PhaseStrip::tr("compile");
    case LoopPhase::Verify:
        return PhaseStrip::tr("verify");
    case LoopPhase::Benchmark:
        return PhaseStrip::tr("benchmark");
    case LoopPhase::Profile:
    case LoopPhase::Synthesise:
        return PhaseStrip::tr("profile");
    case LoopPhase::Decide:
        return PhaseStrip::tr("decide");
    case LoopPhase::Finished:
        return PhaseStrip::tr("finished");
    }
    return {};
}

} // namespace

PhaseStrip::PhaseStrip(QWidget* parent)
    : QWidget(parent)
    , m_round(new QLabel(this))
    , m_elapsed(new QLabel(this))
    , m_tokens(new QLabel(this))
    , m_state(new QLabel(this))
    , m_tick(new QTimer(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(m_round);
    for (LoopPhase p : kShown) {
        auto* label = new QLabel(phaseTitle(p), this);
        label->setMargin(3);
        m_labels[p] = label;
        layout->addWidget(label);
    }
    m_elapsed->setMinimumWidth(m_elapsed->fontMetrics().horizontalAdvance(QStringLiteral("benchmark 000.0 s")));
    layout->addWidget(m_elapsed);
    layout->addStretch(1);
    layout->addWidget(m_tokens);
    // A long state (an error's whole text) is elided to the room left: as it was, it widened the
    // window past a laptop's screen.
    m_state->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_state->setMinimumWidth(m_state->fontMetrics().horizontalAdvance(QStringLiteral("waiting for your review")));
    m_state->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_state->installEventFilter(this);
    //: phase strip: tooltip of the token count
    m_tokens->setToolTip(tr("LLM tokens: the server's count for finished replies; the reply being written is "
                            "estimated from its length until its count arrives"));
    layout->addWidget(m_state, 1);
    m_tick->setInterval(250);
    connect(m_tick, &QTimer::timeout, this, &PhaseStrip::refresh);
    reset();
}

void PhaseStrip::reset()
{
    m_active = false;
    m_held = false;
    m_roundBegan = false;
    m_roundNumber = 0;
    m_budget = 0;
    m_detail.clear();
    m_tick->stop();
    m_countedTokens = 0;
    m_streamingTokens = 0;
    m_tokens->clear();
    //: phase strip: no session is running
    setState(tr("no session running"));
    refresh();
}

void PhaseStrip::setPhase(int round, LoopPhase phase, const QString& detail)
{
    m_roundNumber = round;
    m_roundBegan = true;
    m_detail = detail;
    if (!m_active || shownPhase(phase) != shownPhase(m_phase))
        m_sincePhase.restart();
    m_phase = phase;
    m_active = phase != LoopPhase::Finished;
    if (m_active && !m_held)
        m_tick->start();
    else
        m_tick->stop();
    refresh();
}

void PhaseStrip::setHeld(bool held)
{
    if (held == m_held)
        return;
    m_held = held;
    if (held) {
        m_tick->stop();
    } else if (m_active) {
        m_sincePhase.restart(); // the wait was not the phase's time
        m_tick->start();
    }
    refresh();
}

bool PhaseStrip::isTiming() const { return m_tick->isActive(); }

void PhaseStrip::setBudget(int rounds)
{
    m_budget = rounds;
    refresh();
}

void PhaseStrip::setTokens(qint64 tokens)
{
    m_countedTokens = tokens;
    showTokens();
}

void PhaseStrip::setStreamingTokens(qint64 estimate)
{
    m_streamingTokens = estimate;
    showTokens();
}

QString PhaseStrip::tokensText() const { return m_tokens->text(); }

void PhaseStrip::showTokens()
{
    QString text;
    if (m_countedTokens > 0)
        //: phase strip: LLM tokens used in this session so far (the usage the server reported)
        text = tr("%1 tokens").arg(QLocale().toString(m_countedTokens));
    if (m_streamingTokens > 0)
        //: phase strip: tokens of the reply still being written, estimated from its text (~4 characters a token)
        text += (text.isEmpty() ? QString() : QStringLiteral(" + "))
            + tr("~%1 streaming (estimate)").arg(QLocale().toString(m_streamingTokens));
    m_tokens->setText(text);
}

void PhaseStrip::setState(const QString& state)
{
    m_stateText = state;
    showState();
}

void PhaseStrip::showState()
{
    const QString shown = m_state->fontMetrics().elidedText(m_stateText, Qt::ElideRight, m_state->width());
    m_state->setText(shown);
    m_state->setToolTip(shown == m_stateText ? QString() : m_stateText);
}

bool PhaseStrip::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_state && event->type() == QEvent::Resize)
        showState();
    return QWidget::eventFilter(watched, event);
}

void PhaseStrip::refresh()
{
    //: phase strip: the loop's round (0 is the baseline) and the budget; none before a round began
    m_round->setText(!m_roundBegan ? QString()
            : m_budget > 0         ? tr("round %1 of %2").arg(m_roundNumber).arg(m_budget)
                                   : tr("round %1").arg(m_roundNumber));
    for (auto& [p, label] : m_labels) {
        const bool current = m_active && p == shownPhase(m_phase);
        label->setStyleSheet(current
                ? QStringLiteral("background: palette(highlight); color: palette(highlighted-text);"
                                 " border-radius: 3px; font-weight: bold;")
                : QStringLiteral("color: palette(mid);"));
    }
    if (m_active && m_held) {
        //: phase strip: the loop waits at the engineer's pause before this phase (its clock stopped)
        m_elapsed->setText(tr("%1: paused").arg(phaseTitle(m_phase)));
        m_elapsed->setToolTip(tr("Session ▸ Resume continues"));
    } else if (m_active) {
        const double seconds = double(m_sincePhase.elapsed()) / 1000.0;
        m_elapsed->setText(QStringLiteral("%1 %2 s").arg(phaseTitle(m_phase)).arg(seconds, 0, 'f', 1));
        m_elapsed->setToolTip(m_detail);
    } else {
        m_elapsed->clear();
    }
}

QString PhaseStrip::text() const
{
    QString out = m_round->text().isEmpty() ? QStringLiteral("-") : m_round->text();
    if (m_active)
        out += QStringLiteral(" | ") + m_elapsed->text();
    if (!m_tokens->text().isEmpty())
        out += QStringLiteral(" | ") + m_tokens->text();
    return out + QStringLiteral(" | ") + m_stateText;
}

} // namespace kl::gui
