// The loop's decisions without a GPU: noise-aware comparison, stop rules, and the tuner's search
// (valid configurations only, no repeats, findings steer the order, exhaustive covers the space).
#include "core/findings/finding.h"
#include "core/loop/comparison.h"
#include "core/loop/proposer_briefing.h"
#include "core/loop/round_decision.h"
#include "core/loop/scaling.h"
#include "core/loop/stop_policy.h"
#include "core/loop/tuning_session.h"
#include "core/model/hash.h"
#include "core/model/problem.h"
#include "core/tuner/move_ranking.h"
#include "core/tuner/search_space.h"
#include "core/tuner/tuner.h"
#include "core/verify/statistics.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <random>
#include <set>

namespace {

std::vector<double> samples(double median, double spread, int n, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> d(median, spread);
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
        v.push_back(d(rng));
    return v;
}

kl::Problem layernorm()
{
    return kl::loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json");
}

kl::ProposalContext contextFor(const kl::Problem& p, int remaining)
{
    kl::ProposalContext ctx;
    ctx.problem = &p;
    ctx.best = p.baseline;
    ctx.bestTunables = p.baseline.defaults();
    ctx.bestSourceHash = kl::contentHash(p.baseline.source);
    ctx.remainingBudget = remaining;
    return ctx;
}

} // namespace

class TestLoopDecisions : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // median() finds the middle order statistics without sorting: the very value the sorted quantile
    // gives (bit for bit), odd and even sizes, ties included, so no comparison moves.
    void medianIsTheSortedQuantile()
    {
        std::mt19937_64 rng(17);
        for (int n = 1; n <= 64; ++n)
            for (int trial = 0; trial < 4; ++trial) {
                std::vector<double> v(static_cast<std::size_t>(n));
                std::normal_distribution<double> d(50.0, 3.0);
                for (auto& x : v)
                    x = trial == 3 ? std::round(d(rng)) : d(rng); // the last trial: many ties
                auto sorted = v;
                std::sort(sorted.begin(), sorted.end());
                const double expected = kl::verify::quantile(sorted, 0.5);
                const double got = kl::median(v);
                QVERIFY2(std::memcmp(&got, &expected, sizeof got) == 0,
                    qPrintable(QStringLiteral("n=%1: %2 vs %3").arg(n).arg(got, 0, 'g', 17).arg(expected, 0, 'g', 17)));
            }
        QCOMPARE(kl::median({}), 0.0);
    }

    void clearlyFasterIsFaster()
    {
        const std::vector<kl::SizeTiming> a { { "s", samples(50, 0.5, 200, 1), 100 } };
        const std::vector<kl::SizeTiming> b { { "s", samples(60, 0.5, 200, 2), 100 } };
        const auto c = kl::compareTimings(a, b);
        QVERIFY(c.faster);
        QVERIFY(!c.slower);
        QVERIFY(c.speedup > 1.15 && c.speedup < 1.25);
        QVERIFY(c.low <= c.speedup && c.speedup <= c.high);
        QVERIFY(kl::compareTimings(b, a).slower);
    }

    void sameDistributionIsNoise()
    {
        // Two runs of one kernel: never "faster", whatever the luck of the draw.
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            const std::vector<kl::SizeTiming> a { { "s", samples(50, 2.0, 100, seed), 100 } };
            const std::vector<kl::SizeTiming> b { { "s", samples(50, 2.0, 100, seed + 1000), 100 } };
            QVERIFY2(!kl::compareTimings(a, b).faster,
                qPrintable(QString::fromStdString(kl::compareTimings(a, b).summary())));
        }
    }

    // 1.008x [1.006, 1.012] is faster, but under the 1 % that counts: never "within noise", which an
    // interval excluding 1 contradicts (issue 28); an interval holding 1 is noise.
    void smallGainIsNotCalledNoise()
    {
        kl::Comparison c;
        c.speedup = 1.008;
        c.low = 1.006;
        c.high = 1.012;
        QCOMPARE(QString::fromStdString(c.summary()),
            QStringLiteral("1.008x [1.006, 1.012] faster, under the gain that counts"));
        c.low = 0.998;
        QCOMPARE(QString::fromStdString(c.summary()), QStringLiteral("1.008x [0.998, 1.012] within noise"));
    }

    void baselineNormalisationCancelsDrift()
    {
        // The same kernel measured in a job where the whole GPU ran 10% slower (baseline too).
        const std::vector<kl::SizeTiming> slowJob { { "s", samples(55, 0.3, 200, 3), 110 } };
        const std::vector<kl::SizeTiming> fastJob { { "s", samples(50, 0.3, 200, 4), 100 } };
        const auto c = kl::compareTimings(slowJob, fastJob);
        QVERIFY(!c.faster);
        QVERIFY(!c.slower);
    }

    void losingOnOneSizeIsReported()
    {
        const std::vector<kl::SizeTiming> a { { "big", samples(50, 0.3, 200, 5), 100 },
            { "small", samples(12, 0.1, 200, 6), 10 } };
        const std::vector<kl::SizeTiming> b { { "big", samples(70, 0.3, 200, 7), 100 },
            { "small", samples(10, 0.1, 200, 8), 10 } };
        const auto c = kl::compareTimings(a, b);
        QVERIFY(c.losesOnSomeSize);
        QCOMPARE(c.sizes.size(), std::size_t(2));
        QVERIFY(c.sizes[1].high < 1.0);
        QVERIFY(c.speedup > 1.0); // geometric mean still favours it
    }

    // A round's decision (core/loop/round_decision.h): the surest gain beyond the noise is kept, the rest
    // reverted with the reason the proposer sees; with no kernel yet the fastest that passed is kept.
    void roundDecisionKeepsTheSurestGain()
    {
        const auto timed = [](double median, std::uint64_t seed, std::string category = "passed") {
            kl::EvaluatedCandidate e;
            e.outcome.category = std::move(category);
            e.outcome.medianUs = median;
            e.timings = { { "main", samples(median, median * 0.002, 40, seed), 100.0 } };
            return e;
        };
        kl::Incumbent incumbent;
        incumbent.timings = { { "main", samples(100.0, 0.2, 40, 1), 100.0 } };
        std::vector<kl::EvaluatedCandidate> batch { timed(99.9, 2), timed(80.0, 3), timed(70.0, 4, "mismatch") };
        batch[2].outcome.detail = "max abs error 0.5";
        const auto d = kl::decideRound(batch, &incumbent, 0.01);
        QCOMPARE(d.kept, std::optional<std::size_t>(1));
        QVERIFY(d.gain > 0.2 && d.gain < 0.3);
        QVERIFY(batch[1].outcome.kept && !batch[0].outcome.kept && !batch[2].outcome.kept);
        QCOMPARE(d.decisions.size(), std::size_t(3));
        QCOMPARE(d.decisions[1].kind, kl::store::DecisionRecord::Kind::AutoKeep);
        QVERIFY(
            QString::fromStdString(d.decisions[0].reason).startsWith(QStringLiteral("not faster beyond the noise")));
        QCOMPARE(d.decisions[2].reason, std::string("mismatch: max abs error 0.5"));

        std::vector<kl::EvaluatedCandidate> first { timed(90.0, 5), timed(85.0, 6) };
        const auto f = kl::decideRound(first, nullptr, 0.01);
        QCOMPARE(f.kept, std::optional<std::size_t>(1));
        QCOMPARE(f.gain, 0.0);
        QVERIFY(QString::fromStdString(f.decisions[1].reason).startsWith(QStringLiteral("the first kernel")));
    }

    void stopRules()
    {
        kl::StopPolicy policy;
        policy.maxIterations = 10;
        policy.targetSpeedup = 2.5;
        kl::LoopProgress p;
        QVERIFY(!kl::stopReason(policy, p));
        p.bestSpeedup = 2.6;
        QVERIFY(kl::stopReason(policy, p)->find("target") != std::string::npos);
        p.bestSpeedup = 1.5;
        p.gains = { 0.3, 0.02, 0.01 };
        QVERIFY(kl::stopReason(policy, p)->find("consecutive") != std::string::npos);
        p.gains = { 0.02, 0.3 };
        QVERIFY(!kl::stopReason(policy, p));
        p.iterations = 10;
        QVERIFY(kl::stopReason(policy, p)->find("budget") != std::string::npos);
        policy.patience = 0;
        p.iterations = 3;
        p.gains = { 0, 0, 0, 0 };
        QVERIFY(!kl::stopReason(policy, p));
        policy.maxWallSeconds = 5;
        p.wallSeconds = 6;
        QVERIFY(kl::stopReason(policy, p)->find("time") != std::string::npos);
    }

    // Patience is about measured gains: rounds whose proposals all failed at the proposer count
    // toward their own limit instead, and any round that ran something resets that count.
    void failedRoundsCountApartFromPatience()
    {
        kl::StopPolicy policy; // patience 2, maxFailedRounds 3
        kl::LoopProgress p;
        const kl::RoundTally failed { 0.0, false, 1, 1, "proposer.http-5xx" };
        kl::recordRound(p, failed);
        kl::recordRound(p, failed);
        QCOMPARE(p.iterations, 2);
        QVERIFY(p.gains.empty());
        QVERIFY(!kl::stopReason(policy, p)); // two failed rounds are not two rounds without gain
        kl::recordRound(p, failed);
        QCOMPARE(QString::fromStdString(*kl::stopReason(policy, p)),
            QStringLiteral("3 consecutive rounds gave no candidate to run (the last: proposer.http-5xx)"));

        kl::LoopProgress q;
        kl::recordRound(q, failed);
        kl::recordRound(q, failed);
        kl::recordRound(q, { 0.0, false, 1, 0, {} }); // ran, but did not pass: neither count
        QCOMPARE(q.failedRounds, 0);
        QVERIFY(q.gains.empty());
        kl::recordRound(q, { 0.01, true, 2, 1, "proposer.no-code" }); // one of two failed: not a failed round
        kl::recordRound(q, { 0.0, true, 1, 0, {} });
        QCOMPARE(q.gains, (std::vector<double> { 0.01, 0.0 }));
        QVERIFY(kl::stopReason(policy, q)->find("2 consecutive measured rounds") != std::string::npos);
        policy.maxFailedRounds = 0;
        for (int i = 0; i < 10; ++i)
            kl::recordRound(p, failed);
        policy.maxIterations = 0;
        QVERIFY(!kl::stopReason(policy, p)); // 0: no limit
    }

    void passAndSpeedupAtK()
    {
        kl::ScalingTally t;
        QVERIFY(!t.passAtK() && !t.speedupAtK()); // no rounds, no figure (not 0)
        t.addRound(true, 1.21);
        t.addRound(false, std::nullopt); // nothing correct: counts 0 for pass@k, nothing for speedup@k
        t.addRound(true, 0.9); // correct but slower than the incumbent
        t.addRound(true, std::nullopt); // correct, no timing comparison
        QCOMPARE(t.rounds(), 4);
        QCOMPARE(*t.passAtK(), 0.75);
        QVERIFY(std::abs(*t.speedupAtK() - std::sqrt(1.21 * 0.9)) < 1e-12);
        kl::ScalingTally failing;
        failing.addRound(false, std::nullopt);
        QCOMPARE(*failing.passAtK(), 0.0);
        QVERIFY(!failing.speedupAtK()); // no correct candidate, no speedup figure
    }

    void searchSpaceHonoursConstraints()
    {
        const auto p = layernorm();
        kl::SearchSpace space(p, p.baseline);
        QCOMPARE(space.cartesianSize(), std::size_t(6 * 4 * 5 * 2)); // THREADS, VEC, CACHE, TANH
        QVERIFY(space.enumerated());
        // CACHE * VEC <= 32 removes CACHE=8 with VEC=8 for every THREADS and TANH.
        QCOMPARE(space.all().size(), std::size_t((6 * 4 * 5 - 6) * 2));
        for (const auto& v : space.all())
            QVERIFY(v.at("CACHE") * v.at("VEC") <= 32);
        for (const auto& n : space.neighbours(p.baseline.defaults()))
            QVERIFY(space.valid(n));
        QCOMPARE(kl::roleOf("THREADS"), kl::TunableRole::Threads);
        QCOMPARE(kl::roleOf("VEC"), kl::TunableRole::Vector);
        QCOMPARE(kl::roleOf("CACHE"), kl::TunableRole::WorkPerThread);
        QCOMPARE(kl::roleOf("BLOCK_M"), kl::TunableRole::Tile);
    }

    void findingsSteerTheFirstMoves()
    {
        const auto p = layernorm();
        auto ctx = contextFor(p, 5);
        kl::Finding f;
        f.id = "bandwidth.under-ceiling";
        f.tunerHints = { kl::hint::kWiderVectors };
        ctx.bestFindings = { f };
        kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 3 });
        const auto proposals = tuner.propose(ctx, 1, nullptr);
        QCOMPARE(proposals.size(), std::size_t(1));
        QVERIFY2(proposals[0].tunables.at("VEC") > 1, proposals[0].hypothesis.c_str());
        QVERIFY(proposals[0].hypothesis.find("wider-vectors") != std::string::npos);

        f.tunerHints = { kl::hint::kFewerThreads };
        ctx.bestFindings = { f };
        const auto fewer = tuner.propose(ctx, 1, nullptr);
        QVERIFY2(fewer[0].tunables.at("THREADS") < 128, fewer[0].hypothesis.c_str());
    }

    void launchRulesGiveTunablesTheirRoles()
    {
        // A Triton candidate's num_warps tunable is its thread count whatever it is called.
        const auto triton
            = kl::loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu_triton/problem.json");
        const auto roles = kl::launchRoles(triton.baseline);
        QCOMPARE(roles.at("W"), kl::TunableRole::Threads);
        QCOMPARE(roles.at("S"), kl::TunableRole::Stages);
        QVERIFY(!roles.count("BLOCK_N")); // left to the name: a tile
        QCOMPARE(kl::roleOf("W"), kl::TunableRole::Other);
        const auto cuda = layernorm();
        QCOMPARE(kl::launchRoles(cuda.baseline).at("THREADS"), kl::TunableRole::Threads);

        // So a thread hint moves W on the Triton candidate.
        auto ctx = contextFor(triton, 5);
        kl::Finding f;
        f.id = "occupancy.low";
        f.tunerHints = { kl::hint::kMoreThreads };
        ctx.bestFindings = { f };
        kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 5 });
        const auto more = tuner.propose(ctx, 1, nullptr);
        QCOMPARE(more.size(), std::size_t(1));
        QVERIFY2(more[0].tunables.at("W") > ctx.bestTunables.at("W"), more[0].hypothesis.c_str());
    }

    // A register-limited finding also points at the maxrregcount flag: a tighter cap scores up (0, no
    // cap, counts as the loosest); the other flags take no role from their names.
    void fewerRegistersTightensTheRegisterCap()
    {
        const auto candidate = kl::parseCandidate("// @kl flag maxrregcount = 0 in 0, 32, 64\n"
                                                  "// @kl flag extra_device_vectorization = 0 in 0, 1\n"
                                                  "// @kl launch k grid=(1) block=(128) args=()\n",
            "k.cu");
        kl::Guidance guidance;
        guidance.hints = { kl::hint::kFewerRegisters };
        guidance.roles = kl::launchRoles(candidate);
        QCOMPARE(guidance.roles.at("maxrregcount"), kl::TunableRole::RegisterCap);
        QCOMPARE(guidance.roles.at("extra_device_vectorization"), kl::TunableRole::Other);
        QVERIFY(kl::moveScore({ { "maxrregcount", 0 } }, { { "maxrregcount", 64 } }, guidance) > 0.0);
        QVERIFY(kl::moveScore({ { "maxrregcount", 64 } }, { { "maxrregcount", 32 } }, guidance) > 0.0);
        QVERIFY(kl::moveScore({ { "maxrregcount", 32 } }, { { "maxrregcount", 0 } }, guidance) < 0.0);
        QCOMPARE(
            kl::moveScore({ { "extra_device_vectorization", 0 } }, { { "extra_device_vectorization", 1 } }, guidance),
            0.0);
    }

    void aHintWhoseMovesLostStopsSteering()
    {
        const auto p = layernorm();
        auto ctx = contextFor(p, 5);
        kl::Finding f;
        f.id = "occupancy.registers";
        f.tunerHints = { kl::hint::kFewerThreads };
        ctx.bestFindings = { f };
        auto measured = [&](int threads, double speedup) {
            kl::EvaluatedProposal h;
            h.sourceHash = ctx.bestSourceHash;
            h.tunables = ctx.bestTunables;
            h.tunables["THREADS"] = threads;
            h.category = "passed";
            h.speedup = speedup;
            return h;
        };
        ctx.history = { measured(128, 1.0) }; // the best itself
        auto cites = [](const std::vector<kl::Proposal>& v) {
            return !v.empty() && v[0].hypothesis.find("fewer-threads") != std::string::npos;
        };
        kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 11 });
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 1.0);
        const auto first = tuner.propose(ctx, 1, nullptr);
        QVERIFY2(cites(first) && first[0].tunables.at("THREADS") == 64, first[0].hypothesis.c_str());

        ctx.history.push_back(measured(64, 0.93)); // one loss that way
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 0.5);
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kMoreThreads), 1.0); // the other direction lost nothing

        ctx.history.push_back(measured(32, 0.85)); // two: the hint is silenced
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 0.0);
        for (int i = 0; i < 8; ++i) {
            kl::Tuner fresh({ kl::TunerStrategy::Evolutionary, std::uint64_t(100 + i) });
            const auto third = fresh.propose(ctx, 1, nullptr);
            QVERIFY(!third.empty());
            QVERIFY2(!cites(third), third[0].hypothesis.c_str());
        }
        ctx.history.back().speedup = 1.2; // THREADS=32 measured faster: not a loss
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 0.5);
        ctx.history.back().category = "rejected"; // an engineer's rejection is not a measurement
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 0.5);
        ctx.history.back().category = "compile.resources"; // a failure that way is a loss
        QCOMPARE(kl::hintCredibility(ctx, kl::hint::kFewerThreads), 0.0);
    }

    void tunerNeverRepeatsAndExhaustiveCoversTheSpace()
    {
        const auto p = layernorm();
        kl::SearchSpace space(p, p.baseline);
        auto ctx = contextFor(p, 1000);
        kl::Tuner tuner({ kl::TunerStrategy::Auto, 9 });
        QCOMPARE(tuner.effectiveStrategy(ctx, 1), kl::TunerStrategy::Exhaustive);
        std::set<std::string> seen { kl::SearchSpace::key(ctx.bestTunables) };
        for (int round = 0; round < 200; ++round) {
            const auto batch = tuner.propose(ctx, 4, nullptr);
            if (batch.empty())
                break;
            for (const auto& prop : batch) {
                QVERIFY(space.valid(prop.tunables));
                QVERIFY2(seen.insert(kl::SearchSpace::key(prop.tunables)).second, "a configuration was proposed twice");
                kl::EvaluatedProposal h;
                h.sourceHash = ctx.bestSourceHash;
                h.tunables = prop.tunables;
                h.category = "passed";
                h.speedup = 1.0;
                ctx.history.push_back(h);
            }
        }
        QCOMPARE(seen.size(), space.all().size());

        auto small = contextFor(p, 3);
        QCOMPARE(tuner.effectiveStrategy(small, 1), kl::TunerStrategy::Evolutionary);
        kl::Tuner random({ kl::TunerStrategy::Random, 4 });
        for (const auto& prop : random.propose(small, 5, nullptr))
            QVERIFY(space.valid(prop.tunables));
    }
};

QTEST_GUILESS_MAIN(TestLoopDecisions)
#include "test_loop_decisions.moc"
