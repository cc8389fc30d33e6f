#pragma once
// One candidate through the pipeline: the cache, or compile and static analysis and the runner's
// verify/time/profile job queued on the pool; then findings and the rows that record it. begin() and
// complete() are apart so that a round's jobs run side by side while the loop reads them in order, and
// compileAndQueue() may run on several threads at once (it touches no store). The runner's reply is
// decoded once, at the protocol boundary; the figures read that typed value. No Qt.
#include "core/compile/compiler.h"
#include "core/loop/loop_events.h"
#include "core/loop/tuning_session.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

namespace kl {

class IterationRecorder;
class LookAhead;
struct MeasuringSetup;
struct PendingCandidate;
namespace pool {
class RunnerPool;
} // namespace pool
namespace store {
class Store;
} // namespace store

class CandidatePipeline {
public:
    // Jobs of `problem` measured on `runners` with `setup`, recorded through `recorder`, phases told on
    // `events`. `config` is the loop's (read, never kept as a copy: its stop rules may change).
    CandidatePipeline(const Problem& problem, store::Store& store, pool::RunnerPool& runners, const LoopConfig& config,
        const MeasuringSetup& setup, IterationRecorder& recorder, LoopEvents& events);
    ~CandidatePipeline();

    // The next round's guesses compiled ahead (null: none): compileAndQueue takes a proposal's from it.
    void setLookAhead(LookAhead* lookAhead) { m_lookAhead = lookAhead; }

    // The cache, then (unless `queueNow` is false: the round compiles its candidates side by side)
    // compile and static analysis here, the runner's job queued on the pool. `best`: the loop's
    // incumbent (null: none yet), whose speedup decides whether the candidate is profiled.
    std::unique_ptr<PendingCandidate> begin(const Proposal& proposal, int round, const Incumbent* best,
        const std::atomic<bool>* cancel, bool queueNow = true);
    // Compile, static analysis and the pool's job: thread-safe (no store access).
    void compileAndQueue(PendingCandidate& pending, const std::atomic<bool>* cancel);
    // Waits for the runner's answer, then findings and the rows that record it, on the loop's thread.
    // `parentId`: the candidate it was built on; `incumbent`: what it is compared with (null: nothing
    // measured yet). A cancelled candidate is not recorded.
    EvaluatedCandidate complete(
        PendingCandidate& pending, std::optional<std::int64_t> parentId, const Incumbent* incumbent);
    // begin, then complete: one candidate alone.
    EvaluatedCandidate evaluate(
        const Proposal& proposal, int round, std::optional<std::int64_t> parentId, const std::atomic<bool>* cancel);

    CompileOptions compileOptions() const;
    int usableRunners() const;
    const MeasuringSetup& setup() const { return m_setup; }

private:
    void phase(int round, LoopPhase phase, const std::string& detail);

    const Problem& m_problem;
    store::Store& m_store;
    pool::RunnerPool& m_pool;
    const LoopConfig& m_config;
    const MeasuringSetup& m_setup;
    IterationRecorder& m_recorder;
    LoopEvents& m_events;
    LookAhead* m_lookAhead = nullptr;
    std::atomic<int> m_begun { 0 }; // candidates begun, for their request ids
};

} // namespace kl
