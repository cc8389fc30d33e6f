// analyseCandidate on both bundled examples and on small candidates of the fixture problem:
// launches at every main size with occupancy and waves, input errors thrown before compiling,
// compile failures and launches that cannot run reported, and the JSON form.
#include "core/compile/static_report.h"
#include "core/model/error.h"
#include "fixtures.h"

#include <nlohmann/json.hpp>

#include <QTest>

namespace {

kl::StaticReport analyse(
    const kl::Problem& problem, const kl::Candidate& candidate, const kl::TunableValues& tunables = {})
{
    return kl::analyseCandidate(problem, candidate, tunables, kl::CompileOptions {}, kl::DeviceLimits {});
}

kl::Problem fixtureProblem()
{
    return kl::loadProblem(kl::test::compileFixturePath(QStringLiteral("include_problem/problem.json")));
}

QString text(const std::string& s) { return QString::fromStdString(s); }

} // namespace

class CompileStaticReportTest : public QObject {
    Q_OBJECT

private slots:
    void layernormBaseline()
    {
        const auto problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        const auto r = analyse(problem, problem.baseline);
        QVERIFY2(r.ok(), r.firstProblem().c_str());
        QCOMPARE(text(r.problem), QStringLiteral("layernorm_gelu"));
        QCOMPARE(r.tunables, (kl::TunableValues { { "CACHE", 0 }, { "TANH", 0 }, { "THREADS", 128 }, { "VEC", 1 } }));
        QCOMPARE(r.launches.size(), std::size_t(1));
        const auto& l = r.launches[0];
        QCOMPARE(text(l.sizes.label), QStringLiteral("8192x4096"));
        QCOMPARE(l.launch.grid[0], std::int64_t(8192));
        QCOMPARE(l.launch.threadsPerBlock(), std::int64_t(128));
        QCOMPARE(l.resources.registers, 32);
        QCOMPARE(l.resources.staticSharedBytes, std::int64_t(128));
        QCOMPARE(l.sharedBytes, std::int64_t(128));
        QCOMPARE(l.occupancy.blocksPerSm, 16);
        QCOMPARE(l.occupancy.theoretical, 1.0);
        QCOMPARE(l.occupancy.limiter, kl::OccupancyLimiter::Warps);
        QCOMPARE(l.waves, 8192.0 / (16 * 132));
        QCOMPARE(l.wholeWaves, std::int64_t(4));
        QVERIFY(!l.needsSharedOptIn);
    }

    // Tunables reach the compile and the launch: 512 threads per block, a quarter of the blocks per SM.
    void layernormWithTunables()
    {
        const auto problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        const auto r = analyse(problem, problem.baseline, { { "THREADS", 512 } });
        QVERIFY2(r.ok(), r.firstProblem().c_str());
        QVERIFY(
            std::find(r.compile.options.begin(), r.compile.options.end(), "-DTHREADS=512") != r.compile.options.end());
        const auto& l = r.launches.at(0);
        QCOMPARE(l.launch.threadsPerBlock(), std::int64_t(512));
        QCOMPARE(l.occupancy.blocksPerSm, 4);
        QCOMPARE(l.waves, 8192.0 / (4 * 132));
    }

    void softmaxTwoLaunchesTwoSizes()
    {
        const auto problem = kl::loadProblem(kl::test::examplePath("softmax_bf16"));
        const auto r = analyse(problem, problem.baseline);
        QVERIFY2(r.ok(), r.firstProblem().c_str());
        QCOMPARE(r.compile.kernels.size(), std::size_t(2));
        QCOMPARE(r.launches.size(), std::size_t(4)); // main sizes in order, launches in order
        QCOMPARE(text(r.launches[0].kernel), QStringLiteral("row_stats"));
        QCOMPARE(text(r.launches[1].kernel), QStringLiteral("normalise"));
        QCOMPARE(text(r.launches[2].sizes.label), QStringLiteral("2048x16384"));
        QCOMPARE(r.launches[1].launch.grid[0], std::int64_t(2048 / 256));
        QCOMPARE(r.launches[1].launch.grid[1], std::int64_t(16384));
        QCOMPARE(r.launches[0].resources.barriers, 1);
        QCOMPARE(r.launches[1].resources.staticSharedBytes, std::int64_t(0));
        QCOMPARE(r.launches[2].waves, 2048.0 / (8 * 132));
        for (const auto& l : r.launches) {
            QCOMPARE(l.occupancy.blocksPerSm, 8);
            QVERIFY(l.resources.registers > 0);
        }
    }

    void inputErrorsThrowBeforeCompiling_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<qint64>("value");
        QTest::addColumn<QString>("category");
        QTest::newRow("unknown tunable") << QStringLiteral("THREADZ") << qint64(64)
                                         << QStringLiteral("candidate.unknown-tunable");
        QTest::newRow("value not allowed")
            << QStringLiteral("THREADS") << qint64(100) << QStringLiteral("candidate.value-not-allowed");
        QTest::newRow("broken constraint") << QStringLiteral("CACHE") << qint64(8) << QStringLiteral("plan.constraint");
    }

    void inputErrorsThrowBeforeCompiling()
    {
        QFETCH(QString, name);
        QFETCH(qint64, value);
        const auto problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        kl::TunableValues tunables { { name.toStdString(), value } };
        if (name == QStringLiteral("CACHE"))
            tunables["VEC"] = 8; // CACHE * VEC <= 32
        try {
            analyse(problem, problem.baseline, tunables);
            QFAIL("no error");
        } catch (const kl::Error& e) {
            QTEST(text(e.category()), "category");
        }
    }

    void compileFailureIsReportedNotThrown()
    {
        const auto problem = fixtureProblem();
        const auto candidate
            = kl::parseCandidate("// @kl launch scale grid=(1) block=(32) args=(x, y, N)\n"
                                 "extern \"C\" __global__ void scale(const float* x, float* y, int n)\n"
                                 "{\n    y[0] = x[0] +;\n}\n",
                "broken.cu");
        const auto r = analyse(problem, candidate);
        QVERIFY(!r.ok());
        QVERIFY(!r.compile.ok);
        QCOMPARE(r.compile.kind, kl::CompileErrorKind::Syntax);
        QVERIFY(r.launches.empty());
        QVERIFY2(
            text(r.firstProblem()).startsWith(QStringLiteral("syntax error at broken.cu:4")), r.firstProblem().c_str());
    }

    // Shared memory for occupancy is static + dynamic; above 48 KiB the launch must opt in.
    void dynamicSharedMemoryCounts()
    {
        const auto problem = fixtureProblem();
        const auto candidate = kl::parseCandidate(R"(
// @kl tunable TILE = 16384 in 1024, 16384
// @kl launch staged grid=(cdiv(N, 256)) block=(256) smem=(TILE * 4) args=(x, y, N)
extern "C" __global__ void staged(const float* x, float* y, int n)
{
    extern __shared__ float tile[];
    __shared__ float bias[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    bias[threadIdx.x] = 1.0f;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n)
        y[i] = tile[threadIdx.x] + bias[255 - threadIdx.x];
}
)",
            "staged.cu");
        const auto r = analyse(problem, candidate);
        QVERIFY2(r.ok(), r.firstProblem().c_str());
        const auto& l = r.launches.at(0);
        QCOMPARE(l.launch.sharedBytes, std::int64_t(65536));
        QCOMPARE(l.resources.staticSharedBytes, std::int64_t(1024));
        QCOMPARE(l.sharedBytes, std::int64_t(65536 + 1024));
        QVERIFY(l.needsSharedOptIn);
        QCOMPARE(l.occupancy.blocksPerSm, 3); // 228 KiB / (64 + 1 + 1 reserved KiB)
        QCOMPARE(l.occupancy.limiter, kl::OccupancyLimiter::SharedMemory);
    }

    // Compiles, but 1024 threads of a kernel with 70-odd registers never fit on an SM.
    void launchThatCannotRun()
    {
        const auto problem = fixtureProblem();
        const auto candidate = kl::parseCandidate(R"(
// @kl launch local_histogram grid=(1) block=(1024) args=(x, y, N)
extern "C" __global__ void local_histogram(const float* x, float* y, int n)
{
    float hist[64];
    for (int i = 0; i < 64; ++i)
        hist[i] = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        hist[static_cast<int>(x[i]) & 63] += x[i];
    float s = 0.0f;
    for (int i = 0; i < 64; ++i)
        s += hist[i] * i;
    y[threadIdx.x] = s;
}
)",
            "histogram.cu");
        const auto r = analyse(problem, candidate);
        QVERIFY2(r.compile.ok, r.compile.summary.c_str());
        const auto& l = r.launches.at(0);
        QVERIFY2(l.resources.registers > 64, "the kernel needs more than 64 registers for this test");
        QCOMPARE(l.occupancy.blocksPerSm, 0);
        QVERIFY(!r.ok());
        QVERIFY2(text(r.firstProblem()).contains(QStringLiteral("cannot launch")), r.firstProblem().c_str());
        QCOMPARE(l.waves, 0.0);
    }

    void json()
    {
        const auto problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        const auto r = analyse(problem, problem.baseline);
        const auto j = nlohmann::json::parse(kl::staticReportJson(r).dump());
        QCOMPARE(j["ok"].get<bool>(), true);
        QCOMPARE(j["arch"].get<std::string>(), std::string("sm_90"));
        QCOMPARE(j["tunables"]["THREADS"].get<int>(), 128);
        QCOMPARE(j["compile"]["kind"].get<std::string>(), std::string("none"));
        QCOMPARE(j["compile"]["kernels"][0]["registers"].get<int>(), 32);
        QCOMPARE(j["compile"]["kernels"][0]["lowered_name"].get<std::string>(), std::string("layernorm_gelu"));
        QVERIFY(j["compile"]["cubin_bytes"].get<std::size_t>() > 0);
        QVERIFY(!j["compile"].contains("cubin")); // binary stays out of JSON
        const auto& l = j["launches"][0];
        QCOMPARE(l["grid"][0].get<std::int64_t>(), std::int64_t(8192));
        QCOMPARE(l["occupancy"]["limiter"].get<std::string>(), std::string("warps"));
        QCOMPARE(l["occupancy"]["theoretical"].get<double>(), 1.0);
        QCOMPARE(l["occupancy"]["limits"]["registers"].get<int>(), 16);
        QVERIFY(l["occupancy"]["limits"]["barriers"].is_number());
        QCOMPARE(j["device"]["sm_count"].get<int>(), 132);
    }
};

QTEST_GUILESS_MAIN(CompileStaticReportTest)
#include "test_compile_static_report.moc"
