#pragma once
// Adding the engineer's candidate to a session that exists (TuningSession::evaluateInto): its next
// iteration, built on its best so that the proposal tree in the store stays true, timed against the
// baseline in the same job. The stored session's status stays; its summary counts the candidate (and
// names it best when it is faster). No Qt.
#include "core/loop/loop_events.h"
#include "core/loop/loop_values.h"
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <atomic>
#include <cstdint>
#include <functional>

namespace kl {

class CandidatePipeline;
class IterationRecorder;
namespace store {
class Store;
} // namespace store

class SessionAppend {
public:
    // `startRunners` starts the runners once the stored session is found fit (none started for one
    // refused) and gives the pipeline the candidate goes through.
    SessionAppend(const Problem& problem, store::Store& store, IterationRecorder& recorder, LoopEvents& events,
        std::function<CandidatePipeline&()> startRunners);

    // Throws "store.unknown-session", "session.other-problem", "session.running", "session.other-gpu-model"
    // and, like a loop, "runner.no-device" before anything is stored.
    LoopSummary evaluateInto(std::int64_t sessionId, const Candidate& candidate, const TunableValues& tunables,
        const std::atomic<bool>* cancel);

private:
    const Problem& m_problem;
    store::Store& m_store;
    IterationRecorder& m_recorder;
    LoopEvents& m_events;
    std::function<CandidatePipeline&()> m_startRunners;
};

} // namespace kl
