// Launch arguments against the kernel's parameters, offline, with the real NVRTC: the PTX .entry
// list gives count and sizes, and a launch with one argument too few (which crashed the runner at
// its first launch) or of the wrong size is refused as plan.args-mismatch naming both lists.
#include "core/compile/launch_args.h"
#include "core/compile/static_report.h"
#include "core/model/error.h"
#include "fixtures.h"

#include <QTest>

namespace {

const std::string kKernel = R"(#include <cuda_fp16.h>
extern "C" __global__ void six(const __half* x, const __half* g, __half* y, int m, long long n, float eps)
{
    if (threadIdx.x == 0 && m > 0 && n > 0 && eps > 0.0f)
        y[0] = __hadd(x[0], g[0]);
}
extern "C" __global__ void half_arg(float* y, __half h) { y[0] = __half2float(h); }
extern "C" __global__ void none() {}
)";

kl::Candidate candidate(const std::string& launches) { return kl::parseCandidate(kKernel + launches, "args.cu"); }

kl::Problem problem() { return kl::loadProblem(kl::test::examplePath("layernorm_gelu")); }

std::string mismatch(const kl::Candidate& c)
{
    try {
        kl::analyseCandidate(problem(), c, {}, kl::CompileOptions {}, kl::DeviceLimits {});
    } catch (const kl::Error& e) {
        if (e.category() == "plan.args-mismatch")
            return e.what();
        return "other error " + e.category() + ": " + e.what();
    }
    return {};
}

} // namespace

class CompileLaunchArgsTest : public QObject {
    Q_OBJECT

private slots:
    void ptxParameterSizes()
    {
        kl::CompileOptions options;
        const auto c = candidate("// @kl launch six grid=(1) block=(32) args=(x, gamma, y, M, N as i64, eps)\n"
                                 "// @kl launch half_arg grid=(1) block=(1) args=(y, 1.5 as f16)\n"
                                 "// @kl launch none grid=(1) block=(1) args=()\n");
        const auto compiled = kl::compileCandidate(c, options);
        QVERIFY2(compiled.ok, compiled.summary.c_str());
        const auto* six = compiled.kernel("six");
        QVERIFY(six && six->parametersKnown);
        std::vector<int> bytes;
        for (const auto& p : six->parameters)
            bytes.push_back(p.bytes);
        QCOMPARE(bytes, (std::vector<int> { 8, 8, 8, 4, 8, 4 }));
        QCOMPARE(six->parameters[5].ptxType, std::string(".f32"));
        const auto* half = compiled.kernel("half_arg");
        QVERIFY(half && half->parametersKnown);
        QCOMPARE(half->parameters.size(), std::size_t(2));
        QCOMPARE(half->parameters[1].bytes, 2);
        const auto* none = compiled.kernel("none");
        QVERIFY(none && none->parametersKnown);
        QCOMPARE(none->parameters.size(), std::size_t(0));
        QVERIFY(!kl::ptxEntryParameters(compiled.ptx, "not_there"));
    }

    void matchingLaunchesPass()
    {
        QCOMPARE(mismatch(candidate("// @kl launch six grid=(M) block=(32) args=(x, gamma, y, M, N as i64, eps)\n"
                                    "// @kl launch half_arg grid=(1) block=(1) args=(y, 1.5 as f16)\n")),
            std::string());
        const auto p = problem();
        QCOMPARE(mismatch(p.baseline), std::string());
    }

    // The issue's case: five arguments for a six-parameter kernel.
    void oneArgumentTooFew()
    {
        const auto text
            = mismatch(candidate("\n// @kl launch six grid=(M) block=(32) args=(x, gamma, y, M, N as i64)\n"));
        QVERIFY2(text.find("args.cu: line 10") != std::string::npos, text.c_str());
        QVERIFY2(text.find("passes 5 arguments") != std::string::npos, text.c_str());
        QVERIFY2(text.find("takes 6 parameters") != std::string::npos, text.c_str());
        QVERIFY2(text.find("x (pointer 8 B), gamma (pointer 8 B), y (pointer 8 B), M (i32 4 B), N (i64 8 B)")
                != std::string::npos,
            text.c_str());
        QVERIFY2(
            text.find(".u64 8 B, .u64 8 B, .u64 8 B, .u32 4 B, .u64 8 B, .f32 4 B") != std::string::npos, text.c_str());
    }

    void wrongSizes_data()
    {
        QTest::addColumn<QString>("launch");
        QTest::newRow("int for long long")
            << QStringLiteral("// @kl launch six grid=(M) block=(32) args=(x, gamma, y, M, N, eps)\n");
        QTest::newRow("i64 for int") << QStringLiteral(
            "// @kl launch six grid=(M) block=(32) args=(x, gamma, y, M as i64, N as i64, eps)\n");
        QTest::newRow("one too many") << QStringLiteral(
            "// @kl launch six grid=(M) block=(32) args=(x, gamma, y, M, N as i64, eps, eps)\n");
        QTest::newRow("f32 for half") << QStringLiteral("// @kl launch half_arg grid=(1) block=(1) args=(y, eps)\n");
        QTest::newRow("arguments for none") << QStringLiteral("// @kl launch none grid=(1) block=(1) args=(M)\n");
    }

    void wrongSizes()
    {
        QFETCH(QString, launch);
        const auto text = mismatch(candidate(launch.toStdString()));
        QVERIFY2(
            text.find("args.cu: line 9") != std::string::npos && text.find("but the kernel takes") != std::string::npos,
            text.c_str());
    }
};

QTEST_GUILESS_MAIN(CompileLaunchArgsTest)
#include "test_compile_launch_args.moc"
