// The line-profile views (issue 11) on a real store holding the planted pointer_chase kernel's PC
// samples (tests/fixtures/lines): the heat margin and its stall tooltip, the hot-lines list that moves
// the editor, the SASS pane (a stored nvdisasm listing) and the PTX pane (real NVRTC -lineinfo output)
// following the cursor, and the roofline of the selected iteration. Screenshots go to
// $KL_SCREENSHOT_DIR (docs/images when regenerating the README's) or the build folder.
#include "core/compile/compiler.h"
#include "core/model/candidate.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "store_fixtures.h"
#include "tests/test_files.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/line_profile_panel.h"
#include "widgets/roofline_chart.h"

#include <QPlainTextEdit>
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
        auto withSass = store::resultFromRunnerReply(reply);
        withSass.compile = { { "sass", kl::test::sourceText("tests/fixtures/lines/pointer_chase.nvdisasm.txt") } };
        CompileOptions options;
        options.lineInfo = true;
        const auto compiled = compileCandidate(
            loadCandidate(std::string(KL_SOURCE_DIR) + "/tests/gpu/lines/pointer_chase/baseline.cu"), options);
        QVERIFY2(compiled.ok, compiled.log.c_str());
        auto withPtx = store::resultFromRunnerReply(reply);
        withPtx.compile = { { "ptx", compiled.ptx } };
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
        int line = 0, index = 0;
        panel.editor()->getCursorPosition(&line, &index);
        QCOMPARE(line + 1, 12);
        // The SASS pane follows: line 12's instructions from the stored listing.
        QVERIFY2(
            panel.listing()->toPlainText().contains(QStringLiteral("STG")), qPrintable(panel.listing()->toPlainText()));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->topLevelItem(0)).center());
        const QString sass = panel.listing()->toPlainText();
        QVERIFY2(sass.contains(QStringLiteral("LDG")) && sass.contains(QStringLiteral("samples, long_scoreboard")),
            qPrintable(sass));
        QVERIFY(panel.grab().save(screenshotPath(QStringLiteral("lines-heat.png"))));
    }

    void ptxPaneFollowsTheCursor()
    {
        LineProfilePanel panel(m_selection);
        m_selection->select(2);
        panel.show(); // Scintilla reports cursor moves when it updates its view
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.editor()->setCursorPosition(10, 0); // line 11
        QTRY_VERIFY(panel.listing()->toPlainText().contains(QStringLiteral("ld.global")));
        const QString ptx = panel.listing()->toPlainText();
        panel.editor()->setCursorPosition(11, 0); // line 12: the store of the result
        QTRY_VERIFY(panel.listing()->toPlainText() != ptx);
        const QString other = panel.listing()->toPlainText();
        QVERIFY2(other.contains(QStringLiteral("st.global")) && !other.contains(QStringLiteral("ld.global")),
            qPrintable(other));
    }

    void unsampledIterationSaysSo()
    {
        LineProfilePanel panel(m_selection);
        m_selection->select(3);
        QCOMPARE(panel.summaryText(),
            QStringLiteral("No PC sampling for this iteration; run with --metrics lines (or deep)."));
        QCOMPARE(panel.hotLines()->topLevelItemCount(), 0);
        QCOMPARE(panel.heatText(11), QString());
        QCOMPARE(panel.listing()->toPlainText(),
            QStringLiteral("No SASS or PTX: no PTX or SASS stored for this iteration (measured before KernelLoop kept "
                           "them, or it did not compile)."));
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
