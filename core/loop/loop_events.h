#pragma once
// One event stream from the loop to its observers (the CLI's output, the GUI's live session):
// immutable values, delivered as shared_ptr<const LoopEvent> so that a front end can queue them
// to another thread without copying. Subscribing and unsubscribing are safe from any thread.
#include "core/loop/loop_values.h"
#include "core/propose/proposer.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

namespace kl {

struct SessionStarted {
    std::int64_t sessionId = 0;
    std::string problem;
    std::string proposer; // as stored: "tuner:auto", "llm:openai/gpt-4o"
    protocol::DeviceDescription device;
    LoopMode mode = LoopMode::Auto;
    int budget = 0; // rounds after the baseline (0: no limit)
    int candidatesPerRound = 1;
};

struct PhaseChanged {
    int round = 0;
    LoopPhase phase = LoopPhase::Propose;
    std::string detail;
};

// A piece of a proposer's streamed text (an LLM's reply as it arrives); may come from another thread.
struct ProposerText {
    std::string role; // "planner", "coder", "debugger", "single"
    int alternative = 0; // 0..k-1 when k alternatives stream at once
    std::string text;
};

// A proposal waits for the engineer's review (published just before the review gate is asked).
struct ReviewRequested {
    int round = 0;
    Proposal proposal;
    Candidate best; // what the proposal is compared against
    TunableValues bestTunables;
};

struct IterationFinished {
    IterationOutcome outcome;
};

// A new best: the baseline first, then each candidate kept.
struct IncumbentChanged {
    IterationOutcome best;
    std::optional<int> previousIndex; // the iteration it replaces
};

struct SessionFinished {
    std::string status; // "finished", "cancelled", "failed"
    LoopSummary summary;
};

using LoopEvent = std::variant<SessionStarted, PhaseChanged, ProposerText, ReviewRequested, IterationFinished,
    IncumbentChanged, SessionFinished>;
const char* loopEventName(const LoopEvent& event); // "session-started", "phase", ...

class LoopEvents {
public:
    using Subscriber = std::function<void(const std::shared_ptr<const LoopEvent>&)>;

    // Returns a handle for unsubscribe. Subscribers are called on the publishing thread, one event
    // at a time, in publishing order.
    int subscribe(Subscriber subscriber);
    // When it returns, the subscriber is not running and will not be called again (unless called
    // from within that subscriber, which may unsubscribe itself).
    void unsubscribe(int handle);
    void publish(LoopEvent event);

private:
    std::recursive_mutex m_mutex; // held while delivering, so unsubscribe waits for a delivery in flight
    std::vector<std::pair<int, Subscriber>> m_subscribers;
    int m_next = 1;
};

} // namespace kl
