// The rule the runner applies with it
// (core/protocol/profile_policy.h): which candidates get CUPTI counters under --profile-candidates promising.
#include "core/protocol/profile_policy.h"

#include <QTest>

using namespace kl;
using namespace kl::protocol;

namespace {

CaseTiming timed(const char* label, std::optional<double> speedup)
{
    CaseTiming c;
    c.label = label;
    c.speedupVsBaseline = speedup;
    return c;
}

} // namespace

class TestProfilePolicy : public QObject {
    Q_OBJECT
private slots:
    void speedupIsTheGeometricMeanOverTheTimedCases()
    {
        Timing t;
        t.cases = { timed("16384x2048", 2.0), timed("2048x16384", 8.0) };
        QCOMPARE(*speedupOverBaseline(t), 4.0);
        t.cases.push_back(timed("1x1", std::nullopt)); // a case timed without a baseline: no figure
        QVERIFY(!speedupOverBaseline(t));
        QVERIFY(!speedupOverBaseline(Timing {}));
    }

    void onlyCandidatesUnderTheThresholdAreSkipped()
    {
        Timing t;
        t.cases = { timed("8192x4096", 1.50) };
        QVERIFY(profileSkipReason(t, 0.0).empty()); // the default: every candidate
        QVERIFY(profileSkipReason(t, 1.50).empty()); // as fast as asked
        QVERIFY(profileSkipReason(t, 1.40).empty());
        const std::string skip = profileSkipReason(t, 1.71);
        QCOMPARE(
            QString::fromStdString(skip), QStringLiteral("not profiled: 1.50x the baseline, under the 1.71x asked"));
        Timing unknown;
        unknown.cases = { timed("8192x4096", std::nullopt) };
        QVERIFY(profileSkipReason(unknown, 1.71).empty()); // nothing to judge by: profiled
    }
};

QTEST_GUILESS_MAIN(TestProfilePolicy)
#include "test_profile_policy.moc"
