// --profile-candidates promising through the real loop, a real store and the runner double at the
// process boundary (which applies the runner's rule, core/protocol/profile_policy.h): counters for the
// baseline and every candidate that could become the best, none for the clearly slower ones.
#include "core/loop/tuning_session.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"

#include <QTemporaryDir>
#include <QTest>

using namespace kl;
using namespace kl::test;

class TestProfileCandidates : public QObject {
    Q_OBJECT
private slots:
    void onlyPromisingCandidatesAreProfiled()
    {
        QTemporaryDir dir;
        auto store = store::Store::open(dir.filePath(QStringLiteral("p.db")).toStdString());
        const Problem problem = layernormProblem();
        RunnerClient runner(modelRunner());
        LoopConfig config = loopConfig(5, 3, "tuner:evolutionary");
        config.evaluate.profile = protocol::MetricSet::Stalls; // the set the double answers with counters
        config.profileWithin = 0.05;
        TuningSession session(problem, store, runner, config);
        std::vector<IterationOutcome> outcomes;
        session.events().subscribe([&](const std::shared_ptr<const LoopEvent>& event) {
            if (const auto* done = std::get_if<IterationFinished>(event.get()))
                outcomes.push_back(done->outcome);
        });
        Tuner tuner({ TunerStrategy::Evolutionary, 11 });
        const auto summary = session.run(tuner);
        QCOMPARE(int(outcomes.size()), 1 + 5 * 3);

        // The incumbent each round was compared with: the best kept before it.
        std::optional<double> incumbent;
        int round = -1;
        std::optional<double> bestBefore;
        int profiled = 0, skipped = 0;
        for (const IterationOutcome& o : outcomes) {
            if (o.round != round) {
                round = o.round;
                incumbent = bestBefore;
            }
            const auto detail = store.iteration(summary.sessionId, o.index);
            QVERIFY(detail && detail->result);
            const auto& profile = detail->result->profile;
            const bool hasCounters = profile && profile->status == kl::protocol::ProfileStatus::Ok;
            QCOMPARE(QString::fromStdString(o.category), QStringLiteral("passed"));
            if (!incumbent) {
                QVERIFY2(hasCounters, "the baseline is always profiled");
            } else if (*o.speedup >= *incumbent / 1.05) {
                QVERIFY2(hasCounters, qPrintable(QStringLiteral("iteration %1 could beat the incumbent").arg(o.index)));
            } else {
                QVERIFY2(!hasCounters, qPrintable(QStringLiteral("iteration %1 is slower").arg(o.index)));
                QVERIFY(profile);
                QCOMPARE(QString::fromStdString(profile->reason), QStringLiteral("slower-than-asked"));
                QVERIFY(detail->result->metrics.empty());
            }
            (hasCounters ? profiled : skipped) += 1;
            if (o.kept)
                QVERIFY2(hasCounters, "a new best always has its counters (the tuner reads them)");
            if (o.kept || !bestBefore)
                bestBefore = o.speedup;
        }
        qInfo("profiled %d, skipped %d of %d", profiled, skipped, int(outcomes.size()));
        QVERIFY(skipped > 0); // this seed's sweep has slower candidates: the policy did something
    }
};

QTEST_GUILESS_MAIN(TestProfileCandidates)
#include "test_profile_candidates.moc"
