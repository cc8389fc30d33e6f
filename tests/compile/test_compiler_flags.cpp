// Compiler flags as tunables (issue 28): "// @kl flag NAME = DEFAULT in ..." declares a tunable that
// reaches the real NVRTC as an option, never as a macro; its value survives the store like any tunable.
#include "core/compile/compiler.h"
#include "core/model/compiler_flags.h"
#include "core/model/error.h"
#include "core/store/store.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace kl;

namespace {

// 48 accumulators live across a loop: ptxas wants far more than 32 registers for them uncapped.
const std::string kKernel = R"(// @kl flag maxrregcount = 0 in 0, 32, 64
// @kl flag use_fast_math = 0 in 0, 1
// @kl tunable THREADS = 128 in 64, 128
// @kl launch many grid=(1) block=(THREADS) args=(x, y, n)
extern "C" __global__ void many(const float* x, float* y, int n)
{
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k)
        acc[k] = x[threadIdx.x + k * THREADS];
    for (int i = 0; i < n; ++i) {
#pragma unroll
        for (int k = 0; k < 48; ++k)
            acc[k] = acc[k] * acc[(k + 7) % 48] / (acc[(k + 13) % 48] + 1.0f);
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; ++k)
        sum += acc[k];
    y[threadIdx.x] = sum;
}
)";

CompileResult compiled(const Candidate& candidate, const TunableValues& values)
{
    CompileOptions options;
    options.arch = "sm_90";
    options.tunables = candidate.withOverrides(values);
    return compileCandidate(candidate, options);
}

bool hasOption(const CompileResult& result, const std::string& option)
{
    return std::find(result.options.begin(), result.options.end(), option) != result.options.end();
}

std::string parseError(const std::string& source, const std::string& fileName = "flags.cu")
{
    try {
        parseCandidate(source, fileName);
    } catch (const Error& error) {
        return error.category() + ": " + error.message();
    }
    return "no error";
}

} // namespace

class TestCompilerFlags : public QObject {
    Q_OBJECT

private slots:
    void declaredFlagsAreTunablesMarkedAsFlags()
    {
        const Candidate c = parseCandidate(kKernel, "flags.cu");
        QVERIFY(c.tunable("maxrregcount") && c.tunable("maxrregcount")->compilerFlag);
        QCOMPARE(c.tunable("maxrregcount")->values, (std::vector<std::int64_t> { 0, 32, 64 }));
        QVERIFY(!c.tunable("THREADS")->compilerFlag);
        const TunableValues values = c.withOverrides({ { "maxrregcount", 32 }, { "use_fast_math", 1 } });
        QCOMPARE(c.macros(values), (TunableValues { { "THREADS", 128 } }));
        QCOMPARE(c.compilerOptions(values), (std::vector<std::string> { "-maxrregcount=32", "-use_fast_math" }));
        QCOMPARE(compilerOptionsText(c.compilerOptions(c.defaults())), std::string());
    }

    void badFlagsAreRefusedWithTheReason()
    {
        const std::string launch = "// @kl launch k grid=(1) block=(1) args=()\n";
        QVERIFY(parseError("// @kl flag fast = 0 in 0, 1\n" + launch)
                    .starts_with("candidate.bad-flag: unknown compiler flag"));
        QCOMPARE(parseError("// @kl flag maxrregcount = 0 in 0, 8\n" + launch),
            std::string("candidate.bad-flag: maxrregcount takes 0 (no cap) or 16..255, not 8"));
        QCOMPARE(parseError("// @kl flag use_fast_math = 0 in 0, 2\n" + launch),
            std::string("candidate.bad-flag: use_fast_math takes 0..1, not 2"));
        QVERIFY(
            parseError("# @kl flag use_fast_math = 0 in 0, 1\n# @kl launch k grid=(1) num_warps=(4) args=()\n", "k.py")
                .starts_with("candidate.bad-flag: compiler flags apply to CUDA candidates"));
    }

    // The cap reaches ptxas: the uncapped kernel takes more than 32 registers, the capped one at most 32.
    void maxrregcountCapsTheRegistersNvrtcReports()
    {
        const Candidate c = parseCandidate(kKernel, "flags.cu");
        const CompileResult free = compiled(c, {});
        QVERIFY2(free.ok, free.summary.c_str());
        const CompileResult capped = compiled(c, { { "maxrregcount", 32 } });
        QVERIFY2(capped.ok, capped.summary.c_str());
        qInfo("registers: %d uncapped, %d with -maxrregcount=32", free.kernels.at(0).registers,
            capped.kernels.at(0).registers);
        QVERIFY(free.kernels.at(0).registers > 32);
        QVERIFY(capped.kernels.at(0).registers <= 32);
        QVERIFY(hasOption(capped, "-maxrregcount=32"));
        QVERIFY(!hasOption(free, "-maxrregcount=32"));
        // A flag is an option, never a macro.
        QVERIFY(std::none_of(capped.options.begin(), capped.options.end(),
            [](const std::string& o) { return o.starts_with("-Dmaxrregcount") || o.starts_with("-Duse_fast_math"); }));
        QVERIFY(hasOption(capped, "-DTHREADS=128"));
    }

    // -use_fast_math turns the IEEE division into the approximate one in the PTX.
    void fastMathChangesThePtx()
    {
        const Candidate c = parseCandidate(kKernel, "flags.cu");
        const CompileResult precise = compiled(c, {});
        const CompileResult fast = compiled(c, { { "use_fast_math", 1 } });
        QVERIFY2(fast.ok, fast.summary.c_str());
        QVERIFY(precise.ptx.find("div.rn.f32") != std::string::npos);
        QVERIFY(fast.ptx.find("div.rn.f32") == std::string::npos);
        QVERIFY(fast.ptx.find("div.approx") != std::string::npos || fast.ptx.find("div.full") != std::string::npos);
    }

    // Every flag's options are ones NVRTC accepts: a candidate declaring them all compiles at each value.
    void everyFlagCompilesAtEveryValue()
    {
        std::string source = kKernel.substr(kKernel.find("// @kl tunable"));
        for (const CompilerFlag& flag : compilerFlags())
            source = "// @kl flag " + std::string(flag.name) + " = 0 in 0, " + std::to_string(flag.highest) + "\n"
                + source;
        const Candidate c = parseCandidate(source, "flags.cu");
        for (const CompilerFlag& flag : compilerFlags()) {
            const CompileResult result = compiled(c, { { std::string(flag.name), flag.highest } });
            QVERIFY2(result.ok, (std::string(flag.name) + ": " + result.summary + "\n" + result.log).c_str());
            for (const std::string& option : compilerFlagOptions(flag, flag.highest))
                QVERIFY2(hasOption(result, option), option.c_str());
        }
        // lineinfo 0 takes the default -lineinfo away: no .loc in the PTX.
        const CompileResult without = compiled(c, { { "lineinfo", 0 } });
        QVERIFY(!hasOption(without, "-lineinfo"));
        QVERIFY(without.ptx.find(".loc") == std::string::npos);
        QVERIFY(compiled(c, { { "lineinfo", 1 } }).ptx.find(".loc") != std::string::npos);
    }

    // The flag's value is a tunable value of the stored candidate: read back, it compiles capped again.
    void flagSurvivesTheStore()
    {
        QTemporaryDir dir;
        auto store = store::Store::open(dir.filePath(QStringLiteral("flags.db")).toStdString());
        store::SessionRecord session;
        session.problemHash = store.addProblem(store::fixtures::problem());
        const auto sessionId = store.createSession(session);
        store::CandidateRecord record;
        record.source = kKernel;
        record.fileName = "flags.cu";
        record.tunables = { { "maxrregcount", 32 }, { "THREADS", 128 } };
        const auto id = store.addCandidate(sessionId, record);
        store = store::Store::open(dir.filePath(QStringLiteral("flags.db")).toStdString());
        const auto back = store.candidate(id);
        QVERIFY(back);
        QCOMPARE(back->tunables.at("maxrregcount"), std::int64_t(32));
        const Candidate c = parseCandidate(back->source, back->fileName);
        const CompileResult result = compiled(c, back->tunables);
        QVERIFY2(result.ok, result.summary.c_str());
        QVERIFY(hasOption(result, "-maxrregcount=32"));
        QVERIFY(result.kernels.at(0).registers <= 32);
    }
};

QTEST_GUILESS_MAIN(TestCompilerFlags)
#include "test_compiler_flags.moc"
