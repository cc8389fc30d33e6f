#include "app/gui_review_gate.h"

namespace kl::gui {

ReviewDecision GuiReviewGate::stopped(const std::string& reason)
{
    return { ReviewDecision::Kind::Reject, reason, {}, std::nullopt, {} };
}

ReviewDecision GuiReviewGate::review(const Proposal& proposal, const ProposalContext&)
{
    if (proposal.proposer == "human")
        return { ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} };
    std::future<ReviewDecision> answer;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return stopped(*m_closed);
        m_pending.emplace();
        answer = m_pending->get_future();
    }
    return answer.get();
}

bool GuiReviewGate::answer(ReviewDecision decision)
{
    std::lock_guard lock(m_mutex);
    if (!m_pending)
        return false;
    m_pending->set_value(std::move(decision));
    m_pending.reset();
    return true;
}

void GuiReviewGate::close(const std::string& reason)
{
    std::lock_guard lock(m_mutex);
    m_closed = reason;
    if (m_pending) {
        m_pending->set_value(stopped(reason));
        m_pending.reset();
    }
}

bool GuiReviewGate::waiting() const
{
    std::lock_guard lock(m_mutex);
    return m_pending.has_value();
}

} // namespace kl::gui
