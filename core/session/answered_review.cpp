// Review answered from another thread: a promise per waiting proposal, closed for good on stop.
#include "core/session/answered_review.h"

namespace kl::session {

ReviewDecision AnsweredReview::stopped(const std::string& reason)
{
    return { ReviewDecision::Kind::Reject, reason, {}, std::nullopt, {} };
}

ReviewDecision AnsweredReview::review(const Proposal&, const ProposalContext&)
{
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

bool AnsweredReview::answer(ReviewDecision decision)
{
    std::lock_guard lock(m_mutex);
    if (!m_pending)
        return false;
    m_pending->set_value(std::move(decision));
    m_pending.reset();
    return true;
}

void AnsweredReview::close(const std::string& reason)
{
    std::lock_guard lock(m_mutex);
    m_closed = reason;
    if (m_pending) {
        m_pending->set_value(stopped(reason));
        m_pending.reset();
    }
}

bool AnsweredReview::waiting() const
{
    std::lock_guard lock(m_mutex);
    return m_pending.has_value();
}

} // namespace kl::session
