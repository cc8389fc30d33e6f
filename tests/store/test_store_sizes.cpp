// Each main size's own figures: a runner reply with two main sizes becomes a result whose
// headline figures are all one size's and whose speedup is the geometric mean, and the store
// keeps every size's median, percentiles, GB/s, % of copy, speedup and cv, named by the problem.
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

// As docs/runner-protocol.md shows it, with a second main size whose percentiles differ.
kl::protocol::EvaluateResult twoSizeReply()
{
    return nlohmann::json::parse(R"({"v":1,"id":"8","type":"result","status":"ok","category":"passed",
      "detail":"all cases passed","device":{"name":"NVIDIA H200","compute_capability":"9.0","sm_count":132,"sm_clock_mhz":1980,
        "runtime_toolkit":"13.0"},
      "verification":{"passed":true,"cases":[]},
      "timing":{"sm_clock_mhz":1755,"cases":[
        {"label":"8192x4096","candidate":{"median_us":48.0,"p20_us":47.0,"p80_us":49.0,"cv":0.01,"samples_us":[48.0]},
         "gbps":2700.0,"pct_of_copy":72.0,"speedup_vs_baseline":2.0},
        {"label":"wide","candidate":{"median_us":27.0,"p20_us":26.5,"p80_us":27.5,"cv":0.03},
         "gbps":2400.0,"pct_of_copy":50.0,"speedup_vs_baseline":4.5}]},
      "profile":{"status":"ok","kernels":[{"kernel":"ln_gelu","case":"8192x4096",
         "metrics":{"gpu__time_duration.sum":47900.0,"dram__throughput.avg.pct_of_peak_sustained_elapsed":41.5}}]}})")
        .get<kl::protocol::EvaluateResult>();
}

// A problem file as users write it: symbols under "sizes", one unlabelled and one labelled main size.
ProblemRecord twoSizeProblem()
{
    auto problem = fx::problem("two_sizes");
    problem.json = R"({"name":"two_sizes","sizes":{"symbols":["M","N"],
        "main":[{"M":8192,"N":4096},{"label":"wide","M":1024,"N":16384}],"fuzz":[{"M":7,"N":1000}]}})";
    return problem;
}

} // namespace

class TestStoreSizes : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    fx::FreshPaths freshPath { m_dir };

    static std::int64_t sessionOf(Store& store, const ProblemRecord& problem)
    {
        SessionRecord session;
        session.problemHash = store.addProblem(problem);
        session.device = "NVIDIA H200 #0";
        session.proposer = "tuner";
        return store.createSession(session);
    }

private slots:
    void runnerReplyBecomesAResult()
    {
        const auto result = resultFromEvaluateResult(twoSizeReply());
        KL_COMPARE_TEXT(result.status, "ok");
        KL_COMPARE_TEXT(result.category, "passed");
        KL_COMPARE_TEXT(result.detail, "all cases passed");
        KL_COMPARE_TEXT(result.toolkit, "13.0");
        QCOMPARE(*result.smClockMhz, 1755.0); // the clock while timing, not at describe time
        // The headline figures are all the first size's: never a median of one size beside
        // percentiles of another (or of none).
        QCOMPARE(*result.medianUs, 48.0);
        QCOMPARE(*result.p20Us, 47.0);
        QCOMPARE(*result.p80Us, 49.0);
        QCOMPARE(*result.cv, 0.01);
        QCOMPARE(*result.gbps, 2700.0);
        QCOMPARE(*result.pctOfCopy, 72.0);
        QCOMPARE(*result.speedup, 3.0); // the geometric mean of 2 and 4.5
        QCOMPARE(result.sizes.size(), std::size_t(2));
        KL_COMPARE_TEXT(result.sizes[1].label, "wide");
        QCOMPARE(*result.sizes[1].medianUs, 27.0);
        QCOMPARE(*result.sizes[1].p20Us, 26.5);
        QCOMPARE(*result.sizes[1].p80Us, 27.5);
        QCOMPARE(*result.sizes[1].cv, 0.03);
        QCOMPARE(*result.sizes[1].gbps, 2400.0);
        QCOMPARE(*result.sizes[1].pctOfCopy, 50.0);
        QCOMPARE(*result.sizes[1].speedup, 4.5);
        QCOMPARE(*result.sizes[0].speedup, 2.0);
        QCOMPARE(result.metrics.size(), std::size_t(2));
        QCOMPARE(
            result.metrics.at({ "ln_gelu", "8192x4096", "dram__throughput.avg.pct_of_peak_sustained_elapsed" }), 41.5);
        QCOMPARE(result.timing.value().cases[0].candidate.samplesUs[0], 48.0);

        auto wrong = kl::protocol::EvaluateResult::failure("9", kl::protocol::Category::WrongResult, {});
        wrong.verification = kl::protocol::Verification { false, {} };
        const auto failed = resultFromEvaluateResult(wrong, "13.0");
        KL_COMPARE_TEXT(failed.category, "wrong-result");
        QVERIFY(!failed.medianUs && !failed.speedup && !failed.timing && failed.sizes.empty());
        KL_COMPARE_TEXT(failed.toolkit, "13.0");
    }

    void everySizeIsStoredNamedAndReadBack()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto session = sessionOf(store, twoSizeProblem());
        const auto ref = store.beginIteration(session, store.addCandidate(session, fx::candidate(1)));
        store.recordResult(ref, resultFromEvaluateResult(twoSizeReply()));
        const auto committed = store.finishIteration(ref);

        const std::map<std::string, std::int64_t> first { { "M", 8192 }, { "N", 4096 } };
        const std::map<std::string, std::int64_t> wide { { "M", 1024 }, { "N", 16384 } };
        const auto sizes = store.sizeResults(session, ref.index);
        QCOMPARE(sizes.size(), std::size_t(2));
        KL_COMPARE_TEXT(sizes[0].label, "8192x4096");
        QCOMPARE(sizes[0].values, first); // named by the problem's symbols, in their order
        QCOMPARE(sizes[1].values, wide); // by its own label
        QCOMPARE(*sizes[1].p20Us, 26.5);
        QCOMPARE(*sizes[1].p80Us, 27.5);
        QCOMPARE(*sizes[1].speedup, 4.5);
        QCOMPARE(*sizes[0].cv, 0.01);

        const auto detail = store.iteration(session, ref.index);
        QVERIFY(detail && detail->result);
        QVERIFY(detail->result->sizes == sizes);
        QCOMPARE(*detail->result->speedup, 3.0);
        const auto all = store.sizeResults(session);
        QCOMPARE(all.size(), std::size_t(1));
        QVERIFY(all.at(ref.index) == sizes);
        store.cacheStore("key", *committed.resultId);
        QVERIFY(store.cacheLookup("key")->sizes == sizes);
        QVERIFY(store.sizeResults(session, 99).empty());

        // The row the listings read holds one size's figures, whatever the caller set.
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.rows("SELECT median_us, p20_us, p80_us FROM results"), "48.0|47.0|49.0\n");
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM size_results"), 2);
    }

    // The ceiling speed of light held each size's FLOPs to, and why, comes back with the size from the
    // stored timing (no column of its own): the runner's echo of the request's compute and compute_reason.
    void eachSizeKeepsItsCeiling()
    {
        auto reply = twoSizeReply();
        auto& cases = reply.timing->cases;
        cases[0].compute = kl::Precision::Fp32;
        cases[0].computeReason = kl::CeilingReason::NotMatrixProduct;
        cases[0].pctOfSol = 61.0;
        cases[0].solBound = kl::Bound::Memory;
        cases[1].compute = kl::Precision::Fp16; // an older client's: the precision without why
        const auto result = resultFromEvaluateResult(reply);
        QCOMPARE(result.sizes[0].compute, std::optional<kl::Precision>(kl::Precision::Fp32));
        QCOMPARE(result.sizes[0].computeReason, std::optional<kl::CeilingReason>(kl::CeilingReason::NotMatrixProduct));

        auto store = Store::open(freshPath());
        const auto session = sessionOf(store, twoSizeProblem());
        const auto ref = store.beginIteration(session, store.addCandidate(session, fx::candidate(1)));
        store.recordResult(ref, result);
        store.finishIteration(ref);
        const auto sizes = store.sizeResults(session, ref.index);
        QCOMPARE(sizes.size(), std::size_t(2));
        QCOMPARE(sizes[0].compute, std::optional<kl::Precision>(kl::Precision::Fp32));
        QCOMPARE(sizes[0].computeReason, std::optional<kl::CeilingReason>(kl::CeilingReason::NotMatrixProduct));
        QCOMPARE(*sizes[0].pctOfSol, 61.0);
        QCOMPARE(sizes[1].compute, std::optional<kl::Precision>(kl::Precision::Fp16));
        QVERIFY(!sizes[1].computeReason);
        QVERIFY(store.sizeResults(session).at(ref.index) == sizes);
        QVERIFY(store.iteration(session, ref.index)->result->sizes == sizes);
    }

    void aResultWithoutSizesGetsThemFromItsTiming()
    {
        auto store = Store::open(freshPath());
        const auto session = sessionOf(store, fx::problem());
        const auto ref = store.beginIteration(session, store.addCandidate(session, fx::candidate(2)));
        auto result = fx::passedResult(2); // one timed case, no sizes set
        QVERIFY(result.sizes.empty());
        store.recordResult(ref, result);
        store.finishIteration(ref);
        const auto sizes = store.sizeResults(session, ref.index);
        QCOMPARE(sizes.size(), std::size_t(1));
        KL_COMPARE_TEXT(sizes[0].label, "8192x4096");
        QCOMPARE(sizes[0].values.at("M"), std::int64_t(8192));
        QCOMPARE(*sizes[0].medianUs, *result.medianUs);
        QCOMPARE(*sizes[0].pctOfCopy, *result.pctOfCopy);
        QCOMPARE(*sizes[0].p20Us, *result.p20Us); // the timed case's own percentiles
        QCOMPARE(*sizes[0].cv, *result.cv);

        // A failed result has no timing, so no sizes.
        const auto failed = store.beginIteration(session, store.addCandidate(session, fx::candidate(3)));
        store.recordResult(failed, fx::failedResult(3));
        store.finishIteration(failed);
        QVERIFY(store.sizeResults(session, failed.index).empty());
    }
};

QTEST_GUILESS_MAIN(TestStoreSizes)
#include "test_store_sizes.moc"
