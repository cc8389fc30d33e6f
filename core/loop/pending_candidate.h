#pragma once
// Inside the loop only: a candidate between CandidatePipeline::begin (cached, or compiled and queued on
// the runner pool, or failed before the runner) and CandidatePipeline::complete (recorded).
#include "core/loop/evaluation.h"
#include "core/loop/proposer_briefing.h"
#include "core/loop/tuning_session.h"
#include "core/pool/compile_stage.h"
#include "core/pool/runner_pool.h"

#include <chrono>
#include <future>
#include <optional>
#include <string>

namespace kl {

struct PendingCandidate {
    EvaluatedCandidate e;
    EvaluationArtifacts a;
    std::optional<std::future<pool::PooledResult>> job;
    // The code listings of the compile record, made beside the job (nvdisasm can take longer than
    // the job: docs/measurements.md, 2026-12-03 08:57Z); written to the store once made, never waited for
    // by the round.
    std::future<store::StoredListings> listings;
    Clock::time_point start;
    int round = 0;
    bool awaitingCompile = false; // not cached: compileAndQueue comes next
    std::string tag; // "r<round>.<n>": the request's id and the trace's name for it (KL_LOOP_TRACE)
    pool::TurnOrder* order = nullptr; // compiled side by side: queued in this order
    int turn = 0;
    double profileMinSpeedup = 0.0; // the request's, fixed when it begins (LoopConfig::profileWithin)
};

// Milliseconds since `t`, for the phases and the trace.
inline double msSince(Clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The same candidate and tunables, the same key: a candidate row, or a compile (compiledAheadKey).
std::string candidateKey(const std::string& sourceHash, const TunableValues& tunables);

// The key a proposal is compiled ahead under (core/loop/compile_ahead.h): what its compile reads.
std::string compiledAheadKey(const Proposal& proposal);

} // namespace kl
