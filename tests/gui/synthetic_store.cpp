#include "synthetic_store.h"

#include "core/findings/telemetry.h"
#include "core/store/store.h"

#include <cmath>
#include <string>

namespace kl::testing {

namespace {

const char* const kSizes[] = { "4096x1024", "8192x4096" };

const char* const kStalls[] = { "long_scoreboard", "barrier", "math_pipe_throttle", "wait", "short_scoreboard",
    "not_selected", "lg_throttle", "dispatch_stall", "mio_throttle" };

// A timed median with its percentiles, the runner's other figures as a reply without them reads.
protocol::TimingSummary summary(double medianUs, double p20Us, double p80Us)
{
    protocol::TimingSummary s;
    s.medianUs = medianUs;
    s.p20Us = p20Us;
    s.p80Us = p80Us;
    s.minUs = medianUs;
    s.meanUs = medianUs;
    return s;
}

std::string sourceOf(int variant)
{
    std::string source = "// @kl kernel synthetic\n// @kl tunable VEC = 4 in 1, 2, 4, 8\n"
                         "__global__ void synthetic(const float* x, float* y, int n)\n{\n"
                         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
    for (int line = 0; line < variant % 5; ++line)
        source += "    // unrolled step " + std::to_string(line) + "\n";
    source += "    if (i < n)\n        y[i] = x[i] * 2.0f;\n}\n";
    return source;
}

} // namespace

SyntheticSession writeSyntheticStore(const std::filesystem::path& file, int iterations)
{
    store::Store::Options options;
    options.durable = false;
    store::Store s = store::Store::open(file, options);
    store::ProblemRecord problem { {}, "synthetic", "{\"name\": \"synthetic\"}", "// reference\n", sourceOf(0) };
    store::SessionRecord session;
    session.problemHash = s.addProblem(problem);
    session.label = "synthetic";
    session.device = "Synthetic GPU #0";
    session.proposer = "tuner:auto";
    session.startedMs = 1'800'000'000'000;
    const std::int64_t id = s.createSession(session);

    std::int64_t bestCandidate = 0;
    double bestUs = 1e300;
    int bestIteration = 0;
    for (int i = 1; i <= iterations; ++i) {
        store::CandidateRecord candidate;
        candidate.source = sourceOf(i / 10);
        candidate.proposer = i == 1 ? store::CandidateRecord::Proposer::Human
            : i % 3 == 0            ? store::CandidateRecord::Proposer::Llm
                                    : store::CandidateRecord::Proposer::Tuner;
        candidate.proposerDetail = i == 1 ? "baseline" : "synthetic";
        candidate.tunables = { { "VEC", 1 << (i % 4) } };
        if (bestCandidate)
            candidate.parentId = bestCandidate;
        const std::int64_t candidateId = s.addCandidate(id, candidate);
        const auto ref = s.beginIteration(id, candidateId, (i + 2) / 3);

        store::ResultRecord result;
        const bool compileError = i % 13 == 0;
        const bool wrong = !compileError && i % 7 == 0;
        result.status = compileError ? "error" : wrong ? "failed" : "ok";
        result.category = compileError ? "compile.syntax" : wrong ? "wrong-result" : "passed";
        result.toolkit = "13.0";
        Telemetry statics;
        statics.registers = 32 + (i % 5) * 8;
        statics.theoreticalOccupancy = 1.0 - (i % 5) * 0.125;
        statics.occupancyLimiter = "registers";
        result.compile.statics = statics;
        if (!compileError && !wrong) {
            const double us = 40.0 + 30.0 * std::fabs(std::sin(i * 0.7)) + 20.0 / i;
            result.medianUs = us;
            result.p20Us = us * 0.98;
            result.p80Us = us * 1.03;
            result.speedup = 72.0 / us;
            result.gbps = 134e6 / (us * 1e3);
            result.pctOfCopy = result.gbps.value() / 40.0;
            result.smClockMhz = 1980;
            protocol::Timing timing;
            timing.smClockMhz = 1980.0;
            for (int size = 0; size < 2; ++size) {
                const double scale = size == 0 ? 0.25 : 1.0;
                const double sizeUs = us * scale;
                protocol::CaseTiming timed;
                timed.label = kSizes[size];
                timed.candidate = summary(sizeUs, sizeUs * 0.98, sizeUs * 1.03);
                timed.candidate.reps = 500;
                timed.baseline = summary(72.0 * scale, 71.0 * scale, 73.0 * scale);
                timed.copy = summary(33.0 * scale, 33.0 * scale, 33.0 * scale);
                timed.gbps = 134e6 * scale / (sizeUs * 1e3);
                timed.pctOfCopy = 33.0 / us * 100.0;
                timed.speedupVsBaseline = 72.0 / us;
                timing.cases.push_back(std::move(timed));
                for (std::size_t r = 0; r < std::size(kStalls); ++r)
                    result.metrics[{ "synthetic", kSizes[size], metric::stallRatio(kStalls[r]) }]
                        = (r == 0 ? 6.0 : 1.0) * (1.0 + 0.3 * std::sin(i + static_cast<double>(r))) / (1 + r % 3);
                result.metrics[{ "synthetic", kSizes[size], metric::kAchievedOccupancy }] = 90.0 - (i % 5) * 10.0;
                result.metrics[{ "synthetic", kSizes[size], metric::kDuration }] = sizeUs * 1000.0;
            }
            result.timing = std::move(timing);
            if (us < bestUs) {
                bestUs = us;
                bestCandidate = candidateId;
                bestIteration = i;
            }
        }
        if (wrong)
            result.detail = "wrong-result at 7x1000 (fuzz, trial 0)";
        s.recordResult(ref, result);
        if (result.status == "ok")
            s.recordFindings(ref,
                { { "bandwidth.under-ceiling", "warning", "bandwidth under the copy ceiling",
                    { { "pct_of_copy", *result.pctOfCopy } }, { "move more bytes per thread" } } });
        s.finishIteration(ref);
    }
    kl::store::SessionSummary summary;
    summary.stopReason = "synthetic";
    summary.bestIteration = bestIteration;
    s.recordSessionSummary(id, summary);
    s.finishSession(id, "finished");
    return { id, iterations };
}

} // namespace kl::testing
