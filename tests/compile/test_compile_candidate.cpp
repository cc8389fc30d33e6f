// compileCandidate with the real NVRTC: every error kind from a small bad candidate, with its line
// mapped back to the candidate; lowered names; PTX and cubin; tunables; option checks; timings.
#include "core/compile/compiler.h"
#include "core/model/error.h"
#include "fixtures.h"

#include <QFileInfo>
#include <QTest>

using kl::CompileErrorKind;

Q_DECLARE_METATYPE(kl::CompileErrorKind)

namespace {

kl::Candidate fixture(const char* relative)
{
    return kl::loadCandidate(kl::test::compileFixturePath(QString::fromLatin1(relative)));
}

kl::CompileOptions optionsFor(const std::string& arch = "sm_90")
{
    kl::CompileOptions o;
    o.arch = arch;
    return o;
}

QString text(const std::string& s) { return QString::fromStdString(s); }

} // namespace

class CompileCandidateTest : public QObject {
    Q_OBJECT

private slots:
    // First, so that it sees NVRTC's one-time start-up cost in this process.
    void compileTimes()
    {
        const auto candidate = fixture("kernels/big_static_smem.cu");
        const auto first = kl::compileCandidate(candidate, optionsFor());
        QVERIFY2(first.ok, first.summary.c_str());
        std::vector<double> later;
        for (int i = 0; i < 3; ++i)
            later.push_back(kl::compileCandidate(candidate, optionsFor()).compileMillis);
        qInfo("NVRTC compile of a small kernel: first %.0f ms, then %.0f / %.0f / %.0f ms", first.compileMillis,
            later[0], later[1], later[2]);
        QVERIFY(first.compileMillis > 0.0);
        QCOMPARE(text(first.nvrtcVersion).section(QLatin1Char('.'), 0, 0).toInt() >= 12, true);
    }

    void errorKinds_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("arch");
        QTest::addColumn<CompileErrorKind>("kind");
        QTest::addColumn<bool>("inCandidate"); // the first error points into the candidate
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column"); // 0: not checked
        QTest::addColumn<QString>("message");

        using K = CompileErrorKind;
        auto row = [](const char* file, const char* arch, K kind, bool inCandidate, int line, int column,
                       const char* message) {
            QTest::newRow(file) << QString::fromLatin1(file) << QString::fromLatin1(arch) << kind << inCandidate << line
                                << column << QString::fromLatin1(message);
        };
        row("errors/syntax.cu", "sm_90", K::Syntax, true, 6, 5, "expected a \";\"");
        row("errors/undeclared.cu", "sm_90", K::UndeclaredIdentifier, true, 5, 19, "\"scale\" is undefined");
        row("errors/type_mismatch.cu", "sm_90", K::TypeMismatch, true, 6, 14, "cannot be used to initialize");
        row("errors/wrong_arguments.cu", "sm_90", K::TypeMismatch, true, 6, 28, "is incompatible with parameter");
        row("errors/no_matching_overload.cu", "sm_90", K::TypeMismatch, true, 9, 12, "argument types are: (float *)");
        row("errors/parameter_space.cu", "sm_90", K::TooManyResources, true, 4, 0, "parameter space overflowed");
        row("errors/static_smem.cu", "sm_90", K::TooManyResources, false, 0, 0, "uses too much shared data");
        row("errors/local_memory.cu", "sm_90", K::TooManyResources, true, 3, 0, "1200000 bytes of local memory");
        // ptxas errors in inline PTX, mapped from the PTX line to the source through -lineinfo.
        row("errors/wgmma_sm90.cu", "sm_90", K::UnsupportedArch, true, 6, 0, "'wgmma.fence' not supported");
        row("errors/setmaxnreg_sm90.cu", "sm_90", K::UnsupportedArch, true, 5, 0, "'setmaxnreg.inc' not supported");
        row("errors/bulk_copy_sm80.cu", "sm_80", K::UnsupportedArch, true, 10, 0, "requires .target sm_90");
        row("errors/cluster_sm80.cu", "sm_80", K::UnsupportedArch, true, 6, 28, "__cluster_dims__ is not supported");
        row("errors/warning.cu", "sm_70", K::UnsupportedArch, false, 0, 0, "--gpu-architecture");
        row("errors/static_assert.cu", "sm_90", K::Other, true, 5, 1, "static assertion failed");
        row("errors/missing_kernel.cu", "sm_90", K::MissingKernel, true, 3, 0, "\"finish\"");
        row("errors/device_function_launch.cu", "sm_90", K::MissingKernel, true, 2, 0, "\"helper\"");
    }

    void errorKinds()
    {
        QFETCH(QString, file);
        QFETCH(QString, arch);
        QFETCH(CompileErrorKind, kind);
        QFETCH(bool, inCandidate);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, message);
        const auto candidate = fixture(file.toLatin1().constData());
        const auto r = kl::compileCandidate(candidate, optionsFor(arch.toStdString()));
        QVERIFY2(!r.ok, r.summary.c_str());
        QCOMPARE(r.kind, kind);
        QVERIFY(r.cubin.empty()); // nothing a runner could load
        const auto first = std::find_if(
            r.diagnostics.begin(), r.diagnostics.end(), [](const auto& d) { return d.severity == "error"; });
        QVERIFY(first != r.diagnostics.end());
        QCOMPARE(first->kind, kind);
        QVERIFY2(text(first->message).contains(message), first->message.c_str());
        if (inCandidate) {
            QCOMPARE(text(first->file), text(candidate.fileName));
            QCOMPARE(first->line, line);
            if (column > 0)
                QCOMPARE(first->column, column);
        }
        // One line, naming the kind; with the place when there is one.
        QVERIFY(!r.summary.empty() && r.summary.find('\n') == std::string::npos);
        QVERIFY2(r.summary.rfind(kl::compileErrorKindName(kind), 0) == 0, r.summary.c_str());
        if (inCandidate)
            QVERIFY2(text(r.summary).contains(QFileInfo(file).fileName() + QLatin1Char(':') + QString::number(line)),
                r.summary.c_str());
    }

    void summaryIsOneUsefulLine()
    {
        const auto r = kl::compileCandidate(fixture("errors/type_mismatch.cu"), optionsFor());
        QCOMPARE(text(r.summary),
            QStringLiteral("type-mismatch error at type_mismatch.cu:6:14: a value of type \"float *\" cannot be "
                           "used to initialize an entity of type \"int *\" (and 1 more error)"));
    }

    void warningsDoNotFail()
    {
        const auto r = kl::compileCandidate(fixture("errors/warning.cu"), optionsFor());
        QVERIFY2(r.ok, r.summary.c_str());
        QCOMPARE(r.kind, CompileErrorKind::None);
        QCOMPARE(r.diagnostics.size(), std::size_t(1));
        QCOMPARE(text(r.diagnostics[0].severity), QStringLiteral("warning"));
        QCOMPARE(r.diagnostics[0].line, 5);
        QVERIFY(text(r.summary).startsWith(QStringLiteral("compiled for sm_90")));
    }

    // extern "C" and C++ kernels side by side: the launch names the source name, the runner needs the symbol.
    void loweredNames()
    {
        const auto r = kl::compileCandidate(fixture("kernels/mangled.cu"), optionsFor());
        QVERIFY2(r.ok, r.summary.c_str());
        QCOMPARE(r.kernels.size(), std::size_t(2)); // the device function is not reported
        const auto* scale = r.kernel("scale");
        const auto* walk = r.kernel("walk");
        QVERIFY(scale && walk);
        QCOMPARE(text(scale->loweredName), QStringLiteral("_Z5scalePf"));
        QCOMPARE(text(walk->loweredName), QStringLiteral("_Z4walkPfi"));
        QCOMPARE(walk->stackFrameBytes, std::int64_t(64));
        QCOMPARE(text(walk->arch), QStringLiteral("sm_90"));
        QVERIFY(!r.kernel("deep"));

        const auto c = kl::compileCandidate(fixture("kernels/stack_frame.cu"), optionsFor());
        QVERIFY2(c.ok, c.summary.c_str());
        QCOMPARE(text(c.kernels.at(0).loweredName), QStringLiteral("local_histogram"));
        QCOMPARE(c.kernels.at(0).stackFrameBytes, std::int64_t(256));
        QCOMPARE(c.kernels.at(0).spillStoreBytes, std::int64_t(0));
    }

    void ptxAndCubinFromOneProgram()
    {
        auto options = optionsFor();
        const auto candidate = fixture("kernels/big_static_smem.cu");
        const auto r = kl::compileCandidate(candidate, options);
        QVERIFY2(r.ok, r.summary.c_str());
        QVERIFY(r.cubin.size() > 1000);
        QCOMPARE(r.cubin.substr(0, 4),
            std::string("\x7f"
                        "ELF"));
        QVERIFY(r.ptx.find(".entry tile_sum") != std::string::npos);
        QVERIFY(r.ptx.find(".target sm_90") != std::string::npos);
        QVERIFY(r.ptx.find(".loc") != std::string::npos); // -lineinfo by default
        QCOMPARE(r.kernels.at(0).staticSharedBytes, std::int64_t(40960));
        QCOMPARE(r.kernels.at(0).barriers, 1);
        QVERIFY(std::find(r.options.begin(), r.options.end(), "--ptxas-options=-v") != r.options.end());

        options.lineInfo = false;
        const auto plain = kl::compileCandidate(candidate, options);
        QVERIFY(plain.ok);
        QVERIFY(plain.ptx.find(".loc") == std::string::npos);
    }

    void spillsUnderARegisterCap()
    {
        auto options = optionsFor();
        options.extraOptions = { "-maxrregcount=32" };
        const auto r = kl::compileCandidate(fixture("kernels/spill.cu"), options);
        QVERIFY2(r.ok, r.summary.c_str());
        const auto& k = r.kernels.at(0);
        QCOMPARE(k.registers, 32);
        QVERIFY(k.spillStoreBytes > 0 && k.spillLoadBytes > 0);
        QVERIFY(k.stackFrameBytes >= k.spillStoreBytes / 2);
        QVERIFY2(text(r.summary).contains(QStringLiteral("spilled")), r.summary.c_str());
    }

    void tunablesBecomeDefines()
    {
        const auto candidate = kl::parseCandidate(R"(
// @kl tunable TILE = 64 in 64, 4096
// @kl launch k grid=(1) block=(64) args=(x)
extern "C" __global__ void k(float* x)
{
    __shared__ float tile[TILE];
    tile[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = tile[(threadIdx.x * 7) % TILE];
}
)",
            "tile.cu");
        auto options = optionsFor();
        options.tunables = { { "TILE", 64 } };
        const auto small = kl::compileCandidate(candidate, options);
        options.tunables = { { "TILE", 4096 } };
        const auto big = kl::compileCandidate(candidate, options);
        QVERIFY2(small.ok && big.ok, (small.summary + " | " + big.summary).c_str());
        QCOMPARE(small.kernels.at(0).staticSharedBytes, std::int64_t(64 * 4));
        QCOMPARE(big.kernels.at(0).staticSharedBytes, std::int64_t(4096 * 4));
        QVERIFY(std::find(big.options.begin(), big.options.end(), "-DTILE=4096") != big.options.end());
    }

    void extraOptionsAreChecked_data()
    {
        QTest::addColumn<QString>("option");
        QTest::addColumn<CompileErrorKind>("kind");
        QTest::newRow("search path") << QStringLiteral("-I/etc") << CompileErrorKind::ForbiddenInclude;
        QTest::newRow("long search path")
            << QStringLiteral("--include-path=/home") << CompileErrorKind::ForbiddenInclude;
        QTest::newRow("pre-include") << QStringLiteral("--pre-include=/etc/passwd")
                                     << CompileErrorKind::ForbiddenInclude;
        QTest::newRow("writes a file") << QStringLiteral("--fdevice-time-trace=/tmp/trace.json")
                                       << CompileErrorKind::Other;
        QTest::newRow("fast math") << QStringLiteral("--use_fast_math") << CompileErrorKind::None;
        QTest::newRow("macro") << QStringLiteral("-DUNROLL=4") << CompileErrorKind::None;
    }

    void extraOptionsAreChecked()
    {
        QFETCH(QString, option);
        QFETCH(CompileErrorKind, kind);
        auto options = optionsFor();
        options.extraOptions = { option.toStdString() };
        const auto r = kl::compileCandidate(fixture("errors/warning.cu"), options);
        QCOMPARE(r.kind, kind);
        QCOMPARE(r.ok, kind == CompileErrorKind::None);
    }

    void tooLargeIsRefusedBeforeCompiling()
    {
        kl::Candidate candidate = fixture("errors/warning.cu");
        candidate.source += std::string(kl::kMaxCandidateSourceBytes, ' ');
        const auto r = kl::compileCandidate(candidate, optionsFor());
        QCOMPARE(r.kind, CompileErrorKind::TooLarge);
        QVERIFY(r.log.empty()); // NVRTC never saw it
        QVERIFY2(text(r.summary).contains(QString::number(kl::kMaxCandidateSourceBytes)), r.summary.c_str());
    }
};

QTEST_GUILESS_MAIN(CompileCandidateTest)
#include "test_compile_candidate.moc"
