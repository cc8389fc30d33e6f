// Golden tests over real NVRTC and nvcc logs captured into tests/fixtures/compile/logs by
// capture.sh there: the ptxas resource report, and the categorised diagnostics of each error kind.
#include "core/compile/compiler.h"
#include "fixtures.h"

#include <QTest>

using kl::CompileErrorKind;

Q_DECLARE_METATYPE(kl::CompileErrorKind)

class CompileLogsTest : public QObject {
    Q_OBJECT

private slots:
    void ptxasInfo_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<int>("entries");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("lowered");
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("registers");
        QTest::addColumn<int>("barriers");
        QTest::addColumn<qint64>("smem");
        QTest::addColumn<qint64>("cmem");
        QTest::addColumn<qint64>("frame");
        QTest::addColumn<qint64>("spillStores");
        QTest::addColumn<qint64>("spillLoads");
        QTest::addColumn<qint64>("cumulative");

        auto row = [](const std::string& tag, const std::string& log, int entries, int index, const char* lowered,
                       const char* arch, int registers, int barriers, qint64 smem, qint64 cmem, qint64 frame,
                       qint64 stores, qint64 loads, qint64 cumulative) {
            QTest::newRow(tag.c_str()) << QString::fromStdString(log) << entries << index
                                       << QString::fromLatin1(lowered) << QString::fromLatin1(arch) << registers
                                       << barriers << smem << cmem << frame << stores << loads << cumulative;
        };
        for (const char* tool : { "nvrtc", "nvcc" }) {
            const std::string t = tool;
            auto log = [&](const char* name) { return t + "-" + name + ".log"; };
            auto tag = [&](const char* what) { return t + " " + what; };
            row(tag("layernorm THREADS=128 VEC=1 CACHE=0"), log("layernorm-T128-V1-C0.sm_90"), 1, 0, "layernorm_gelu",
                "sm_90", 32, 1, 128, 0, 0, 0, 0, 0);
            row(tag("layernorm THREADS=256 VEC=8 CACHE=4"), log("layernorm-T256-V8-C4.sm_90"), 1, 0, "layernorm_gelu",
                "sm_90", 64, 1, 128, 0, 0, 0, 0, 0);
            row(tag("layernorm THREADS=512 VEC=4 CACHE=8"), log("layernorm-T512-V4-C8.sm_90"), 1, 0, "layernorm_gelu",
                "sm_90", 57, 1, 128, 0, 0, 0, 0, 0);
            row(tag("layernorm THREADS=1024 VEC=8 CACHE=4"), log("layernorm-T1024-V8-C4.sm_90"), 1, 0, "layernorm_gelu",
                "sm_90", 64, 1, 128, 0, 0, 0, 0, 0);
            row(tag("softmax normalise"), log("softmax-T256.sm_90"), 2, 0, "normalise", "sm_90", 16, 0, 0, 0, 0, 0, 0,
                0);
            row(tag("softmax row_stats THREADS=256"), log("softmax-T256.sm_90"), 2, 1, "row_stats", "sm_90", 29, 1, 128,
                0, 0, 0, 0, 0);
            row(tag("softmax row_stats THREADS=1024"), log("softmax-T1024.sm_90"), 2, 1, "row_stats", "sm_90", 28, 1,
                128, 0, 0, 0, 0, 0);
            row(tag("spills under -maxrregcount=32"), log("spill.sm_90"), 1, 0, "spill", "sm_90", 32, 0, 0, 0, 504, 660,
                708, 504);
            row(tag("stack frame without spills"), log("stack-frame.sm_90"), 1, 0, "local_histogram", "sm_90", 70, 0, 0,
                0, 256, 0, 0, 256);
            row(tag("big static shared memory"), log("big-static-smem.sm_90"), 1, 0, "tile_sum", "sm_90", 18, 1, 40960,
                0, 0, 0, 0, 0);
            row(tag("mangled entry with a frame"), log("mangled.sm_90"), 2, 0, "_Z4walkPfi", "sm_90", 24, 0, 0, 0, 64,
                0, 0, 64);
            // The non-inlined device function between the two entries is not an entry.
            row(tag("mangled entry after a device function"), log("mangled.sm_90"), 2, 1, "_Z5scalePf", "sm_90", 8, 0,
                0, 0, 0, 0, 0, 0);
            // sm_80 still reports the parameter bank; the module's cmem[3] line is not a kernel's.
            row(tag("constant bank on sm_80"), log("constant-memory.sm_80"), 1, 0, "lookup", "sm_80", 10, 0, 0, 624, 0,
                0, 0, 0);
        }
        row("nvcc one entry for two architectures (sm_80)", "nvcc-multi-arch.sm_80-sm_90.log", 2, 0, "local_histogram",
            "sm_80", 70, 0, 0, 380, 256, 0, 0, 256);
        row("nvcc one entry for two architectures (sm_90)", "nvcc-multi-arch.sm_80-sm_90.log", 2, 1, "local_histogram",
            "sm_90", 70, 0, 0, 0, 256, 0, 0, 256);
        row("nvrtc too much static shared memory (report still printed)", "nvrtc-static_smem.sm_90.log", 1, 0, "k",
            "sm_90", 10, 1, 65536, 0, 0, 0, 0, 0);
        row("nvrtc 1.2 MB stack frame", "nvrtc-local_memory.sm_90.log", 1, 0, "k", "sm_90", 29, 0, 0, 0, 1200000, 0, 0,
            1200000);
        row("nvrtc warning before the report", "nvrtc-warning.sm_90.log", 1, 0, "k", "sm_90", 10, 0, 0, 0, 0, 0, 0, 0);
    }

    void ptxasInfo()
    {
        QFETCH(QString, log);
        QFETCH(int, entries);
        QFETCH(int, index);
        const auto text = kl::test::readCompileFixture(QStringLiteral("logs/") + log);
        QVERIFY2(!text.empty(), qPrintable(log));
        const auto kernels = kl::parsePtxasInfo(text);
        QCOMPARE(int(kernels.size()), entries);
        const auto& k = kernels[std::size_t(index)];
        QTEST(QString::fromStdString(k.loweredName), "lowered");
        QCOMPARE(k.name, k.loweredName);
        QTEST(QString::fromStdString(k.arch), "arch");
        QTEST(k.registers, "registers");
        QTEST(k.barriers, "barriers");
        QTEST(qint64(k.staticSharedBytes), "smem");
        QTEST(qint64(k.constantBytes), "cmem");
        QTEST(qint64(k.stackFrameBytes), "frame");
        QTEST(qint64(k.spillStoreBytes), "spillStores");
        QTEST(qint64(k.spillLoadBytes), "spillLoads");
        QTEST(qint64(k.cumulativeStackBytes), "cumulative");
    }

    // The layout of older ptxas (CUDA 11/12), as quoted in the issue: cmem banks add up.
    void ptxasInfoOlderLayout()
    {
        const std::string log = "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_80'\n"
                                "ptxas info    : Function properties for _Z6kernelPf\n"
                                "    256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
                                "ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, "
                                "4096 bytes smem, 360 bytes cmem[0], 8 bytes cmem[2]\n";
        const auto kernels = kl::parsePtxasInfo(log);
        QCOMPARE(kernels.size(), std::size_t(1));
        QCOMPARE(kernels[0].registers, 32);
        QCOMPARE(kernels[0].staticSharedBytes, std::int64_t(4096));
        QCOMPARE(kernels[0].constantBytes, std::int64_t(368));
        QCOMPARE(kernels[0].spillStoreBytes, std::int64_t(8));
        QCOMPARE(kernels[0].spillLoadBytes, std::int64_t(4));
        QVERIFY(kl::parsePtxasInfo("").empty());
        QVERIFY(kl::parsePtxasInfo("ptxas info    : Used 32 registers\n").empty()); // no entry named
    }

    void compilerLog_data()
    {
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("candidate");
        QTest::addColumn<int>("errors");
        QTest::addColumn<int>("warnings");
        QTest::addColumn<CompileErrorKind>("kind");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("ptxLine");
        QTest::addColumn<QString>("message");

        using K = CompileErrorKind;
        auto row = [](const char* log, const char* candidate, int errors, int warnings, K kind, const char* file,
                       int line, int column, int ptxLine, const char* message) {
            QTest::newRow(log) << QString::fromLatin1(log) << QString::fromLatin1(candidate) << errors << warnings
                               << kind << QString::fromLatin1(file) << line << column << ptxLine
                               << QString::fromLatin1(message);
        };
        row("nvrtc-syntax.sm_90.log", "syntax.cu", 1, 1, K::Syntax, "syntax.cu", 6, 5, 0, "expected a \";\"");
        row("nvrtc-undeclared.sm_90.log", "undeclared.cu", 1, 0, K::UndeclaredIdentifier, "undeclared.cu", 5, 19, 0,
            "identifier \"scale\" is undefined");
        row("nvrtc-type_mismatch.sm_90.log", "type_mismatch.cu", 2, 0, K::TypeMismatch, "type_mismatch.cu", 6, 14, 0,
            "a value of type \"float *\" cannot be used to initialize an entity of type \"int *\"");
        row("nvrtc-wrong_arguments.sm_90.log", "wrong_arguments.cu", 2, 0, K::TypeMismatch, "wrong_arguments.cu", 6, 28,
            0, "argument of type \"float *\" is incompatible with parameter of type \"float\"");
        row("nvrtc-no_matching_overload.sm_90.log", "no_matching_overload.cu", 2, 0, K::TypeMismatch,
            "no_matching_overload.cu", 9, 12, 0,
            "no instance of overloaded function \"f\" matches the argument list; argument types are: (float *)");
        row("nvrtc-parameter_space.sm_90.log", "parameter_space.cu", 1, 0, K::TooManyResources, "parameter_space.cu", 4,
            0, 0, "Formal parameter space overflowed (36008 bytes required, max 32764 bytes allowed) in function k");
        row("nvcc-static-smem.sm_90.log", "static_smem.cu", 1, 0, K::TooManyResources, "ptxas", 0, 0, 0,
            "Entry function 'k' uses too much shared data (0x10000 bytes, 0xc000 max)");
        row("nvrtc-wgmma_sm90.sm_90.log", "wgmma_sm90.cu", 1, 0, K::UnsupportedArch, "ptxas", 0, 0, 28,
            "Instruction 'wgmma.fence' not supported on .target 'sm_90'");
        row("nvrtc-setmaxnreg_sm90.sm_90.log", "setmaxnreg_sm90.cu", 1, 0, K::UnsupportedArch, "ptxas", 0, 0, 28,
            "Instruction 'setmaxnreg.inc' not supported on .target 'sm_90'");
        row("nvrtc-bulk_copy_sm80.sm_80.log", "bulk_copy_sm80.cu", 2, 0, K::UnsupportedArch, "ptxas", 0, 0, 39,
            "Feature 'cp.async.bulk' requires .target sm_90 or higher");
        row("nvrtc-cluster_sm80.sm_80.log", "cluster_sm80.cu", 3, 0, K::UnsupportedArch, "cluster_sm80.cu", 6, 28, 0,
            "__cluster_dims__ is not supported for this GPU architecture");
        row("nvrtc-invalid-arch.sm_70.log", "warning.cu", 1, 0, K::UnsupportedArch, "nvrtc", 0, 0, 0,
            "invalid value for --gpu-architecture (-arch)");
        row("nvrtc-static_assert.sm_90.log", "static_assert.cu", 1, 0, K::Other, "static_assert.cu", 5, 1, 0,
            "static assertion failed with \"THREADS must be a multiple of 64\"");
        row("nvrtc-missing_kernel.sm_90.log", "missing_kernel.cu", 2, 0, K::MissingKernel, "__nv_name_map", 2, 25, 0,
            "identifier \"finish\" is undefined");
        row("nvrtc-device_function_launch.sm_90.log", "device_function_launch.cu", 1, 0, K::MissingKernel,
            "__nv_name_map", 2, 25, 0,
            "Name expression cannot form address of a non-__global__ function. Input name expression was: \" helper\"");
        // Compiles: a warning and no error; the ptxas report lines are not diagnostics.
        row("nvrtc-warning.sm_90.log", "warning.cu", 0, 1, K::None, "warning.cu", 5, 9, 0,
            "variable \"unused\" was declared but never referenced");
        // NVRTC 13 fails this compile without a word (nvcc says "uses too much shared data"):
        // compileCandidate explains it from the report; the log alone has nothing.
        row("nvrtc-static_smem.sm_90.log", "static_smem.cu", 0, 0, K::None, "", 0, 0, 0, "");
    }

    void compilerLog()
    {
        QFETCH(QString, log);
        QFETCH(QString, candidate);
        QFETCH(int, errors);
        QFETCH(int, warnings);
        QFETCH(CompileErrorKind, kind);
        const auto text = kl::test::readCompileFixture(QStringLiteral("logs/") + log);
        QVERIFY2(!text.empty(), qPrintable(log));
        const auto diagnostics = kl::parseCompilerLog(text, candidate.toStdString(), 0);
        const auto count = [&](const char* severity) {
            return int(std::count_if(
                diagnostics.begin(), diagnostics.end(), [&](const auto& d) { return d.severity == severity; }));
        };
        QCOMPARE(count("error"), errors);
        QCOMPARE(count("warning"), warnings);
        if (diagnostics.empty())
            return;
        // The first error, or the first warning when there is none.
        auto first
            = std::find_if(diagnostics.begin(), diagnostics.end(), [](const auto& d) { return d.severity == "error"; });
        if (first == diagnostics.end())
            first = diagnostics.begin();
        QCOMPARE(first->kind, kind);
        QTEST(QString::fromStdString(first->file), "file");
        QTEST(first->line, "line");
        QTEST(first->column, "column");
        QTEST(first->ptxLine, "ptxLine");
        QTEST(QString::fromStdString(first->message), "message");
        for (const auto& d : diagnostics)
            QVERIFY2(d.severity == "error" ? d.kind != CompileErrorKind::None : d.kind == CompileErrorKind::None,
                d.message.c_str());
    }

    // Notes stay attached as their own diagnostics; the instantiation context joins its error.
    void compilerLogNotesAndContext()
    {
        const auto text = kl::test::readCompileFixture(QStringLiteral("logs/nvrtc-no_matching_overload.sm_90.log"));
        const auto d = kl::parseCompilerLog(text, "no_matching_overload.cu", 0);
        QCOMPARE(d.size(), std::size_t(4));
        QCOMPARE(QString::fromStdString(d[1].severity), QStringLiteral("note"));
        QCOMPARE(d[1].line, 5);
        QCOMPARE(d[1].kind, CompileErrorKind::None);
        QCOMPARE(d[3].line, 6);
        QCOMPARE(d[3].column, 56);
        QCOMPARE(d[3].kind, CompileErrorKind::TypeMismatch);
        QVERIFY2(
            QString::fromStdString(d[3].message)
                .endsWith(QStringLiteral("; detected during instantiation of \"T g(T) [with T=float]\" at line 10")),
            d[3].message.c_str());
    }

    // Lines of the candidate move up by what was prepended; other files' lines do not.
    void compilerLogLineOffset()
    {
        const auto text = kl::test::readCompileFixture(QStringLiteral("logs/nvrtc-syntax.sm_90.log"));
        const auto shifted = kl::parseCompilerLog(text, "syntax.cu", 2);
        QCOMPARE(shifted.at(0).line, 4);
        const auto other = kl::parseCompilerLog(text, "another.cu", 2);
        QCOMPARE(other.at(0).line, 6);
    }

    void classify_data()
    {
        QTest::addColumn<QString>("message");
        QTest::addColumn<CompileErrorKind>("kind");
        using K = CompileErrorKind;
        auto row = [](const char* message, K kind) { QTest::newRow(message) << QString::fromLatin1(message) << kind; };
        // Second errors of the captured logs.
        row("too few arguments in function call", K::TypeMismatch);
        row("no suitable constructor exists to convert from \"float\" to \"Pair\"", K::TypeMismatch);
        row("namespace \"cooperative_groups\" has no member \"cluster_group\"", K::UndeclaredIdentifier);
        row("Feature '.mbarrier::complete_tx::bytes' requires .target sm_90 or higher", K::UnsupportedArch);
        // Messages of the same families that the fixtures do not produce.
        row("Entry function 'k' uses too much local data (0x124f80 bytes, 0x80000 max)", K::TooManyResources);
        row("Entry function 'k' uses too many registers", K::TooManyResources);
        row("no instance of overloaded function \"max\" matches the argument list", K::TypeMismatch);
        row("no operator \"+\" matches these operands", K::TypeMismatch);
        row("expected an expression", K::Syntax);
        row("expected a \")\"", K::Syntax);
        row("unrecognized token", K::Syntax);
        row("this declaration has no storage class or type specifier", K::Syntax);
        row("#error directive: THREADS too large", K::Other);
        row("could not open source file \"missing.h\" (no directories in search list)", K::Other);
    }

    void classify()
    {
        QFETCH(QString, message);
        QTEST(kl::classifyDiagnostic(message.toStdString()), "kind");
    }

    void kindNamesAreStable()
    {
        QCOMPARE(QString::fromLatin1(kl::compileErrorKindName(CompileErrorKind::UndeclaredIdentifier)),
            QStringLiteral("undeclared-identifier"));
        QCOMPARE(QString::fromLatin1(kl::compileErrorKindName(CompileErrorKind::TooManyResources)),
            QStringLiteral("too-many-resources"));
        QCOMPARE(QString::fromLatin1(kl::compileErrorKindName(CompileErrorKind::ForbiddenInclude)),
            QStringLiteral("forbidden-include"));
    }
};

QTEST_GUILESS_MAIN(CompileLogsTest)
#include "test_compile_logs.moc"
