// The Lines and Roofline tabs inside the review workspace, on stored sessions the real loop wrote:
// a store made by `kernelloop-cli evaluate --metrics lines` (real NVRTC, the runner double answering
// with the H200 samples; no nvdisasm here) opens with the PTX of the planted line in the code pane;
// the bundled H200 tuner session's roofline follows the selection from iteration to iteration. The
// roofline screenshot goes to $KL_SCREENSHOT_DIR (docs/images with KL_SCREENSHOTS_TO_DOCS).
#include "app/review_workspace.h"
#include "core/store/store.h"
#include "review_fixture.h"
#include "widgets/charts_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/line_profile_panel.h"
#include "widgets/roofline_chart.h"
#include "widgets/stall_chart.h"

#include <QPlainTextEdit>
#include <QProcess>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace kl;
using namespace kl::gui;
using kl::testing::inspectorTab;

namespace {

QString screenshotPath(const QString& name)
{
    const QString dir = qEnvironmentVariableIsSet("KL_SCREENSHOT_DIR") ? qEnvironmentVariable("KL_SCREENSHOT_DIR")
                                                                       : QStringLiteral(KL_BINARY_DIR "/tests/gui");
    return dir + QLatin1Char('/') + name;
}

} // namespace

class TestLineProfileReview : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_evaluated;

private slots:
    void initTestCase()
    {
        testing::useTestSettings(QStringLiteral("test_line_profile_review"));
        m_evaluated = m_dir.filePath(QStringLiteral("evaluated.db"));
        const QString problem = QStringLiteral(KL_SOURCE_DIR "/tests/gpu/lines/pointer_chase");
        QProcess cli;
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("KL_NVDISASM"), QStringLiteral("off"));
        environment.insert(QStringLiteral("KL_MODEL_RUNNER_PC_SAMPLING"),
            QStringLiteral(KL_SOURCE_DIR "/tests/fixtures/lines/pointer_chase-lines-h200.json"));
        cli.setProcessEnvironment(environment);
        cli.start(QStringLiteral(KL_CLI_PATH),
            { QStringLiteral("evaluate"), problem + QStringLiteral("/problem.json"),
                problem + QStringLiteral("/baseline.cu"), QStringLiteral("--db"), m_evaluated,
                QStringLiteral("--runner"), QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"),
                QStringLiteral("lines") });
        QVERIFY(cli.waitForFinished(60000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    }

    void anEvaluatedSessionShowsThePtxOfTheHotLine()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, m_evaluated);
        auto* panel = inspectorTab<LineProfilePanel>(*review, QStringLiteral("Lines"));
        QVERIFY(panel);
        review->selection()->select(1);
        QTRY_VERIFY(panel->summaryText().startsWith(QStringLiteral("18032 samples")));
        // The hottest line is shown first: its PTX, from the stored NVRTC output.
        QTRY_VERIFY2(
            panel->listingTitle().startsWith(QStringLiteral("PTX of line 11")), qPrintable(panel->listingTitle()));
        QVERIFY2(panel->listing()->toPlainText().contains(QStringLiteral("ld.global")),
            qPrintable(panel->listing()->toPlainText()));
        QVERIFY2(panel->listingNote().contains(QStringLiteral("no SASS: nvdisasm not found")),
            qPrintable(panel->listingNote()));
        // The cursor moves the pane: line 12 is the store of the result.
        panel->editor()->setCursorPosition(11, 0);
        QTRY_VERIFY2(panel->listing()->toPlainText().contains(QStringLiteral("st.global")),
            qPrintable(panel->listing()->toPlainText()));
    }

    // The bundled session recorded with --metrics deep on the H200: the Lines tab has the best
    // iteration's samples and hot lines, and the Stall chart a bar for each of its 13 iterations.
    void theBundledDeepSessionFillsLinesAndStalls()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(
            *review, QStringLiteral(KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-deep-h200.klsession"));
        auto* panel = inspectorTab<LineProfilePanel>(*review, QStringLiteral("Lines"));
        QVERIFY(panel);
        review->selection()->select(6);
        QTRY_VERIFY2(
            panel->summaryText().startsWith(QStringLiteral("21686 samples")), qPrintable(panel->summaryText()));
        QVERIFY(panel->hotLines()->topLevelItemCount() > 0);
        QTRY_VERIFY2(
            panel->listingTitle().startsWith(QStringLiteral("SASS of line")), qPrintable(panel->listingTitle()));
        StallChart* stalls = review->charts()->stalls();
        QVERIFY(stalls);
        review->charts()->tabs()->setCurrentWidget(stalls);
        QTRY_COMPARE(stalls->shownIterations().size(), std::size_t(13));
        QVERIFY2(stalls->categories().size() >= 3, qPrintable(stalls->categories().join(QLatin1Char(','))));
    }

    void theRooflineFollowsTheSelection()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::tunerSession);
        auto* chart = inspectorTab<RooflineChart>(*review, QStringLiteral("Roofline"));
        QVERIFY(chart);
        const auto stored
            = store::Store::open(testing::tunerSession.toStdString(), store::Store::Options { .readOnly = true });
        const auto session = review->selection()->session()->session.id;
        std::vector<double> seen;
        for (int index : { 1, 6, 26 }) {
            review->selection()->select(index);
            QTRY_COMPARE(chart->roofline().points.size(), std::size_t(1));
            // The point is this iteration's: its FLOPs over its own median, read here from the store.
            const auto detail = stored.iteration(session, index);
            QVERIFY(detail && detail->result);
            const auto& timed = detail->result->timing.value().cases[0];
            const double gflops = timed.flops / (timed.candidate.medianUs * 1e3);
            QCOMPARE(chart->roofline().points.front().achievedGflops, gflops);
            QVERIFY2(chart->chart()->title().startsWith(QStringLiteral("Roofline of iteration %1: ").arg(index)),
                qPrintable(chart->chart()->title()));
            // Both ceilings: the device's measured copy with the FP32 peak, and the same-size copy.
            const auto names = chart->seriesNames();
            QCOMPARE(names.size(), 3);
            QVERIFY2(
                names[0].startsWith(QStringLiteral("device copy ")) && names[0].contains(QStringLiteral("FP32 peak")),
                qPrintable(names[0]));
            QVERIFY2(names[1].startsWith(QStringLiteral("same-size copy ")), qPrintable(names[1]));
            QCOMPARE(names[2], QStringLiteral("achieved"));
            seen.push_back(gflops);
        }
        QVERIFY(seen[0] != seen[1] && seen[1] != seen[2]);
        QTest::qWait(100); // the legend's layout follows the series on the next passes of the event loop
        QVERIFY(chart->grab().save(screenshotPath(QStringLiteral("review-roofline.png"))));
    }
};

QTEST_MAIN(TestLineProfileReview)
#include "test_line_profile_review.moc"
