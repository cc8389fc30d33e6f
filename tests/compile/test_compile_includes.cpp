// The include policy: a candidate reads CUDA headers and files of its problem's folder, nothing
// else. Checked on the scanner alone (fast, many forms) and through real NVRTC compiles.
#include "core/compile/compiler.h"
#include "core/compile/include_policy.h"
#include "core/model/problem.h"
#include "fixtures.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using kl::CompileErrorKind;

Q_DECLARE_METATYPE(kl::CompileErrorKind)

namespace {

std::filesystem::path problemDir() { return kl::test::compileFixturePath(QStringLiteral("include_problem")); }

QString text(const std::string& s) { return QString::fromStdString(s); }

} // namespace

class CompileIncludesTest : public QObject {
    Q_OBJECT

private slots:
    void logicalLines()
    {
        const std::string source = "#include \\\n  \"a.cuh\"\n" // spliced: one line, line 1
                                   "int x; /* a\n#include \"../b\"\n */ int y;\n" // comment over lines 3-5
                                   "const char* s = \"// not a comment\"; // a comment\n" // line 6
                                   "auto r = R\"(\n#include </etc/passwd>\n)\";\n" // raw string, lines 7-9
                                   "int n = 1'000'000; char c = '\"';\n"; // line 10
        const auto lines = kl::logicalLines(source);
        QCOMPARE(lines.at(0).line, 1);
        QCOMPARE(text(lines.at(0).text), QStringLiteral("#include   \"a.cuh\""));
        QCOMPARE(lines.at(1).line, 3);
        QCOMPARE(text(lines.at(1).text), QStringLiteral("int x;   int y;"));
        QCOMPARE(lines.at(2).line, 6);
        QCOMPARE(text(lines.at(2).text), QStringLiteral("const char* s = \"// not a comment\";  "));
        QCOMPARE(lines.at(3).line, 7);
        QVERIFY(text(lines.at(3).text).startsWith(QStringLiteral("auto r = R\"(")));
        QCOMPARE(lines.at(4).line, 10);
        QCOMPARE(text(lines.at(4).text), QStringLiteral("int n = 1'000'000; char c = '\"';"));
    }

    void refused_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<CompileErrorKind>("kind");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        auto row = [](const char* tag, const char* source, int line, const char* message,
                       const char* file = "candidate.cu", CompileErrorKind kind = CompileErrorKind::ForbiddenInclude) {
            QTest::newRow(tag) << QString::fromLatin1(source) << kind << QString::fromLatin1(file) << line
                               << QString::fromLatin1(message);
        };
        row("absolute quoted", "// x\n#include \"/etc/passwd\"\n", 2, "absolute paths are not allowed");
        row("absolute angle", "#include </etc/passwd>\n", 1, "absolute paths are not allowed");
        row("home", "#include \"~/secrets.h\"\n", 1, "absolute paths are not allowed");
        row("dot-dot", "#include \"../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("dot-dot angle", "#include <../../../etc/passwd>\n", 1, "\"..\" is not allowed");
        row("dot-dot inside", "#include \"sub/../../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("backslash", "#include \"..\\\\secret.cuh\"\n", 1, "backslashes");
        row("not in the folder", "#include \"secret.cuh\"\n", 1, "no such file in the problem folder");
        row("CUDA header in quotes", "#include \"cuda_fp16.h\"\n", 1, "CUDA headers are included with <...>");
        row("computed by a macro", "#define H \"local.cuh\"\n#include H\n", 2, "computed by the preprocessor");
        row("computed by a function macro", "#define S(x) #x\n#include S(local.cuh)\n", 2, "computed");
        row("include_next", "#include_next \"../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("comment inside the directive", "# /* hi */ include \"../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("digraph", "%:include \"../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("spliced", "#inc\\\nlude \"../secret.cuh\"\n", 1, "\"..\" is not allowed");
        row("after a block comment", "/* a\n b */ #include \"/etc/hosts\"\n", 1, "absolute");
        row("#line", "#line 1 \"/etc/x.cu\"\n", 1, "#line is not allowed");
        row("#import", "#import \"local.cuh\"\n", 1, "#import is not allowed");
        row("#embed", "#embed \"local.cuh\"\n", 1, "#embed is not allowed");
        row("__has_include outside", "#if __has_include(\"../secret.cuh\")\n#endif\n", 1, "\"..\" is not allowed");
        row("__has_include missing", "#if __has_include(\"secret.cuh\")\n#endif\n", 1, "no such file");
        row("__has_include computed", "#define H <x>\n#if __has_include(H)\n#endif\n", 2, "computed");
        row("pragma include_alias", "#pragma include_alias(\"a.h\", \"/etc/passwd\")\n", 1, "pragma");
        row("_Pragma", "_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", 1, "pragma");
        // Allowed itself, but the header it pulls in reaches out: the refusal names that header.
        row("nested escape", "#include \"escape.cuh\"\n", 3, "\"..\" is not allowed", "escape.cuh");
    }

    void refused()
    {
        QFETCH(QString, source);
        QFETCH(CompileErrorKind, kind);
        const auto check = kl::checkIncludes(source.toStdString(), "candidate.cu", problemDir());
        QVERIFY(check.refusal.has_value());
        QCOMPARE(check.refusal->kind, kind);
        QTEST(text(check.refusal->file), "file");
        QTEST(check.refusal->line, "line");
        QFETCH(QString, message);
        QVERIFY2(text(check.refusal->message).contains(message), check.refusal->message.c_str());
    }

    void allowed_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QStringList>("headers");
        auto row = [](const char* tag, const char* source, QStringList headers) {
            QTest::newRow(tag) << QString::fromLatin1(source) << headers;
        };
        row("CUDA headers", "#include <cuda_fp16.h>\n#include <cuda/std/cstdint>\n", {});
        row("local header", "#include \"local.cuh\"\n", { QStringLiteral("local.cuh") });
        row("nested, relative to the folder", "#include \"sub/helpers.cuh\"\n",
            { QStringLiteral("sub/helpers.cuh"), QStringLiteral("local.cuh") });
        row("each header once", "#include \"local.cuh\"\n#include \"local.cuh\"\n", { QStringLiteral("local.cuh") });
        row("__has_include of a CUDA header", "#if __has_include(<cuda_bf16.h>)\n#endif\n", {});
        row("__has_include of a local header", "#if __has_include(\"local.cuh\")\n#endif\n",
            { QStringLiteral("local.cuh") });
        row("in comments", "// #include \"../secret.cuh\"\n/* #include </etc/passwd> */\n", {});
        row("in strings", "const char* s = \"#include </etc/passwd>\";\n", {});
        row("in a raw string", "const char* r = R\"x(\n#include </etc/passwd>\n)x\";\n", {});
        row("harmless pragmas", "#pragma once\n#pragma unroll 4\n#pragma nv_diag_suppress 177\n", {});
    }

    void allowed()
    {
        QFETCH(QString, source);
        QFETCH(QStringList, headers);
        const auto check = kl::checkIncludes(source.toStdString(), "candidate.cu", problemDir());
        QVERIFY2(!check.refusal, check.refusal ? check.refusal->message.c_str() : "");
        QStringList names;
        for (const auto& h : check.headers) {
            names << text(h.name);
            QVERIFY(!h.content.empty());
        }
        QCOMPARE(names, headers);
    }

    void noFolderNoLocalIncludes()
    {
        const auto check = kl::checkIncludes("#include \"local.cuh\"\n", "candidate.cu", {});
        QVERIFY(check.refusal.has_value());
        QVERIFY(text(check.refusal->message).contains(QStringLiteral("no problem folder")));
    }

    // A symbolic link inside the folder that points out of it is refused.
    void symlinkOutOfTheFolder()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("problem")));
        const QString outside = dir.filePath(QStringLiteral("outside.cuh"));
        QFile out(outside);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write("#define LEAK 1\n");
        out.close();
        QVERIFY(QFile::link(outside, dir.filePath(QStringLiteral("problem/link.cuh"))));
        const auto check = kl::checkIncludes(
            "#include \"link.cuh\"\n", "candidate.cu", dir.filePath(QStringLiteral("problem")).toStdString());
        QVERIFY(check.refusal.has_value());
        QVERIFY2(text(check.refusal->message).contains(QStringLiteral("outside the problem folder")),
            check.refusal->message.c_str());
    }

    // The real compile of the fixture problem: its baseline includes sub/helpers.cuh, which includes local.cuh.
    void problemFolderHeadersCompile()
    {
        const auto problem
            = kl::loadProblem(kl::test::compileFixturePath(QStringLiteral("include_problem/problem.json")));
        kl::CompileOptions options;
        options.includeDir = problem.dir;
        const auto r = kl::compileCandidate(problem.baseline, options);
        QVERIFY2(r.ok, r.summary.c_str());
        QVERIFY(r.kernel("scale"));
        QVERIFY(r.ptx.find("0f40400000") != std::string::npos); // KL_SCALE = 3.0f from local.cuh, in the PTX
    }

    // NVRTC searches quoted includes beside the program name, i.e. in the current folder. A file
    // there must not be read: the check refuses before NVRTC could find it.
    void currentFolderIsNotSearched()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile secret(dir.filePath(QStringLiteral("planted.cuh")));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write("#define PLANTED 1\n");
        secret.close();
        const QString before = QDir::currentPath();
        QVERIFY(QDir::setCurrent(dir.path()));
        const auto candidate
            = kl::parseCandidate("#include \"planted.cuh\"\n// @kl launch k grid=(1) block=(32) "
                                 "args=(x)\nextern \"C\" __global__ void k(int* x) { x[0] = PLANTED; }\n",
                "planted.cu");
        kl::CompileOptions options;
        options.includeDir = problemDir();
        const auto r = kl::compileCandidate(candidate, options);
        QVERIFY(QDir::setCurrent(before));
        QCOMPARE(r.kind, CompileErrorKind::ForbiddenInclude);
        QCOMPARE(r.diagnostics.at(0).line, 1);
        QCOMPARE(text(r.diagnostics.at(0).file), QStringLiteral("planted.cu"));
        QVERIFY(r.log.empty());
    }

    void angleIncludesOnlySeeTheToolkit()
    {
        // A file next to the candidate is not a CUDA header: NVRTC gets no -I for it.
        const auto candidate = kl::parseCandidate("#include <local.cuh>\n// @kl launch k grid=(1) block=(32) args=(x)\n"
                                                  "extern \"C\" __global__ void k(float* x) { x[0] = KL_SCALE; }\n",
            "angle.cu");
        kl::CompileOptions options;
        options.includeDir = problemDir();
        const auto r = kl::compileCandidate(candidate, options);
        QVERIFY(!r.ok);
        QCOMPARE(r.kind, CompileErrorKind::Other);
        QVERIFY2(text(r.summary).contains(QStringLiteral("cannot open source file")), r.summary.c_str());
        for (const auto& o : r.options)
            if (o.rfind("-I", 0) == 0)
                QVERIFY2(text(o).mid(2).startsWith(QStringLiteral(KL_CUDA_TEST_INCLUDE_DIR)), o.c_str());
    }
};

QTEST_GUILESS_MAIN(CompileIncludesTest)
#include "test_compile_includes.moc"
