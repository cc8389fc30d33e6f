// The evidence panel's core: each output dtype's tolerance (the problem's, else core/model's default)
// from the stored problem JSON, and core/verify's physical-floor check per timed size from the
// stored timing JSON, on the bundled tuner session's real rows and on planted timings; and which
// sessions the diff may compare against (same problem hash or name).
#include "core/report/evidence.h"
#include "core/report/same_problem.h"
#include "core/store/store.h"

#include <QtTest/QTest>

#include <cmath>

using namespace kl;
using namespace kl::report;

namespace {

const std::string tunerSession = KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-h200.klsession";

protocol::Timing timingOf(double medianUs, std::optional<double> copyUs)
{
    protocol::CaseTiming timed;
    timed.label = "8192x4096";
    timed.candidate.medianUs = medianUs;
    if (copyUs) {
        timed.copy = protocol::TimingSummary {};
        timed.copy->medianUs = *copyUs;
    }
    protocol::Timing timing;
    timing.cases.push_back(timed);
    return timing;
}

// gemm_fp16 at 4096^3 on the H200: 137.4 GFLOP at the FP16 tensor ceiling (1070.5 TFLOP/s at 1980 MHz)
// is 128.39 us; the same-size copy 27.4 us.
protocol::Timing gemmTimingOf(double medianUs)
{
    auto timing = timingOf(medianUs, 27.4);
    auto& timed = timing.cases.front();
    timed.label = "4096^3";
    timed.flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    timed.compute = Precision::Fp16;
    timed.ceilingTflops = 1070.5;
    return timing;
}

} // namespace

class TestEvidence : public QObject {
    Q_OBJECT
private slots:
    void bundledSessionGivesTheProblemsFp16ToleranceAndAFloorAboveTheCopy()
    {
        store::Store::Options options;
        options.readOnly = true;
        const store::Store s = store::Store::open(tunerSession, options);
        const auto session = s.listSessions().front().session;
        const auto problem = s.problem(session.problemHash);
        QVERIFY(problem);
        const auto tolerances = outputTolerances(problem->json);
        QCOMPARE(tolerances.size(), std::size_t(1));
        QCOMPARE(tolerances[0].dtype, std::string("f16"));
        QCOMPARE(tolerances[0].outputs, std::vector<std::string> { "y" });
        QVERIFY(tolerances[0].fromProblem);
        QCOMPARE(tolerances[0].atol, 0.01);
        QCOMPARE(tolerances[0].rtol, 0.01);
        QCOMPARE(toleranceText(tolerances[0]),
            std::string("y (f16): |actual - expected| <= 0.01 + 0.01 * |expected| (the problem's)"));

        const auto detail = s.iteration(session.id, 6);
        QVERIFY(detail && detail->result);
        const auto floors = floorChecks(*detail->result);
        QCOMPARE(floors.size(), std::size_t(1));
        QCOMPARE(floors[0].verdict, SizeFloor::Verdict::Above);
        QCOMPARE(floorText(floors[0]), std::string("above the floor (40.26 us >= 33.34 us, a same-size device copy)"));
    }

    void outputsWithoutAToleranceGetTheDefaultOfTheirDtype()
    {
        const std::string json = R"({"outputs": [{"name": "y", "dtype": "f16"}, {"name": "s", "dtype": "f32"},
            {"name": "z", "dtype": "f16"}, {"name": "q", "dtype": "nonsense"}],
            "tolerances": {"f16": {"atol": 0.005, "rtol": 0.002}}})";
        const auto tolerances = outputTolerances(json);
        QCOMPARE(tolerances.size(), std::size_t(2));
        QCOMPARE(tolerances[0].outputs, (std::vector<std::string> { "y", "z" }));
        QCOMPARE(tolerances[0].atol, 0.005);
        QCOMPARE(tolerances[1].dtype, std::string("f32"));
        QVERIFY(!tolerances[1].fromProblem);
        QCOMPARE(tolerances[1].atol, 1e-5); // core/model's default for f32
        QVERIFY(toleranceText(tolerances[1]).find("the default for f32") != std::string::npos);
        QVERIFY(outputTolerances("not json").empty());
    }

    void aMedianUnderTheCopyIsFlaggedAndASmallCopyGivesNoVerdict()
    {
        const auto below = floorChecks(timingOf(20.0, 33.3));
        QCOMPARE(below.at(0).verdict, SizeFloor::Verdict::Below);
        QVERIFY(floorText(below[0]).find("BELOW THE FLOOR") != std::string::npos);
        QVERIFY(floorText(below[0]).find("20.00 us < 33.30 us") != std::string::npos);
        // Within the timing slack of the copy: not flagged, not called above either.
        QCOMPARE(floorChecks(timingOf(32.0, 33.3)).at(0).verdict, SizeFloor::Verdict::WithinSlack);
        QCOMPARE(floorChecks(timingOf(1.0, 1.5)).at(0).verdict, SizeFloor::Verdict::NoVerdict);
        const auto noCopy = floorChecks(timingOf(40.0, std::nullopt));
        QCOMPARE(noCopy.at(0).verdict, SizeFloor::Verdict::NoVerdict);
        QVERIFY(floorText(noCopy[0]).find("no same-size copy") != std::string::npos);
    }

    // A time under FLOPs ÷ the precision's ceiling is as impossible as one under the copy; the copy alone
    // (27.4 us) would have let 60 us through.
    void aMedianUnderTheComputeFloorIsFlagged()
    {
        const auto below = floorChecks(gemmTimingOf(60.0));
        QCOMPARE(below.at(0).verdict, SizeFloor::Verdict::Below);
        QVERIFY(below[0].belowCompute);
        QVERIFY(below[0].computeUs && std::abs(*below[0].computeUs - 128.39) < 0.01);
        QVERIFY2(floorText(below[0]).find("faster than the FP16 tensor ceiling allows") != std::string::npos,
            floorText(below[0]).c_str());
        QVERIFY(floorText(below[0]).find("60.00 us < 128.39 us, its FLOPs at the FP16 tensor ceiling")
            != std::string::npos);
        QCOMPARE(floorChecks(gemmTimingOf(120.0)).at(0).verdict, SizeFloor::Verdict::WithinSlack);
        const auto cublas = floorChecks(gemmTimingOf(178.9)); // torch.matmul on the H200, 72% of SOL
        QCOMPARE(cublas.at(0).verdict, SizeFloor::Verdict::Above);
        QCOMPARE(floorText(cublas[0]),
            std::string("above the floor (178.90 us >= 27.40 us, a same-size device copy; 178.90 us >= 128.39 us, its "
                        "FLOPs at the FP16 tensor ceiling)"));
    }

    void sameProblemMeansTheSameHashOrTheSameNameAndNeverItself()
    {
        auto row = [](std::int64_t id, const char* hash, const char* name) {
            store::SessionRow r;
            r.session.id = id;
            r.session.problemHash = hash;
            r.session.problemName = name;
            r.session.proposer = "tuner";
            return r;
        };
        const std::vector<store::SessionRow> all = { row(4, "h2", "layernorm_gelu"), row(3, "h9", "softmax"),
            row(2, "h1", "other-name"), row(1, "h1", "layernorm_gelu") };
        const auto same = sameProblemSessions(all, all[3].session);
        QCOMPARE(same.size(), std::size_t(2)); // 4 by name (edited problem file), 2 by hash; not 3, not itself
        QCOMPARE(same[0].session.id, std::int64_t(4));
        QCOMPARE(same[1].session.id, std::int64_t(2));
        store::SessionRecord labelled = all[0].session;
        labelled.label = "H200 run";
        QCOMPARE(sessionTitle(labelled), std::string("session 4 (tuner, \"H200 run\")"));
    }
};

QTEST_GUILESS_MAIN(TestEvidence)
#include "test_evidence.moc"
