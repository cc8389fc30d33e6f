#pragma once
// The one selection every review panel follows (qrenderdoc's viewer pattern): a session is shown,
// one of its iterations is selected, and each panel redraws from the same IterationFocus value.
// Panels never talk to each other: a table, the tree or a chart point calls select(), everything
// else follows. Where the details come from (a store, a live loop) is the app's business: it hands
// in a loader.
#include "widgets/session_view.h"

#include <QObject>

class QWidget;

#include <functional>
#include <memory>

namespace kl::gui {

class IterationSelection : public QObject {
    Q_OBJECT
public:
    using DetailLoader = std::function<std::shared_ptr<const store::IterationDetail>(int index)>;

    explicit IterationSelection(QObject* parent = nullptr);

    // Shows a session (null: none) and selects nothing. `loader` reads one iteration in full.
    void setSession(std::shared_ptr<const SessionView> session, DetailLoader loader);
    // Replaces the session value (e.g. once its figures are read) and keeps the selection.
    void updateSession(std::shared_ptr<const SessionView> session);
    // The session value with more rows and figures (a live session's new iterations): the selected
    // iteration's own panels are not redrawn (its values did not change), only the session's.
    void extendSession(std::shared_ptr<const SessionView> session);
    // Where the next selections' details come from (a live session's, read ahead off the GUI thread);
    // the session and the selection stay, nothing is redrawn.
    void setLoader(DetailLoader loader) { m_loader = std::move(loader); }
    // Selects an iteration by index; an unknown index selects nothing. Re-selecting is a no-op.
    void select(int index);
    // Compares with `index` instead of the parent (0: back to the parent).
    void compareWith(int index);
    // Pins `detail` as every iteration's baseline (the Metrics page's Baseline column) under `label`,
    // until unpinned; it stays across sessions, so a recorded session's iteration can be the yardstick.
    void pinBaseline(std::shared_ptr<const store::IterationDetail> detail, const std::string& label);
    // Pins an iteration of the shown session; false when it has none of that index.
    bool pinBaseline(int index);
    void unpinBaseline();
    const std::string& pinnedBaseline() const { return m_pinnedLabel; }

    std::shared_ptr<const SessionView> session() const { return m_session; }
    std::shared_ptr<const IterationFocus> focus() const { return m_focus; }
    int current() const { return m_focus ? m_focus->index() : 0; }
    int comparedWith() const { return m_compareWith; }

signals:
    void sessionChanged(const std::shared_ptr<const kl::gui::SessionView>& session);
    void iterationChanged(const std::shared_ptr<const kl::gui::IterationFocus>& focus);

private:
    std::shared_ptr<const store::IterationDetail> load(int index);
    void refocus(int index);

    std::shared_ptr<const SessionView> m_session;
    std::shared_ptr<const IterationFocus> m_focus;
    DetailLoader m_loader;
    int m_compareWith = 0;
    std::shared_ptr<const store::IterationDetail> m_pinned;
    std::string m_pinnedLabel;
};

// What a panel implements to follow the selection; follow() wires it.
class IterationViewer {
public:
    virtual ~IterationViewer() = default;
    virtual void showSession(const std::shared_ptr<const SessionView>& session) = 0;
    virtual void showIteration(const std::shared_ptr<const IterationFocus>& focus) = 0;
};

// Whether a viewer that cannot be seen (a tab behind another, a hidden dock in a shown window)
// keeps up. WhileHidden: it is handed only the newest session and focus, once it is shown; a live
// session's refreshes cost nothing in the panels nobody looks at. Never: every change at once (a
// panel that defers its own costly part and keeps the rest current, like the diff's header).
enum class Deferral { WhileHidden, Never };

// Connects `viewer` (a QObject-derived panel) to `selection` and shows it the current state.
// `shownBy` is the widget whose visibility counts (default: `receiver` when it is a widget; a model
// passes its view). A window that is not shown at all defers nothing (tests read unshown panels).
void follow(IterationSelection* selection, QObject* receiver, IterationViewer* viewer,
    Deferral deferral = Deferral::WhileHidden, QWidget* shownBy = nullptr);
// How many updates a viewer followed through `receiver` holds back for its show (0 or 1 each of
// session and focus: the newest wins), for tests; -1 when it is not deferred.
int pendingUpdates(const QObject* receiver);
// Hands a hidden viewer what waits for it now, for a caller that reads the panel (an accessor, a
// test): as DiffPanel::body() lays out its table for a reader. Returns `receiver`.
template <typename T> T* showPending(T* receiver);
void applyPending(const QObject* receiver);
template <typename T> T* showPending(T* receiver)
{
    applyPending(receiver);
    return receiver;
}

} // namespace kl::gui
