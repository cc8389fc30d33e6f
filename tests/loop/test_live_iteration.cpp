// What a window following the loop shows of each iteration, built from the outcome the loop announced
// (core/report/live_iteration.h), against what the store gives for it once the session is over: the
// same history row (its times aside) and the same chart figures, for measured candidates, a proposer's
// failure, a rejected proposal and the baseline, on the runner double and a real SQLite store.
#include "core/figures/iteration_figures.h"
#include "core/loop/tuning_session.h"
#include "core/report/live_iteration.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"

#include "loop_support.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>
#include <mutex>
#include <set>

using namespace kl;

namespace {

// Rejects every second proposal it is asked about: refused rows beside measured ones.
class EverySecondRejected : public ReviewGate {
public:
    ReviewDecision review(const Proposal&, const ProposalContext&) override
    {
        if (++m_asked % 2 == 0)
            return { ReviewDecision::Kind::Reject, "not this one", {}, std::nullopt, {} };
        return {};
    }

private:
    int m_asked = 0;
};

// A proposer whose second round fails (proposer.internal): a failure row with a result and no candidate run.
class FailingSecondRound : public Proposer {
public:
    explicit FailingSecondRound(Proposer& inner)
        : m_inner(inner)
    {
    }
    std::string kind() const override { return m_inner.kind(); }
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override
    {
        if (context.iteration == 2)
            throw std::runtime_error("a proposer that failed on purpose");
        return m_inner.propose(context, count, cancel);
    }

private:
    Proposer& m_inner;
};

bool same(const std::optional<double>& a, const std::optional<double>& b)
{
    if (a.has_value() != b.has_value())
        return false;
    return !a || std::abs(*a - *b) <= 1e-9 * std::max(1.0, std::abs(*b));
}

#define KL_SAME(a, b, what)                                                                                            \
    QVERIFY2(same(a, b), qPrintable(QStringLiteral("%1 of iteration %2").arg(QLatin1String(what)).arg(index)))

} // namespace

class TestLiveIteration : public QObject {
    Q_OBJECT

private:
    void compareWithStore(LoopMode mode)
    {
        QTemporaryDir dir;
        auto store = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        const Problem problem = test::layernormProblem();
        RunnerClient runner(test::modelRunner());
        auto config = test::loopConfig(3, 2, "tuner:evolutionary");
        config.mode = mode;
        TuningSession session(problem, store, runner, config);
        EverySecondRejected gate;
        session.setReviewGate(&gate);
        std::mutex mutex;
        std::vector<IterationOutcome> announced;
        session.events().subscribe([&](const std::shared_ptr<const LoopEvent>& e) {
            if (const auto* f = std::get_if<IterationFinished>(&*e)) {
                std::lock_guard lock(mutex);
                announced.push_back(f->outcome);
            }
        });
        Tuner tuner({ TunerStrategy::Evolutionary, 5 });
        FailingSecondRound proposer(tuner);
        const auto summary = session.run(proposer);

        const auto rows = store.listIterations(summary.sessionId);
        const auto stored = figures::readFigures(store, summary.sessionId);
        QCOMPARE(announced.size(), rows.size());
        QCOMPARE(stored.size(), rows.size());
        std::set<std::string> states;
        for (const IterationOutcome& outcome : announced) {
            const int index = outcome.index;
            const auto live = report::liveIteration(outcome);
            const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.index == index; });
            QVERIFY(row != rows.end());
            states.insert(row->state + "/" + row->category);
            const auto& r = live.row;
            QCOMPARE(r.round, row->round);
            QCOMPARE(r.candidateId, row->candidateId);
            QCOMPARE(r.proposer, row->proposer);
            QCOMPARE(r.proposerDetail, row->proposerDetail);
            QCOMPARE(r.hypothesis, row->hypothesis);
            KL_SAME(r.predictedSpeedup, row->predictedSpeedup, "predicted speedup");
            QCOMPARE(r.state, row->state);
            QCOMPARE(r.status, row->status);
            QCOMPARE(r.category, row->category);
            KL_SAME(r.medianUs, row->medianUs, "median");
            KL_SAME(r.gbps, row->gbps, "GB/s");
            KL_SAME(r.pctOfCopy, row->pctOfCopy, "% of copy");
            KL_SAME(r.speedup, row->speedup, "speedup");
            QCOMPARE(r.topFindingRule, row->topFindingRule);
            QCOMPARE(r.topFindingMessage, row->topFindingMessage);
            QCOMPARE(r.lastDecision, row->lastDecision);
            if (row->candidateId)
                QCOMPARE(live.parentCandidateId, store.candidate(*row->candidateId)->parentId);

            const auto& f = live.figures;
            const auto at = std::find_if(stored.begin(), stored.end(), [&](const auto& s) { return s.index == index; });
            QVERIFY(at != stored.end());
            QCOMPARE(f.status, at->status);
            QCOMPARE(f.category, at->category);
            QCOMPARE(f.passed, at->passed);
            QCOMPARE(f.proposer, at->proposer);
            QCOMPARE(f.registers, at->registers);
            KL_SAME(f.theoreticalOccupancy, at->theoreticalOccupancy, "theoretical occupancy");
            QCOMPARE(f.occupancyLimiter, at->occupancyLimiter);
            QCOMPARE(f.endpoint, at->endpoint);
            QCOMPARE(f.gpuModel, at->gpuModel);
            QCOMPARE(f.gpu, at->gpu);
            QCOMPARE(f.sizes.size(), at->sizes.size());
            for (std::size_t i = 0; i < f.sizes.size(); ++i) {
                const auto& a = f.sizes[i];
                const auto& b = at->sizes[i];
                QCOMPARE(a.size, b.size);
                KL_SAME(a.medianUs, b.medianUs, "size median");
                KL_SAME(a.p20Us, b.p20Us, "p20");
                KL_SAME(a.p80Us, b.p80Us, "p80");
                KL_SAME(a.baselineUs, b.baselineUs, "baseline median");
                KL_SAME(a.gbps, b.gbps, "size GB/s");
                KL_SAME(a.pctOfCopy, b.pctOfCopy, "size % of copy");
                KL_SAME(a.speedup, b.speedup, "size speedup");
                KL_SAME(a.pctOfSol, b.pctOfSol, "% of SOL");
                QCOMPARE(a.solBound, b.solBound);
                KL_SAME(a.achievedOccupancy, b.achievedOccupancy, "achieved occupancy");
                QCOMPARE(a.stalls.size(), b.stalls.size());
            }
        }
        // Every kind of row was compared: the baseline and measured candidates, a proposer's failure and,
        // in review mode, a rejected proposal.
        QVERIFY2(states.count("done/passed"), qPrintable(QString::number(states.size())));
        QVERIFY(states.count("proposer-error/proposer.internal"));
        if (mode == LoopMode::Review)
            QVERIFY(states.count("refused/"));
    }

private Q_SLOTS:
    void autoModeRowsAndFiguresAreTheStores() { compareWithStore(LoopMode::Auto); }
    void reviewModeRowsAndFiguresAreTheStores() { compareWithStore(LoopMode::Review); }
};

QTEST_GUILESS_MAIN(TestLiveIteration)
#include "test_live_iteration.moc"
