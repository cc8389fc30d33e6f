#pragma once
// What every job of a session is measured with: the runners started (their device and its limits), the
// problem's reference and baseline kernel compiled once and reused by every job, and the problem's row
// in the store. A loop and an evaluation into a stored session start the same way. No Qt.
#include "core/compile/compiler.h"
#include "core/loop/proposer_briefing.h"
#include "core/model/problem.h"
#include "core/protocol/messages.h"
#include "core/runnerclient/evaluate_job.h"

#include <optional>
#include <string>

namespace kl {

namespace pool {
class RunnerPool;
} // namespace pool
namespace store {
class Store;
} // namespace store

struct MeasuringSetup {
    protocol::DeviceDescription device;
    DeviceLimits limits;
    std::string problemHash; // the problem's row in the store
    CompiledCandidate reference;
    std::optional<CompiledCandidate> baseline; // none: no kernel yet, PyTorch eager is the baseline
    std::string toolkit; // the compiler's version, part of every cache key
};

// Starts `runners` while the reference and the baseline compile (neither needs the other), then adds
// the problem to `store`. Throws kl::Error "runner.no-device" when no runner has a GPU (before anything
// is stored), "problem.reference-compile" and "problem.baseline-compile".
MeasuringSetup startMeasuring(const Problem& problem, pool::RunnerPool& runners, store::Store& store);

} // namespace kl
