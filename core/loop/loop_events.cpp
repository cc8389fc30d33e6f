#include "core/loop/loop_events.h"

#include <algorithm>

namespace kl {

namespace {
template <class... F> struct Overloaded : F... {
    using F::operator()...;
};
template <class... F> Overloaded(F...) -> Overloaded<F...>;
} // namespace

const char* loopPhaseName(LoopPhase phase)
{
    switch (phase) {
    case LoopPhase::Propose:
        return "propose";
    case LoopPhase::Review:
        return "review";
    case LoopPhase::Compile:
        return "compile";
    case LoopPhase::Verify:
        return "verify";
    case LoopPhase::Benchmark:
        return "benchmark";
    case LoopPhase::Profile:
        return "profile";
    case LoopPhase::Synthesise:
        return "synthesise";
    case LoopPhase::Decide:
        return "decide";
    case LoopPhase::Finished:
        return "finished";
    }
    return "?";
}

const char* loopEventName(const LoopEvent& event)
{
    return std::visit(
        Overloaded { [](const SessionStarted&) { return "session-started"; },
            [](const PhaseChanged&) { return "phase"; }, [](const ProposerText&) { return "proposer-text"; },
            [](const ReviewRequested&) { return "review-requested"; },
            [](const IterationFinished&) { return "iteration-finished"; },
            [](const IncumbentChanged&) { return "incumbent-changed"; },
            [](const SessionFinished&) { return "session-finished"; } },
        event);
}

int LoopEvents::subscribe(Subscriber subscriber)
{
    std::lock_guard lock(m_mutex);
    m_subscribers.emplace_back(m_next, std::move(subscriber));
    return m_next++;
}

void LoopEvents::unsubscribe(int handle)
{
    std::lock_guard lock(m_mutex);
    std::erase_if(m_subscribers, [handle](const auto& s) { return s.first == handle; });
}

void LoopEvents::publish(LoopEvent event)
{
    const auto shared = std::make_shared<const LoopEvent>(std::move(event));
    std::lock_guard lock(m_mutex);
    // A copy: a subscriber may unsubscribe (itself or another) while being called.
    const auto subscribers = m_subscribers;
    for (const auto& [handle, subscriber] : subscribers) {
        const auto still = std::any_of(
            m_subscribers.begin(), m_subscribers.end(), [h = handle](const auto& s) { return s.first == h; });
        if (still)
            subscriber(shared);
    }
}

} // namespace kl
