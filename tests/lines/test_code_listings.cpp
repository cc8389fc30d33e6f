// The machine code the loop keeps per iteration (issue 11): the PTX of every compiled candidate and
// the SASS where nvdisasm exists, deflated in the stored compile JSON. Real NVRTC output, the real
// H200 nvdisasm listing of the planted pointer_chase kernel, and nvdisasm stand-ins (shell scripts)
// run as the child process the real tool would be: this machine has no CUDA toolkit. Where a real
// nvdisasm is found (the H200 machine), the last case disassembles a real NVRTC cubin with it.
#include "core/compile/compiler.h"
#include "core/lines/ptx_listing.h"
#include "core/lines/sass_disassembly.h"
#include "core/lines/sass_listing.h"
#include "core/model/candidate.h"
#include "core/store/code_listings.h"
#include "core/store/compile_columns.h"
#include "tests/test_files.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

using namespace kl;

namespace {

const std::string kNvdisasmFixture = "tests/fixtures/lines/pointer_chase.nvdisasm.txt";

// An nvdisasm stand-in: a script with `body` (it gets "-g CUBIN" as the real tool does).
QString tool(const QTemporaryDir& dir, const QString& name, const QByteArray& body)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write("#!/bin/sh\n" + body);
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

CompileResult pointerChase()
{
    CompileOptions options;
    options.lineInfo = true;
    return compileCandidate(
        loadCandidate(kl::test::sourceDir() + "/tests/gpu/lines/pointer_chase/baseline.cu"), options);
}

} // namespace

class TestCodeListings : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QByteArray m_savedTool;

private slots:
    void init() { m_savedTool = qgetenv("KL_NVDISASM"); }
    void cleanup()
    {
        if (m_savedTool.isNull())
            qunsetenv("KL_NVDISASM");
        else
            qputenv("KL_NVDISASM", m_savedTool);
    }

    // nvdisasm -g prints every section; the code sections are what the pane reads and a third of the text.
    void codeSectionsKeepEveryInstructionAndLine()
    {
        const auto whole = test::sourceText(kNvdisasmFixture);
        const auto code = lines::codeSections(whole);
        QCOMPARE(code.size(), std::size_t(13789)); // of 43681
        QVERIFY(code.find(".debug_frame") == std::string::npos);
        QVERIFY(code.find(".nv.info.chase") == std::string::npos);
        QVERIFY(code.rfind("\t.target\tsm_90", 0) == 0);
        const auto all = lines::parseSass(whole), kept = lines::parseSass(code);
        QCOMPARE(kept.functions.size(), std::size_t(1));
        QCOMPARE(kept.functions[0].name, std::string("chase"));
        QCOMPARE(kept.functions[0].instructions.size(), all.functions[0].instructions.size());
        QVERIFY(kept.hasLineInfo());
        for (std::size_t i = 0; i < kept.functions[0].instructions.size(); ++i)
            QCOMPARE(kept.functions[0].instructions[i].line, all.functions[0].instructions[i].line);
    }

    // The store keeps it deflated: the figure in code_listings.h.
    void packedTextRoundTripsAndIsSmall()
    {
        const auto code = lines::codeSections(test::sourceText(kNvdisasmFixture));
        store::CompileRecord record;
        record.listings.sass = store::packedText(code);
        // As the column holds it, and read back from there.
        const auto column = store::compileColumn(record);
        QVERIFY(column["sass"].is_object());
        QCOMPARE(column["sass"]["bytes"].get<std::size_t>(), code.size());
        const auto stored = column["sass"]["deflate_base64"].get<std::string>().size();
        QVERIFY2(stored < code.size() / 5, std::to_string(stored).c_str()); // 2056 bytes for 13788
        const auto packed = *store::compileRecordOf(column).listings.sass;
        QCOMPARE(*store::unpackedText(packed), code);
        const auto plain = store::compileRecordOf(nlohmann::json { { "ptx", "plain text" } }).listings.ptx;
        QCOMPARE(*store::unpackedText(*plain), std::string("plain text"));
        // Damaged values are refused, never shown in part.
        auto wrongSize = column;
        wrongSize["sass"]["bytes"] = code.size() + 1;
        QVERIFY(!store::unpackedText(*store::compileRecordOf(wrongSize).listings.sass));
        auto badBase64 = column;
        badBase64["sass"]["deflate_base64"] = "%%%";
        QVERIFY(!store::unpackedText(*store::compileRecordOf(badBase64).listings.sass));
        QVERIFY(!store::unpackedText(*store::compileRecordOf(nlohmann::json { { "sass", 42 } }).listings.sass));
        // A listing past the limit is cut, and says so.
        const std::string huge(store::kListingLimitBytes + 10, 'x');
        const auto cut = *store::unpackedText(store::packedText(huge));
        QVERIFY(cut.size() < huge.size() + 100);
        QVERIFY2(cut.find("(listing cut at 4194.3 KB of 4194.3 KB)") != std::string::npos,
            cut.substr(cut.size() - 80).c_str());
    }

    // CI: no nvdisasm. The PTX of a real NVRTC compile is kept, and the note says why there is no SASS.
    void withoutNvdisasmThePtxIsKept()
    {
        qputenv("KL_NVDISASM", "off");
        QVERIFY(!lines::nvdisasmPath());
        const auto compiled = pointerChase();
        QVERIFY2(compiled.ok, compiled.log.c_str());
        store::CompileRecord compile;
        compile.report = { { "cubin_bytes", compiled.cubin.size() } };
        compile.listings = store::listingsOf(compiled.ptx, compiled.cubin);
        const auto column = store::compileColumn(compile);
        QVERIFY(!column.contains("sass"));
        QVERIFY2(column.value("sass_note", "").rfind("nvdisasm not found", 0) == 0, column.dump().c_str());
        const auto listings = store::codeListingsOf(store::compileRecordOf(column));
        QCOMPARE(listings.ptx, compiled.ptx);
        QVERIFY(!listings.damaged);
        // The PTX links line 11 (the planted loads) to its instructions.
        const auto ptx = lines::parsePtx(listings.ptx);
        QVERIFY(!ptx.ptxLinesFor(11).empty());
        const auto text = QString::fromStdString(store::codeListingsText(listings));
        QVERIFY2(text.startsWith(QStringLiteral("PTX only ("))
                && text.contains(QStringLiteral("no SASS: nvdisasm not found")),
            qPrintable(text));
    }

    // Where nvdisasm runs, its listing of the candidate's cubin is kept (cut to its code sections).
    void withNvdisasmTheSassIsKept()
    {
        const auto fake = tool(m_dir, QStringLiteral("nvdisasm"),
            "[ \"$1\" = -g ] && [ -s \"$2\" ] || { echo 'nvdisasm: no cubin' >&2; exit 3; }\ncat '"
                + QByteArray::fromStdString(kl::test::sourceDir())
                + "/tests/fixtures/lines/pointer_chase.nvdisasm.txt'\n");
        qputenv("KL_NVDISASM", fake.toUtf8());
        QCOMPARE(QString::fromStdString(lines::nvdisasmPath()->string()), fake);
        const auto compiled = pointerChase();
        QVERIFY2(compiled.ok, compiled.log.c_str());
        store::CompileRecord compile;
        compile.listings = store::listingsOf(compiled.ptx, compiled.cubin);
        const auto column = store::compileColumn(compile);
        QVERIFY2(!column.contains("sass_note"), column.dump().c_str());
        const auto listings = store::codeListingsOf(store::compileRecordOf(column));
        QCOMPARE(listings.sass, lines::codeSections(test::sourceText(kNvdisasmFixture)));
        QVERIFY(listings.storedBytes < (listings.sass.size() + listings.ptx.size()) / 4);
        QCOMPARE(QString::fromStdString(store::codeListingsText(listings)).left(32),
            QStringLiteral("SASS (nvdisasm -g, 13.8 KB) and "));
    }

    // A tool that fails, hangs or prints no code gives a note, never a failed candidate.
    void aFailingToolGivesANote_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("note");
        QTest::newRow("exit") << QByteArray("echo 'nvdisasm fatal : not a cubin' >&2\nexit 1\n")
                              << QStringLiteral("nvdisasm failed (exit 1): nvdisasm fatal : not a cubin");
        QTest::newRow("hang") << QByteArray("sleep 30\n") << QStringLiteral("nvdisasm ran past 300 ms");
        QTest::newRow("no code") << QByteArray("echo '.headerflags'\n")
                                 << QStringLiteral("nvdisasm printed no code section");
    }
    void aFailingToolGivesANote()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, note);
        qputenv("KL_NVDISASM",
            tool(m_dir, QString::fromLatin1(QTest::currentDataTag()).remove(QLatin1Char(' ')), body).toUtf8());
        const auto d = lines::disassembleCubin("not really a cubin", std::chrono::milliseconds(300));
        QVERIFY(d.text.empty());
        QCOMPARE(QString::fromStdString(d.problem), note);
        QVERIFY(d.millis < 5000);
    }

    // Rows written before the loop kept listings (or by hand, as plain strings) read as they are.
    void olderRowsSayWhatIsMissing()
    {
        const auto stored
            = [](const nlohmann::json& column) { return store::codeListingsOf(store::compileRecordOf(column)); };
        const auto none = stored(nlohmann::json { { "telemetry", nlohmann::json::object() } });
        QCOMPARE(QString::fromStdString(store::codeListingsText(none)),
            QStringLiteral("no PTX or SASS stored for this iteration (measured before KernelLoop kept them, or it did "
                           "not compile)"));
        const auto plain = stored(nlohmann::json { { "ptx", "// ptx\n" } });
        QCOMPARE(plain.ptx, std::string("// ptx\n"));
        const auto damaged = stored(nlohmann::json { { "sass", { { "deflate_base64", "AAAA" }, { "bytes", 10 } } } });
        QVERIFY(damaged.damaged);
        QVERIFY(QString::fromStdString(store::codeListingsText(damaged)).endsWith(QStringLiteral("cannot be read")));
    }

    // The H200 machine: the real tool on a real NVRTC cubin.
    void realNvdisasmOnARealCubin()
    {
        if (!lines::nvdisasmPath())
            QSKIP("no nvdisasm on this machine (the CUDA toolkit's; the H200 machine has it)");
        const auto compiled = pointerChase();
        QVERIFY2(compiled.ok, compiled.log.c_str());
        const auto d = lines::disassembleCubin(compiled.cubin);
        QVERIFY2(d.problem.empty(), d.problem.c_str());
        const auto sass = lines::parseSass(d.text);
        QVERIFY(sass.function("chase") && sass.hasLineInfo());
    }
};

QTEST_GUILESS_MAIN(TestCodeListings)
#include "test_code_listings.moc"
