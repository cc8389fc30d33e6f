// Candidate directives and launch plans that are wrong in their values (issue 12, "Fuzzed
// inputs"): each is refused with its category and line, never counted as valid.
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/launch_plan.h"
#include "core/model/problem.h"
#include "tests/model/expect_error.h"

#include <QTest>

#include <filesystem>
#include <functional>

namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)

using kl::test::expectError;

namespace {

const char* kHead = "extern \"C\" __global__ void k(float* y, int n) {}\n";
const std::string kLaunch = "// @kl launch k grid=(1) block=(32) args=(y, n)\n";

} // namespace

class TestModelDirectives : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void refused_data()
    {
        QTest::addColumn<std::string>("directives");
        QTest::addColumn<std::string>("category");
        QTest::addColumn<std::string>("where");
        const std::string huge(26000, 'T');
        QTest::newRow("long tunable name") << "// @kl tunable " + huge + " = 1 in 1\n" + kLaunch
                                           << std::string("candidate.bad-name") << std::string("26000 characters");
        QTest::newRow("long kernel name") << "// @kl launch " + huge + " grid=(1) block=(32) args=(y)\n"
                                          << std::string("candidate.bad-name") << std::string("at most 128");
        QTest::newRow("long scratch name") << "// @kl scratch " + huge + " f32 [4]\n" + kLaunch
                                           << std::string("candidate.bad-name") << std::string("line 2");
        // Longer than any expression may be (kMaxExpressionLength): refused before muParser reads it.
        QTest::newRow("long typed argument") << "// @kl launch k grid=(1) block=(32) args=(" + huge + " as i64)\n"
                                             << std::string("expression.too-long") << std::string("line 2");
        QTest::newRow("assignment as constraint")
            << "// @kl tunable THREADS = 5 in 5\n// @kl constraint THREADS = 5\n" + kLaunch
            << std::string("expression.syntax") << std::string("line 3");
        QTest::newRow("100,001 values") << "// @kl tunable T = 0 in 0..100000\n" + kLaunch
                                        << std::string("candidate.bad-tunable") << std::string("100001 values");
        QTest::newRow("100,001 values with a step") << "// @kl tunable T = 0 in 0..200000 step 2\n" + kLaunch
                                                    << std::string("candidate.bad-tunable") << std::string("at most");
        QTest::newRow("scratch [0]") << "// @kl scratch s f32 [0]\n" + kLaunch << std::string("candidate.bad-scratch")
                                     << std::string("at least one");
        QTest::newRow("scratch [-4]") << "// @kl scratch s f32 [-4]\n" + kLaunch << std::string("candidate.bad-scratch")
                                      << std::string("line 2");
        QTest::newRow("scratch named like a tunable")
            << "// @kl tunable T = 1 in 1\n// @kl scratch T f32 [4]\n" + kLaunch << std::string("candidate.duplicate")
            << std::string("tunable");
        QTest::newRow("tunable __CUDA_ARCH__") << "// @kl tunable __CUDA_ARCH__ = 1 in 1\n" + kLaunch
                                               << std::string("candidate.reserved-name") << std::string("line 2");
        QTest::newRow("tunable __x") << "// @kl tunable __x = 1 in 1\n" + kLaunch
                                     << std::string("candidate.reserved-name") << std::string("__x");
        QTest::newRow("tunable int") << "// @kl tunable int = 1 in 1\n" + kLaunch
                                     << std::string("candidate.reserved-name") << std::string("keyword");
        QTest::newRow("tunable threadIdx") << "// @kl tunable threadIdx = 1 in 1\n" + kLaunch
                                           << std::string("candidate.reserved-name") << std::string("threadIdx");
        QTest::newRow("default too large") << "// @kl tunable T = 99999999999999999999 in 1\n" + kLaunch
                                           << std::string("candidate.bad-tunable") << std::string("not a whole number");
        QTest::newRow("range with junk") << "// @kl tunable T = 1 in 1..8 pow3\n" + kLaunch
                                         << std::string("candidate.bad-tunable") << std::string("LO..HI");
        QTest::newRow("grid \"1, 2\" as one")
            << std::string("// @kl launch k grid=(M) block=(32) smem=(4, 8) args=(y)\n")
            << std::string("expression.syntax") << std::string("more than one");
    }

    void refused()
    {
        QFETCH(std::string, directives);
        QFETCH(std::string, category);
        QFETCH(std::string, where);
        expectError([&] { kl::parseCandidate(std::string(kHead) + directives, "c.cu"); }, category, where);
    }

    void stillAccepted()
    {
        const auto c = kl::parseCandidate(std::string(kHead)
            + "// @kl tunable T = 128 in 32..256 pow2\n"
              "// @kl tunable U = 0 in 0..99999\n"
              "// @kl tunable V = -2 in -4..4 step 2\n"
              "// @kl constraint T * 2 <= 512 && U >= 0 && T != 33 && U == U\n"
              "// @kl scratch tmp f32 [n * 2] zero\n"
              "// @kl scratch one i32 [1]\n"
              "// @kl launch k grid=(cdiv(n, T), 1) block=(T) args=(y, n as i64, 2.5 as f32, cdiv(n, 2) as i32)\n");
        QCOMPARE(c.tunables[1].values.size(), std::size_t(100000));
        QCOMPARE(c.tunables[2].values, (std::vector<std::int64_t> { -4, -2, 0, 2, 4 }));
        QCOMPARE(c.scratch.size(), std::size_t(2));
        QVERIFY(c.scratch[0].zeroed);
        QCOMPARE(c.scratch[0].count, std::string("n * 2"));
        QCOMPARE(c.launches[0].args[1].expression, std::string("n"));
        QCOMPARE(c.launches[0].args[1].type, kl::DType::I64);
        QCOMPARE(c.launches[0].args[3].expression, std::string("cdiv(n, 2)"));
        QCOMPARE(c.launches[0].args[3].type, kl::DType::I32);
    }

    void assignmentIsNotAnExpression()
    {
        const kl::Symbols s { { "T", 5 } };
        expectError([&] { kl::evaluate("T = 6", s); }, "expression.syntax", "==");
        expectError([&] { kl::usedSymbols("M, N"); }, "expression.syntax", "more than one");
        QCOMPARE(kl::evaluate("T == 5 && T >= 5 && T <= 5 && T != 6", s), 1.0);
        QCOMPARE(kl::evaluate("cdiv(T, 2)", s), 3.0);
    }

    // A scratch count that is zero only at some sizes is refused when planned there.
    void scratchOfZeroAtASize()
    {
        const auto p = kl::loadProblem(fs::path(KL_SOURCE_DIR) / "resources/examples/softmax_bf16/problem.json");
        const auto c = kl::parseCandidate(std::string("extern \"C\" __global__ void k(float* y) {}\n")
                + "// @kl scratch s f32 [ROWS - ROWS]\n// @kl launch k grid=(1) block=(32) args=(s)\n",
            "c.cu");
        expectError([&] { kl::planLaunches(p, c, p.mainSizes[0], c.defaults()); }, "plan.bad-scratch", "line 2");
    }
};

QTEST_GUILESS_MAIN(TestModelDirectives)
#include "test_model_directives.moc"
