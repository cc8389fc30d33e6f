// The line-profile views (issue 11) on a real store holding the planted pointer_chase kernel's PC
// samples (tests/fixtures/lines): the heat margin and its stall tooltip, the hot-lines list that moves
// the editor, the whole kernel's SASS (a stored nvdisasm listing, with each instruction's samples) and
// PTX (real NVRTC -lineinfo output) linked to the source both ways — the editor's line highlights its
// instructions, a click or the arrow keys on an instruction move the editor — and the roofline of the
// selected iteration. Screenshots go to
// $KL_SCREENSHOT_DIR (docs/images when regenerating the README's) or the build folder.
#include "core/compile/compiler.h"
#include "core/lines/ptx_listing.h"
#include "core/lines/sass_listing.h"
#include "core/model/candidate.h"
#include "core/protocol/pc_sampling_json.h"
#include "core/store/code_listings.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "store_fixtures.h"
#include "tests/test_files.h"
#include "widgets/code_listing_view.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/line_profile_panel.h"
#include "widgets/report_view.h"
#include "widgets/roofline_chart.h"

#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest/QTest>

using namespace kl;
using namespace kl::gui;
namespace fx = kl::store::fixtures;

namespace {

// What the editor's margin really shows on a 0-based line (asked from Scintilla, not the panel).
QString marginText(KernelEditor* editor, int line)
{
    const auto length = editor->SendScintilla(
        QsciScintillaBase::SCI_MARGINGETTEXT, static_cast<unsigned long>(line), static_cast<const char*>(nullptr));
    QByteArray text(static_cast<int>(length) + 1, '\0');
    editor->SendScintilla(
        QsciScintillaBase::SCI_MARGINGETTEXT, static_cast<unsigned long>(line), static_cast<const char*>(text.data()));
    return QString::fromUtf8(text.constData());
}

int editorLine(KernelEditor* editor)
{
    int line = 0, index = 0;
    editor->getCursorPosition(&line, &index);
    return line + 1;
}

// The highlighted rows of the listing: their source lines and their text.
QSet<int> highlightedLines(const CodeListingView* listing)
{
    QSet<int> lines;
    for (int row : listing->highlightedRows())
        lines.insert(listing->rows()[row].sourceLine);
    return lines;
}

QString highlightedText(const CodeListingView* listing)
{
    QStringList text;
    for (int row : listing->highlightedRows())
        text.append(listing->rows()[row].text);
    return text.join(QLatin1Char('\n'));
}

// A row on screen of another source line than `line` (a click target); -1 when none shows.
int visibleRowNotOf(const CodeListingView* listing, int line, const QString& containing = {})
{
    for (int row = 0; row < listing->rows().size(); ++row) {
        const auto& r = listing->rows()[row];
        if (r.sourceLine > 0 && r.sourceLine != line && r.text.contains(containing)
            && listing->viewport()->rect().contains(listing->rowRect(row).center()))
            return row;
    }
    return -1;
}

QString screenshotPath(const QString& name)
{
    const QString dir = qEnvironmentVariableIsSet("KL_SCREENSHOT_DIR") ? qEnvironmentVariable("KL_SCREENSHOT_DIR")
                                                                       : QStringLiteral(KL_BINARY_DIR "/tests/gui");
    return dir + QLatin1Char('/') + name;
}

} // namespace

class TestLineProfile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<store::Store> m_store;
    std::int64_t m_session = 0;
    IterationSelection* m_selection = nullptr;

private slots:
    void initTestCase()
    {
        m_store
            = std::make_unique<store::Store>(store::Store::open(m_dir.filePath(QStringLiteral("l.db")).toStdString()));
        store::SessionRecord record;
        record.problemHash = m_store->addProblem(fx::problem("pointer_chase"));
        record.device = "NVIDIA H200 #0";
        record.proposer = "human";
        m_session = m_store->createSession(record);
        auto candidate = fx::candidate(1);
        candidate.source = kl::test::sourceText("tests/gpu/lines/pointer_chase/baseline.cu");
        candidate.fileName = "baseline.cu";
        const auto candidateId = m_store->addCandidate(m_session, candidate);

        auto reply = nlohmann::json::parse(kl::test::sourceText("tests/fixtures/lines/pointer_chase-lines-h200.json"));
        // The sampled reply is not timed (--metrics lines); timed at its main size: 68157440 bytes and 16777216 FLOPs
        // per call (the problem's expressions at T = 262144), 500 us; the same bytes copied in 20 us (3408 GB/s).
        reply["timing"] = { { "sm_clock_mhz", 1980 },
            { "cases",
                { { { "label", "64Mx256k" }, { "bytes", 68157440 }, { "flops", 16777216 },
                    { "candidate", { { "median_us", 500.0 }, { "p20_us", 499.0 }, { "p80_us", 502.0 } } },
                    { "copy", { { "median_us", 20.0 } } }, { "gbps", 136.3 }, { "pct_of_copy", 4.0 } } } } };
        // Iteration 1: its SASS stored (nvdisasm -g layout); iteration 2: only PTX (NVRTC -lineinfo).
        auto withSass = store::resultFromEvaluateResult(reply.get<kl::protocol::EvaluateResult>());
        withSass.compile.listings.sass
            = store::packedText(kl::test::sourceText("tests/fixtures/lines/pointer_chase.nvdisasm.txt"));
        CompileOptions options;
        options.lineInfo = true;
        const auto compiled = compileCandidate(
            loadCandidate(std::string(KL_SOURCE_DIR) + "/tests/gpu/lines/pointer_chase/baseline.cu"), options);
        QVERIFY2(compiled.ok, compiled.log.c_str());
        auto withPtx = store::resultFromEvaluateResult(reply.get<kl::protocol::EvaluateResult>());
        withPtx.compile.listings.ptx = store::packedText(compiled.ptx);
        // Iteration 3: timed, not sampled.
        auto unsampled = fx::passedResult(3);
        for (const auto& result : { withSass, withPtx, unsampled }) {
            const auto ref = m_store->beginIteration(m_session, candidateId);
            m_store->recordResult(ref, result);
            m_store->finishIteration(ref);
        }
        m_selection = new IterationSelection(this);
        auto view = std::make_shared<SessionView>();
        view->session = *m_store->session(m_session);
        view->rows = m_store->listIterations(m_session);
        view->indexCandidates();
        m_selection->setSession(view, [this](int index) -> std::shared_ptr<const store::IterationDetail> {
            auto detail = m_store->iteration(m_session, index);
            return detail ? std::make_shared<const store::IterationDetail>(std::move(*detail)) : nullptr;
        });
    }

    void cleanupTestCase()
    {
        delete m_selection; // before the store its loader reads, and while the application exists
        m_selection = nullptr;
        m_store.reset();
    }

    void heatMarginAndHotLines()
    {
        LineProfilePanel panel(m_selection);
        panel.resize(1200, 760);
        m_selection->select(1);
        QVERIFY2(panel.summaryText().startsWith(QStringLiteral("18032 samples in the candidate at 64Mx256k")),
            qPrintable(panel.summaryText()));
        // The margin: the planted loop's share, nothing on lines without samples.
        QCOMPARE(panel.heatText(11), QStringLiteral("100%"));
        QCOMPARE(marginText(panel.editor(), 10), QStringLiteral("100%"));
        QCOMPARE(panel.heatText(5), QString());
        QCOMPARE(marginText(panel.editor(), 4), QString());
        const QString tip = panel.heatToolTip(11);
        QVERIFY2(tip.startsWith(QStringLiteral("line 11: 100% of the kernel's samples (18009)")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("\nlong_scoreboard: 99%")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("long_scoreboard: the warp waits for a global")), qPrintable(tip));
        // The list: hottest first, each row's dominant state and source text; a click moves the editor.
        QTreeWidget* list = panel.hotLines();
        QCOMPARE(list->topLevelItemCount(), 5);
        QCOMPARE(list->topLevelItem(0)->text(0), QStringLiteral("11"));
        QCOMPARE(list->topLevelItem(0)->text(2), QStringLiteral("long_scoreboard 99%"));
        QVERIFY(list->topLevelItem(0)->text(3).startsWith(QStringLiteral("for (int k = 0; k < 64; ++k)")));
        QCOMPARE(list->topLevelItem(1)->text(0), QStringLiteral("13")); // 7 samples
        QCOMPARE(list->topLevelItem(2)->text(0), QStringLiteral("12")); // 6 samples: the store
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QRect row = list->visualItemRect(list->topLevelItem(2));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, row.center());
        QCOMPARE(editorLine(panel.editor()), 12);
        // The SASS pane follows: line 12's instructions (the store of the result) are the highlighted ones.
        QCOMPARE(highlightedLines(panel.listing()), QSet<int>({ 12 }));
        QVERIFY2(highlightedText(panel.listing()).contains(QStringLiteral("STG.E")), qPrintable(panel.listingTitle()));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->topLevelItem(0)).center());
        QCOMPARE(highlightedLines(panel.listing()), QSet<int>({ 11 }));
        const QString sass = highlightedText(panel.listing());
        QVERIFY2(sass.contains(QStringLiteral("LDG.E.CONSTANT")), qPrintable(sass));
        QVERIFY2(panel.listingTitle().startsWith(QStringLiteral("SASS of line 11: 184 instructions, 18009 samples")),
            qPrintable(panel.listingTitle()));
        QVERIFY(panel.grab().save(screenshotPath(QStringLiteral("lines-heat.png"))));
    }

    // The SASS pane lists the whole kernel, each instruction with its source line and the samples
    // CUPTI took at its PC (the dominant warp state beside them).
    void sassPaneListsTheWholeKernelWithItsSamples()
    {
        LineProfilePanel panel(m_selection);
        m_selection->select(1);
        const auto listing = lines::parseSass(kl::test::sourceText("tests/fixtures/lines/pointer_chase.nvdisasm.txt"));
        QCOMPARE(listing.functions.size(), std::size_t(1));
        const auto& rows = panel.listing()->rows();
        QCOMPARE(rows.size(), qsizetype(listing.functions.front().instructions.size() + 1)); // + the function's name
        QCOMPARE(rows.front().text, QStringLiteral("chase:"));
        // Offset, source line, samples and dominant state, then the instruction. The hottest PC: the
        // instruction after the dependent load, waiting on its scoreboard.
        const QString text = panel.listing()->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("\n0340   11 1374 long_scoreboard  IMAD.HI.U32 R7, R5, R8, RZ\n")),
            qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("\n0c30   12    1 dispatch_stall   STG.E desc[UR4][R2.64], R7\n")));
        QVERIFY(rows[1].text.startsWith(QStringLiteral("0000    5                       LDC ")));
        // Every sample of the candidate is beside an instruction: the rows add up to the phase's samples,
        // and a sampled row shows its count and carries its heat; an unsampled one neither.
        qint64 sum = 0;
        for (const auto& row : rows) {
            sum += row.samples;
            QCOMPARE(row.background.isValid(), row.samples > 0);
            if (row.samples > 0)
                QVERIFY2(
                    row.text.mid(10).startsWith(QString::number(row.samples).rightJustified(4)), qPrintable(row.text));
        }
        QCOMPARE(sum, qint64(18032));
    }

    // Source -> SASS: the editor's line highlights exactly the instructions generated for it
    // (lines::offsetsForLine); SASS -> source: a click on an instruction, or the arrow keys, move the
    // editor to the instruction's line.
    void sassAndSourceFollowEachOther()
    {
        LineProfilePanel panel(m_selection);
        panel.resize(1200, 760);
        m_selection->select(1);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        CodeListingView* listing = panel.listing();
        const auto sass = lines::parseSass(kl::test::sourceText("tests/fixtures/lines/pointer_chase.nvdisasm.txt"));
        const auto reply
            = nlohmann::json::parse(kl::test::sourceText("tests/fixtures/lines/pointer_chase-lines-h200.json"));
        const auto sampling = protocol::pcSamplingFromJson(reply.at("pc_sampling"));
        QVERIFY(sampling);
        const auto sampled = lines::sampledInstructions(sass.functions.front(), *sampling);
        for (int line : { 7, 12, 11 }) {
            panel.editor()->setCursorPosition(line - 1, 0);
            QTRY_COMPARE(highlightedLines(listing), QSet<int>({ line }));
            QCOMPARE(listing->highlightedRows().size(), qsizetype(lines::offsetsForLine(sampled, line).size()));
            // The first of them is in view.
            QVERIFY(
                listing->viewport()->rect().contains(listing->rowRect(listing->highlightedRows().front()).center()));
        }
        QCOMPARE(listing->highlightedRows().size(), qsizetype(184)); // the unrolled loop of line 11

        // A click on an instruction of another line moves the editor there, and its rows light up.
        const int row = visibleRowNotOf(listing, 11);
        QVERIFY2(row >= 0, "no row of another line in view");
        const int other = listing->rows()[row].sourceLine;
        QTest::mouseClick(listing->viewport(), Qt::LeftButton, {}, listing->rowRect(row).center());
        QCOMPARE(listing->currentRow(), row);
        QTRY_COMPARE(editorLine(panel.editor()), other);
        QTRY_COMPARE(highlightedLines(listing), QSet<int>({ other }));
        QCOMPARE(listing->currentRow(), row); // the click's row stays current: the pane does not jump
        // The arrow keys walk the instructions: down to the nearest row of another line moves the editor too.
        listing->setFocus();
        const int before = listing->currentRow();
        int target = before + 1;
        while (target < listing->rows().size() && listing->rows()[target].sourceLine == other)
            ++target;
        QVERIFY(target < listing->rows().size());
        for (int i = before; i < target; ++i)
            QTest::keyClick(listing, Qt::Key_Down);
        QCOMPARE(listing->currentRow(), target);
        QVERIFY(listing->rows()[target].sourceLine != other);
        QTRY_COMPARE(editorLine(panel.editor()), listing->rows()[target].sourceLine);
        QVERIFY(listing->hasFocus()); // the editor followed without taking the keys away
    }

    void ptxPaneFollowsTheCursor()
    {
        LineProfilePanel panel(m_selection);
        m_selection->select(2);
        panel.show(); // Scintilla reports cursor moves when it updates its view
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        CodeListingView* listing = panel.listing();
        // The whole kernel's PTX: every instruction row of the stored PTX, whatever the cursor.
        const auto stored = m_store->iteration(m_session, 2);
        QVERIFY(stored && stored->result);
        const auto ptx = lines::parsePtx(store::codeListingsOf(stored->result->compile).ptx);
        int instructions = 0;
        for (const auto& l : ptx.lines)
            instructions += l.sourceLine > 0;
        int rows = 0;
        for (const auto& r : listing->rows())
            rows += r.sourceLine > 0;
        QCOMPARE(rows, instructions);
        QVERIFY(listing->toPlainText().contains(QStringLiteral("ld.global"))
            && listing->toPlainText().contains(QStringLiteral("st.global")));

        panel.editor()->setCursorPosition(10, 0); // line 11
        QTRY_COMPARE(highlightedLines(listing), QSet<int>({ 11 }));
        QCOMPARE(listing->highlightedRows().size(), qsizetype(ptx.ptxLinesFor(11).size()));
        QVERIFY2(highlightedText(listing).contains(QStringLiteral("ld.global")), qPrintable(highlightedText(listing)));
        QVERIFY2(panel.listingTitle().startsWith(QStringLiteral("PTX of line 11: ")), qPrintable(panel.listingTitle()));
        panel.editor()->setCursorPosition(11, 0); // line 12: the store of the result
        QTRY_COMPARE(highlightedLines(listing), QSet<int>({ 12 }));
        const QString other = highlightedText(listing);
        QVERIFY2(other.contains(QStringLiteral("st.global")) && !other.contains(QStringLiteral("ld.global")),
            qPrintable(other));

        // PTX -> source (PtxListing::sourceLineOf): a click on a load of the loop moves the editor to line 11.
        const int row = visibleRowNotOf(listing, 12, QStringLiteral("ld.global"));
        QVERIFY2(row >= 0, "no load of the loop in view");
        QCOMPARE(listing->rows()[row].sourceLine, 11);
        QTest::mouseClick(listing->viewport(), Qt::LeftButton, {}, listing->rowRect(row).center());
        QTRY_COMPARE(editorLine(panel.editor()), 11);
        QTRY_COMPARE(highlightedLines(listing), QSet<int>({ 11 }));
    }

    void unsampledIterationSaysSo()
    {
        LineProfilePanel panel(m_selection);
        m_selection->select(3);
        QCOMPARE(panel.summaryText(),
            QStringLiteral("No PC sampling for this iteration; run with --metrics lines (or deep)."));
        QCOMPARE(panel.hotLines()->topLevelItemCount(), 0);
        QCOMPARE(panel.heatText(11), QString());
        QVERIFY(panel.listing()->rows().isEmpty());
        QCOMPARE(panel.listing()->toPlainText(),
            QStringLiteral("No SASS or PTX: no PTX or SASS stored for this iteration (measured before KernelLoop kept "
                           "them, or it did not compile)."));
    }

    // A compute-bound fp16 GEMM: the theoretical FP16 tensor roof and, beside it, the runner's measured
    // mma.sync ceiling recorded with the device (the H200's 635.4 TFLOP/s).
    void rooflineDrawsTheMeasuredTensorCeiling()
    {
        auto reply = nlohmann::json::parse(kl::test::sourceText("tests/fixtures/findings/gemm-tiled-sol-h200.json"));
        reply["device"]["tensor_fp16_tflops"] = 635.4;
        reply["device"]["tensor_fp16_clock_mhz"] = 1980.0;
        auto detail = std::make_shared<store::IterationDetail>();
        detail->row.index = 1;
        detail->result = store::resultFromEvaluateResult(reply.get<kl::protocol::EvaluateResult>());
        IterationSelection selection;
        auto view = std::make_shared<SessionView>();
        view->session = *m_store->session(m_session);
        view->rows = { detail->row };
        view->indexCandidates();
        selection.setSession(view, [detail](int) { return std::shared_ptr<const store::IterationDetail>(detail); });
        RooflineChart chart(&selection);
        chart.resize(900, 600);
        selection.select(1);
        QCOMPARE(chart.roofline().measuredTensorGflops.value_or(0.0), 635400.0);
        const QStringList names = chart.seriesNames();
        QVERIFY2(
            names.contains(QStringLiteral("FP16 tensor peak 1071 TFLOP/s")), qPrintable(names.join(QLatin1Char('|'))));
        QVERIFY2(names.contains(QStringLiteral("FP16 tensor measured (mma.sync) 635 TFLOP/s")),
            qPrintable(names.join(QLatin1Char('|'))));
        // The Evidence page: the ceiling beside the theoretical one, and the floor check against both floors.
        IterationFocus focus;
        focus.detail = detail;
        const QString evidence = evidencePage(focus);
        QVERIFY2(evidence.contains(QStringLiteral(
                     "FP16 tensor ceiling 1070.5 TFLOP/s theoretical, 635.4 measured (mma.sync, 59%) at 1980 MHz")),
            qPrintable(evidence));
        QVERIFY2(evidence.contains(QStringLiteral("its FLOPs at the FP16 tensor ceiling")), qPrintable(evidence));
    }

    void rooflineFollowsTheSelection()
    {
        RooflineChart chart(m_selection);
        chart.resize(900, 600);
        m_selection->select(1);
        const auto& roofline = chart.roofline();
        QCOMPARE(roofline.points.size(), std::size_t(1));
        const auto& point = roofline.points.front();
        QCOMPARE(point.intensity, 16777216.0 / 68157440.0);
        QCOMPARE(point.achievedGflops, 16777216.0 / 500e3);
        QCOMPARE(point.achievedGbps, 68157440.0 / 500e3);
        QCOMPARE(*point.copyGbps, 68157440.0 / 20e3);
        QCOMPARE(*roofline.deviceCopyGbps, 4250.4901137960105); // measured by the runner on the H200
        QVERIFY(roofline.peakGflops && *roofline.peakGflops > 50000.0); // H200 FP32: 132 SMs x 128 lanes x 2 x 1.98 GHz
        QCOMPARE(chart.seriesNames(),
            QStringList({ QStringLiteral("device copy 4250 GB/s, FP32 peak 66.9 TFLOP/s"),
                QStringLiteral("same-size copy 3408 GB/s"), QStringLiteral("achieved") }));
        QCOMPARE(chart.chart()->title(),
            QStringLiteral("Roofline of iteration 1: 33.6 GFLOP/s, 136 GB/s (4% of the same-size copy)"));
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QVERIFY(chart.grab().save(screenshotPath(QStringLiteral("lines-roofline.png"))));
        // An untimed-by-size iteration (the fixture's passed result has no bytes/FLOPs) draws nothing and says why.
        m_selection->select(3);
        QVERIFY(chart.seriesNames().isEmpty());
        QVERIFY2(!chart.note().isEmpty(), "no note");
    }
};

QTEST_MAIN(TestLineProfile)
#include "test_line_profile.moc"
