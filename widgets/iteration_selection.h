#pragma once
// The one selection every review panel follows (qrenderdoc's viewer pattern): a session is shown,
// one of its iterations is selected, and each panel redraws from the same IterationFocus value.
// Panels never talk to each other: a table, the tree or a chart point calls select(), everything
// else follows. Where the details come from (a store, a live loop) is the app's business: it hands
// in a loader.
#include "widgets/session_view.h"

#include <QObject>

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
    // Selects an iteration by index; an unknown index selects nothing. Re-selecting is a no-op.
    void select(int index);
    // Compares with `index` instead of the parent (0: back to the parent).
    void compareWith(int index);

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
};

// What a panel implements to follow the selection; follow() wires it.
class IterationViewer {
public:
    virtual ~IterationViewer() = default;
    virtual void showSession(const std::shared_ptr<const SessionView>& session) = 0;
    virtual void showIteration(const std::shared_ptr<const IterationFocus>& focus) = 0;
};

// Connects `viewer` (a QObject-derived panel) to `selection` and shows it the current state.
void follow(IterationSelection* selection, QObject* receiver, IterationViewer* viewer);

} // namespace kl::gui
