#include "widgets/iteration_selection.h"

#include <QElapsedTimer>
#include <QEvent>
#include <QPointer>
#include <QWidget>

#include <cstdio>
#include <optional>
#include <utility>

namespace kl::gui {

IterationSelection::IterationSelection(QObject* parent)
    : QObject(parent)
{
}

void IterationSelection::setSession(std::shared_ptr<const SessionView> session, DetailLoader loader)
{
    m_session = std::move(session);
    m_loader = std::move(loader);
    m_focus.reset();
    m_compareWith = 0;
    emit sessionChanged(m_session);
    emit iterationChanged(m_focus);
}

void IterationSelection::updateSession(std::shared_ptr<const SessionView> session)
{
    m_session = std::move(session);
    emit sessionChanged(m_session);
    if (m_focus) {
        auto focus = std::make_shared<IterationFocus>(*m_focus);
        focus->session = m_session;
        m_focus = std::move(focus);
        emit iterationChanged(m_focus);
    }
}

void IterationSelection::extendSession(std::shared_ptr<const SessionView> session)
{
    m_session = std::move(session);
    if (m_focus) { // the same iteration, in the longer session (what the next redraw reads)
        auto focus = std::make_shared<IterationFocus>(*m_focus);
        focus->session = m_session;
        m_focus = std::move(focus);
    }
    emit sessionChanged(m_session);
}

std::shared_ptr<const store::IterationDetail> IterationSelection::load(int index)
{
    if (index <= 0 || !m_loader || !m_session || !m_session->row(index))
        return nullptr;
    return m_loader(index);
}

void IterationSelection::refocus(int index)
{
    auto detail = load(index);
    if (!detail) {
        if (m_focus) {
            m_focus.reset();
            emit iterationChanged(m_focus);
        }
        return;
    }
    auto focus = std::make_shared<IterationFocus>();
    focus->session = m_session;
    focus->detail = std::move(detail);
    const int parent = m_session->parentIteration(index);
    const int compared = m_compareWith > 0 && m_compareWith != index ? m_compareWith : parent;
    focus->comparedIsParent = compared == parent;
    if (compared > 0)
        focus->compared = compared == index ? focus->detail : load(compared);
    const int baseline = m_session->baselineIteration();
    if (m_pinned) {
        focus->baseline = m_pinned;
        focus->pinnedBaseline = m_pinnedLabel;
    } else if (baseline > 0)
        focus->baseline = baseline == index ? focus->detail : baseline == compared ? focus->compared : load(baseline);
    m_focus = std::move(focus);
    emit iterationChanged(m_focus);
}

void IterationSelection::select(int index)
{
    if (index == current())
        return;
    refocus(index);
}

void IterationSelection::compareWith(int index)
{
    if (index == m_compareWith)
        return;
    m_compareWith = index;
    if (m_focus)
        refocus(current());
}

void IterationSelection::pinBaseline(std::shared_ptr<const store::IterationDetail> detail, const std::string& label)
{
    m_pinned = std::move(detail);
    m_pinnedLabel = m_pinned ? label : std::string();
    if (m_focus)
        refocus(current());
}

bool IterationSelection::pinBaseline(int index)
{
    auto detail = load(index);
    if (!detail)
        return false;
    pinBaseline(std::move(detail), "iteration " + std::to_string(index));
    return true;
}

void IterationSelection::unpinBaseline() { pinBaseline(nullptr, {}); }

namespace {

bool traced()
{
    static const bool on = qEnvironmentVariableIsSet("KL_STALL_TRACE");
    return on;
}

// With KL_STALL_TRACE set, a viewer update over 2 ms is printed with its panel's class (what
// bench_live_stall's gaps are made of).
template <typename F> void timed(const QObject* receiver, const char* what, F&& update)
{
    if (!traced()) {
        update();
        return;
    }
    QElapsedTimer clock;
    clock.start();
    update();
    if (const qint64 ns = clock.nsecsElapsed(); ns > 2'000'000)
        std::fprintf(stderr, "VIEWER %s %s %.1f ms\n", receiver->metaObject()->className(), what, double(ns) / 1e6);
}

// Holds a hidden viewer's newest session and focus until its widget is shown (an event filter on
// it: the Show event comes before the first paint). Owned by the receiver.
class DeferredViewer : public QObject {
public:
    DeferredViewer(QObject* receiver, IterationViewer* viewer, QWidget* shownBy)
        : QObject(receiver)
        , m_receiver(receiver)
        , m_viewer(viewer)
        , m_shownBy(shownBy)
    {
        setObjectName(QStringLiteral("kl_deferred_viewer"));
        if (m_shownBy)
            m_shownBy->installEventFilter(this);
    }

    void session(const std::shared_ptr<const SessionView>& session)
    {
        if (hidden()) {
            m_session = session;
            return;
        }
        apply(); // what waited is older than this
        timed(m_receiver, "showSession", [&] { m_viewer->showSession(session); });
    }

    void focus(const std::shared_ptr<const IterationFocus>& focus)
    {
        if (hidden()) {
            m_focus = focus;
            return;
        }
        apply();
        timed(m_receiver, "showIteration", [&] { m_viewer->showIteration(focus); });
    }

    void applyNow() { apply(); }
    bool defers() const { return m_shownBy != nullptr; }
    int pending() const { return int(m_session.has_value()) + int(m_focus.has_value()); }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == m_shownBy && event->type() == QEvent::Show)
            apply();
        return QObject::eventFilter(watched, event);
    }

private:
    bool hidden() const
    {
        return m_shownBy && !m_shownBy->isVisible() && m_shownBy->window() && m_shownBy->window()->isVisible();
    }

    // The session first, then the focus (which refers to it), as the selection emits them.
    void apply()
    {
        if (auto session = std::exchange(m_session, std::nullopt))
            timed(m_receiver, "showSession (shown)", [&] { m_viewer->showSession(*session); });
        if (auto focus = std::exchange(m_focus, std::nullopt))
            timed(m_receiver, "showIteration (shown)", [&] { m_viewer->showIteration(*focus); });
    }

    QObject* m_receiver;
    IterationViewer* m_viewer;
    QPointer<QWidget> m_shownBy;
    std::optional<std::shared_ptr<const SessionView>> m_session;
    std::optional<std::shared_ptr<const IterationFocus>> m_focus;
};

} // namespace

void follow(
    IterationSelection* selection, QObject* receiver, IterationViewer* viewer, Deferral deferral, QWidget* shownBy)
{
    if (!shownBy && deferral == Deferral::WhileHidden)
        shownBy = qobject_cast<QWidget*>(receiver);
    auto* gate = new DeferredViewer(receiver, viewer, deferral == Deferral::WhileHidden ? shownBy : nullptr);
    QObject::connect(selection, &IterationSelection::sessionChanged, gate,
        [gate](const std::shared_ptr<const SessionView>& session) { gate->session(session); });
    QObject::connect(selection, &IterationSelection::iterationChanged, gate,
        [gate](const std::shared_ptr<const IterationFocus>& focus) { gate->focus(focus); });
    gate->session(selection->session());
    gate->focus(selection->focus());
}

namespace {
DeferredViewer* gateOf(const QObject* receiver)
{
    return receiver ? dynamic_cast<DeferredViewer*>(
               receiver->findChild<QObject*>(QStringLiteral("kl_deferred_viewer"), Qt::FindDirectChildrenOnly))
                    : nullptr;
}
} // namespace

int pendingUpdates(const QObject* receiver)
{
    const DeferredViewer* gate = gateOf(receiver);
    return gate && gate->defers() ? gate->pending() : -1;
}

void applyPending(const QObject* receiver)
{
    if (DeferredViewer* gate = gateOf(receiver))
        gate->applyNow();
}

} // namespace kl::gui
