#include "widgets/iteration_selection.h"

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
    if (baseline > 0)
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

void follow(IterationSelection* selection, QObject* receiver, IterationViewer* viewer)
{
    QObject::connect(selection, &IterationSelection::sessionChanged, receiver,
        [viewer](const std::shared_ptr<const SessionView>& session) { viewer->showSession(session); });
    QObject::connect(selection, &IterationSelection::iterationChanged, receiver,
        [viewer](const std::shared_ptr<const IterationFocus>& focus) { viewer->showIteration(focus); });
    viewer->showSession(selection->session());
    viewer->showIteration(selection->focus());
}

} // namespace kl::gui
