// The adaptive timing's stopping rule: the order-statistics interval of the median has the ranks of
// the binomial tables, covers the true median of a skewed, outlier-ridden distribution at least 95%
// of the time, and the rule stops at the minimum on tight samples, repeats on loose ones, and always
// ends (max reps, time cap).
#include "core/verify/median_interval.h"

#include <QTest>

#include <random>

using namespace kl::verify;

class MedianIntervalTest : public QObject {
    Q_OBJECT

private slots:
    void ranksMatchTheBinomialTables_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("low");
        QTest::addColumn<int>("high");
        QTest::newRow("6") << 6 << 1 << 6;
        QTest::newRow("10") << 10 << 2 << 9;
        QTest::newRow("20") << 20 << 6 << 15;
        QTest::newRow("100") << 100 << 40 << 61;
        QTest::newRow("1500") << 1500 << 712 << 789;
    }
    void ranksMatchTheBinomialTables()
    {
        QFETCH(int, n);
        QFETCH(int, low);
        QFETCH(int, high);
        std::vector<double> samples;
        for (int i = n; i >= 1; --i) // unsorted on purpose
            samples.push_back(i);
        const MedianInterval m = medianInterval(samples);
        QVERIFY(m.known);
        QCOMPARE(m.lowRank, low);
        QCOMPARE(m.highRank, high);
        QCOMPARE(m.low, double(low));
        QCOMPARE(m.high, double(high));
        QCOMPARE(m.median, (n + 1) / 2.0);
    }

    void tooFewSamplesIsUnknown()
    {
        QVERIFY(!medianInterval({ 1, 2, 3, 4, 5 }).known);
        QVERIFY(!medianInterval({}).known);
        QVERIFY(std::isinf(medianInterval({ 1, 2, 3 }).relativeHalfWidth()));
    }

    void coversTheTrueMedianOfASkewedDistribution()
    {
        // Kernel-like times: 50 us, lognormal spread 1%, and 3% of runs 2-5x slower.
        std::mt19937_64 random(42);
        std::lognormal_distribution<double> body(std::log(50.0), 0.01);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        auto draw = [&] { return unit(random) < 0.03 ? body(random) * (2.0 + 3.0 * unit(random)) : body(random); };
        std::vector<double> big;
        for (int i = 0; i < 200000; ++i)
            big.push_back(draw());
        const double trueMedian = medianInterval(big).median;
        for (const int n : { 20, 50, 200 }) {
            int covered = 0;
            const int trials = 2000;
            for (int t = 0; t < trials; ++t) {
                std::vector<double> s;
                for (int i = 0; i < n; ++i)
                    s.push_back(draw());
                const MedianInterval m = medianInterval(s);
                covered += m.low <= trueMedian && trueMedian <= m.high;
            }
            QVERIFY2(covered >= trials * 94 / 100,
                qPrintable(QStringLiteral("n=%1: %2 of %3").arg(n).arg(covered).arg(trials)));
        }
    }

    void stopsAtTheMinimumOnTightSamplesEvenWithOutliers()
    {
        std::vector<double> s;
        for (int i = 0; i < 18; ++i)
            s.push_back(50.0 + 0.01 * (i % 5));
        s.push_back(400.0);
        s.push_back(900.0);
        const StopRule rule { 0.005, 20, 2000, 1000.0 };
        QCOMPARE(shouldStop(s, 1.0, rule), std::optional(StopReason::Interval));
        s.pop_back();
        QCOMPARE(shouldStop(s, 1.0, rule), std::nullopt); // 19 < minReps
    }

    void repeatsOnLooseSamplesUntilACapEndsIt()
    {
        std::mt19937_64 random(7);
        std::normal_distribution<double> wide(50.0, 5.0); // cv 10%: +-0.5% needs thousands of runs
        std::vector<double> s;
        const StopRule rule { 0.005, 20, 300, 1000.0 };
        std::optional<StopReason> stop;
        while (!(stop = shouldStop(s, 1.0, rule)))
            s.push_back(wide(random));
        QCOMPARE(*stop, StopReason::MaxReps);
        QCOMPARE(s.size(), std::size_t { 300 });

        s.resize(40);
        QCOMPARE(shouldStop(s, 999.0, rule), std::nullopt);
        QCOMPARE(shouldStop(s, 1000.0, rule), std::optional(StopReason::TimeCap));
        // A looser target is met by the same samples.
        const StopRule loose { 0.1, 20, 300, 1000.0 };
        QCOMPARE(shouldStop(s, 1.0, loose), std::optional(StopReason::Interval));
        QCOMPARE(stopReasonName(StopReason::TimeCap), std::string_view("time-cap"));
    }
};

QTEST_GUILESS_MAIN(MedianIntervalTest)
#include "test_median_interval.moc"
