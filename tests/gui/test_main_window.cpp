// The main window end to end, offscreen, with real NVRTC behind it: open the example, see the
// report, change a tunable, break the source, open a malformed problem, and take a screenshot.
#include "app/main_window.h"
#include "app/recent_files.h"
#include "widgets/diagnostics_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/occupancy_chart.h"
#include "widgets/occupancy_panel.h"
#include "widgets/static_report_model.h"
#include "widgets/tunables_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace kl;
using namespace kl::gui;

namespace {

// NVRTC takes ~0.2–1 s per compile; generous for a loaded CI machine.
constexpr int kAnalysisTimeout = 60000;

const QString examplePath = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");

QVariant reportCell(const MainWindow& window, int column, int role = Qt::DisplayRole)
{
    return window.reportModel()->index(0, column).data(role);
}

void selectValue(TunablesPanel* panel, const char* name, const QString& value)
{
    auto* combo = qobject_cast<QComboBox*>(panel->editorFor(QString::fromLatin1(name)));
    QVERIFY(combo);
    const int index = combo->findText(value);
    QVERIFY(index >= 0);
    combo->setCurrentIndex(index);
}

} // namespace

class TestGuiMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // Keep the engineer's own settings (recent files, geometry) out of the test.
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_main_window"));
        RecentFiles().clear();
    }

    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1500, 950);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void cleanup() { m_window.reset(); }

    void opensTheExampleAndShowsItsReport()
    {
        QSignalSpy shown(m_window.get(), &MainWindow::analysisShown);
        QVERIFY(m_window->openProblem(examplePath));
        QVERIFY(m_window->problem());
        QCOMPARE(QString::fromStdString(m_window->problem()->name), QStringLiteral("layernorm_gelu"));
        QCOMPARE(m_window->editor()->source(), QString::fromStdString(m_window->problem()->baseline.source));
        QVERIFY(m_window->windowTitle().contains(QStringLiteral("layernorm_gelu")));

        QTRY_VERIFY_WITH_TIMEOUT(m_window->reportModel()->rowCount() > 0, kAnalysisTimeout);
        QCOMPARE(shown.count(), 1);
        QVERIFY2(!m_window->lastOutcome()->error,
            m_window->lastOutcome()->error ? m_window->lastOutcome()->error->message().c_str() : "");
        QVERIFY(reportCell(*m_window, StaticReportModel::RegistersColumn).toInt() > 0);
        QVERIFY(reportCell(*m_window, StaticReportModel::OccupancyColumn).toString().endsWith(QLatin1Char('%')));
        QVERIFY(!reportCell(*m_window, StaticReportModel::LimiterColumn).toString().isEmpty());
        QCOMPARE(reportCell(*m_window, StaticReportModel::KernelColumn).toString(), QStringLiteral("layernorm_gelu"));
        QCOMPARE(reportCell(*m_window, StaticReportModel::ThreadsColumn).toString(), QStringLiteral("128"));
        QVERIFY(m_window->statusText().startsWith(QStringLiteral("Compiled")));
        QCOMPARE(m_window->diagnosticsModel()->errorCount(), 0);
        QVERIFY(m_window->occupancyPanel()->chart()->hasKernel());
        QCOMPARE(m_window->tunablesPanel()->values(), m_window->problem()->baseline.defaults());
        QCOMPARE(RecentFiles().paths().value(0), QFileInfo(examplePath).absoluteFilePath());
    }

    void changingATunableChangesTheReport()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->reportModel()->rowCount() > 0 && !m_window->isAnalysing(), kAnalysisTimeout);
        const int registersBefore = reportCell(*m_window, StaticReportModel::RegistersColumn).toInt();

        selectValue(m_window->tunablesPanel(), "THREADS", QStringLiteral("512"));
        selectValue(m_window->tunablesPanel(), "VEC", QStringLiteral("8"));
        selectValue(m_window->tunablesPanel(), "CACHE", QStringLiteral("4"));
        QTRY_COMPARE_WITH_TIMEOUT(reportCell(*m_window, StaticReportModel::ThreadsColumn).toString(),
            QStringLiteral("512"), kAnalysisTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isAnalysing(), kAnalysisTimeout);
        const TunableValues shown = m_window->lastOutcome()->tunables;
        QCOMPARE(shown.at("THREADS"), std::int64_t(512));
        QCOMPARE(shown.at("VEC"), std::int64_t(8));
        QCOMPARE(shown.at("CACHE"), std::int64_t(4));
        // Keeping 32 values per thread in registers costs registers.
        QVERIFY2(reportCell(*m_window, StaticReportModel::RegistersColumn).toInt() > registersBefore,
            qPrintable(QStringLiteral("%1 → %2")
                           .arg(registersBefore)
                           .arg(reportCell(*m_window, StaticReportModel::RegistersColumn).toInt())));
        QCOMPARE(m_window->occupancyPanel()->chart()->currentPoint().x(),
            double(reportCell(*m_window, StaticReportModel::RegistersColumn).toInt()));
    }

    void onlyTheNewestResultIsShown()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isAnalysing(), kAnalysisTimeout);
        QSignalSpy shown(m_window.get(), &MainWindow::analysisShown);
        // Three changes at once: the first runs, the second waits and is replaced by the third,
        // the first's result is stale when it arrives. Only the third is shown.
        selectValue(m_window->tunablesPanel(), "THREADS", QStringLiteral("64"));
        selectValue(m_window->tunablesPanel(), "THREADS", QStringLiteral("256"));
        selectValue(m_window->tunablesPanel(), "THREADS", QStringLiteral("1024"));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isAnalysing(), kAnalysisTimeout);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(m_window->lastOutcome()->tunables.at("THREADS"), std::int64_t(1024));
        QCOMPARE(reportCell(*m_window, StaticReportModel::ThreadsColumn).toString(), QStringLiteral("1024"));
    }

    void aCompileErrorIsShownAtItsLine()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isAnalysing(), kAnalysisTimeout);
        KernelEditor* editor = m_window->editor();
        const QString source = editor->source();
        const QString anchor = QStringLiteral("const int row = blockIdx.x;");
        const int offset = source.indexOf(anchor);
        QVERIFY(offset > 0);
        const int line = static_cast<int>(source.left(offset).count(QLatin1Char('\n'))) + 1;
        QString broken = source;
        broken.replace(anchor, QStringLiteral("const int row = blockIdx.x + undeclared_thing;"));
        editor->setText(broken); // as if typed: goes through the debounce
        QVERIFY(m_window->isAnalysing());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->diagnosticsModel()->errorCount() > 0, kAnalysisTimeout);
        QVERIFY2(m_window->statusText().startsWith(QStringLiteral("Compile error: "))
                && m_window->statusText().contains(QStringLiteral("undeclared_thing")),
            qPrintable(m_window->statusText()));
        QCOMPARE(m_window->diagnosticsModel()->index(0, DiagnosticsModel::CategoryColumn).data().toString(),
            QStringLiteral("undeclared-identifier"));
        QCOMPARE(m_window->reportModel()->rowCount(), 0);
        QVERIFY(!m_window->occupancyPanel()->chart()->hasKernel());
        QVERIFY(editor->markersAtLine(line - 1) != 0);
        QVERIFY(editor->annotation(line - 1).contains(QStringLiteral("undeclared_thing")));
        QCOMPARE(m_window->diagnosticsModel()->index(0, 0).data(DiagnosticsModel::LineRole).toInt(), line);

        editor->setFirstVisibleLine(std::max(0, line - 12));
        QVERIFY(m_window->grab().save(QStringLiteral(KL_BINARY_DIR "/tests/gui/main-window-compile-error.png")));

        // Fixing it brings the report back and clears the marks.
        editor->setText(source);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->reportModel()->rowCount() > 0, kAnalysisTimeout);
        QCOMPARE(editor->markersAtLine(line - 1), 0u);
        QCOMPARE(m_window->diagnosticsModel()->errorCount(), 0);
    }

    void aBadDirectiveIsACategorisedError()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isAnalysing(), kAnalysisTimeout);
        QString source = m_window->editor()->source();
        source.replace(QStringLiteral("// @kl tunable VEC = 1 in 1, 2, 4, 8"),
            QStringLiteral("// @kl tunable VEC = 3 in 1, 2, 4, 8"));
        m_window->editor()->setText(source);
        m_window->analyseNow();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->lastOutcome() && m_window->lastOutcome()->error, kAnalysisTimeout);
        QVERIFY2(m_window->statusText().contains(QStringLiteral("[candidate.")), qPrintable(m_window->statusText()));
        QCOMPARE(m_window->diagnosticsModel()->rowCount(), 1);
        QVERIFY(m_window->diagnosticsModel()
                    ->index(0, DiagnosticsModel::CategoryColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("candidate.")));
        QCOMPARE(m_window->reportModel()->rowCount(), 0);
    }

    void aMalformedProblemLeavesTheWindowWorking()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->reportModel()->rowCount() > 0, kAnalysisTimeout);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString bad = dir.filePath(QStringLiteral("problem.json"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({ "name": "broken", "sizes": { "symbols": ["M"] }, "inputs": [ { "name": "x" )");
        file.close();
        QVERIFY(!m_window->openProblem(bad));
        QVERIFY2(m_window->statusText().contains(QStringLiteral("[problem.")), qPrintable(m_window->statusText()));
        QCOMPARE(m_window->diagnosticsModel()->rowCount(), 1);
        QVERIFY(m_window->diagnosticsModel()
                    ->index(0, DiagnosticsModel::CategoryColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("problem.")));
        // The previous problem is still open and still works.
        QCOMPARE(QString::fromStdString(m_window->problem()->name), QStringLiteral("layernorm_gelu"));
        QVERIFY(m_window->isVisible());
        QVERIFY(!m_window->openProblem(dir.filePath(QStringLiteral("missing.json"))));
        QVERIFY(m_window->statusText().contains(QStringLiteral("[problem.")));
        selectValue(m_window->tunablesPanel(), "THREADS", QStringLiteral("256"));
        QTRY_COMPARE_WITH_TIMEOUT(reportCell(*m_window, StaticReportModel::ThreadsColumn).toString(),
            QStringLiteral("256"), kAnalysisTimeout);
    }

    void screenshotIsARealPicture()
    {
        QVERIFY(m_window->openProblem(examplePath));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->reportModel()->rowCount() > 0 && !m_window->isAnalysing(), kAnalysisTimeout);
        const QImage image = m_window->grab().toImage();
        const QString path = QStringLiteral(KL_BINARY_DIR "/tests/gui/main-window.png");
        QDir().mkpath(QFileInfo(path).path());
        QVERIFY(image.save(path));
        QVERIFY(image.width() >= 1500 && image.height() >= 950);
        std::set<QRgb> colours;
        for (int y = 0; y < image.height(); y += 4)
            for (int x = 0; x < image.width(); x += 4)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 100, qPrintable(QStringLiteral("%1 colours").arg(colours.size())));
    }

private:
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestGuiMainWindow)
#include "test_main_window.moc"
