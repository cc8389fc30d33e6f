#pragma once
// Inside the loop only: a candidate between TuningSession::begin (cached, or compiled and queued on
// the runner pool, or failed before the runner) and TuningSession::complete (recorded).
#include "core/loop/evaluation.h"
#include "core/loop/tuning_session.h"
#include "core/pool/runner_pool.h"

#include <future>
#include <optional>

namespace kl {

struct TuningSession::Pending {
    EvaluatedCandidate e;
    EvaluationArtifacts a;
    std::optional<std::future<pool::PooledResult>> job;
    Clock::time_point start;
    int round = 0;
};

} // namespace kl
