// The GUI's item models under QAbstractItemModelTester, over hand-built reports (every highlight
// case) and over a real report from NVRTC.
#include "core/compile/static_report.h"
#include "core/model/problem.h"
#include "core/report/static_severity.h"
#include "widgets/diagnostics_model.h"
#include "widgets/static_report_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace kl;
using namespace kl::gui;

namespace {

StaticReport::PerLaunch launchOf(const char* kernel, int threads, int registers, double occupancy)
{
    StaticReport::PerLaunch launch;
    launch.kernel = kernel;
    launch.sizes.label = "8192x4096";
    launch.launch.kernel = kernel;
    launch.launch.block = { threads, 1, 1 };
    launch.launch.grid = { 8192, 1, 1 };
    launch.resources.name = kernel;
    launch.resources.registers = registers;
    launch.resources.barriers = 1;
    launch.occupancy.theoretical = occupancy;
    launch.occupancy.blocksPerSm = static_cast<int>(occupancy * 64 * 32 / threads);
    launch.occupancy.limiter = OccupancyLimiter::Registers;
    launch.waves = 1.5;
    launch.wholeWaves = 2;
    return launch;
}

std::shared_ptr<const StaticReport> syntheticReport()
{
    auto report = std::make_shared<StaticReport>();
    report->compile.ok = true;
    report->launches.push_back(launchOf("fine", 256, 32, 1.0));
    StaticReport::PerLaunch spilling = launchOf("spilling", 128, 255, 0.1875);
    spilling.resources.stackFrameBytes = 256;
    spilling.resources.spillStoreBytes = 64;
    spilling.resources.spillLoadBytes = 48;
    report->launches.push_back(spilling);
    StaticReport::PerLaunch half = launchOf("half", 1024, 64, 0.4);
    half.launch.grid = { 16, 4, 2 };
    report->launches.push_back(half);
    return report;
}

QModelIndex cell(const QAbstractItemModel& model, int row, int column) { return model.index(row, column); }

} // namespace

class TestGuiModels : public QObject {
    Q_OBJECT
private slots:
    void staticReportModelPassesTheTester()
    {
        StaticReportModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(StaticReportModel::ColumnCount));
        model.setReport(syntheticReport());
        QCOMPARE(model.rowCount(), 3);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        model.setReport(syntheticReport());
        QCOMPARE(model.rowCount(), 3);
    }

    void staticReportModelShowsTheNumbers()
    {
        StaticReportModel model;
        model.setReport(syntheticReport());
        QCOMPARE(cell(model, 0, StaticReportModel::KernelColumn).data().toString(), QStringLiteral("fine"));
        QCOMPARE(cell(model, 0, StaticReportModel::SizeColumn).data().toString(), QStringLiteral("8192x4096"));
        QCOMPARE(cell(model, 0, StaticReportModel::RegistersColumn).data().toInt(), 32);
        QCOMPARE(cell(model, 0, StaticReportModel::OccupancyColumn).data().toString(), QStringLiteral("100.0%"));
        QCOMPARE(cell(model, 0, StaticReportModel::LimiterColumn).data().toString(), QStringLiteral("registers"));
        QCOMPARE(
            cell(model, 0, StaticReportModel::ThreadsColumn).data(StaticReportModel::RawValueRole).toLongLong(), 256);
        QCOMPARE(cell(model, 1, StaticReportModel::SpillStoresColumn).data().toString(), QStringLiteral("64 B"));
        QCOMPARE(cell(model, 1, StaticReportModel::StackFrameColumn).data(StaticReportModel::RawValueRole).toLongLong(),
            256);
        QCOMPARE(cell(model, 2, StaticReportModel::GridColumn).data().toString(), QStringLiteral("16×4×2"));
        QCOMPARE(cell(model, 2, StaticReportModel::GridColumn).data(StaticReportModel::RawValueRole).toLongLong(), 128);
        QCOMPARE(cell(model, 0, StaticReportModel::WavesColumn).data().toString(), QStringLiteral("1.50"));
        QCOMPARE(model.headerData(StaticReportModel::RegistersColumn, Qt::Horizontal).toString(),
            QStringLiteral("Registers per thread"));
        QCOMPARE(model.headerData(1, Qt::Vertical).toString(), QStringLiteral("spilling @ 8192x4096"));
        QVERIFY(model.summary().startsWith(QStringLiteral("fine: 32 registers, 100% occupancy")));
    }

    void staticReportModelHighlightsSpillsAndLowOccupancy()
    {
        StaticReportModel model;
        model.setReport(syntheticReport());
        const auto warned = [&model](int row, int column) {
            return cell(model, row, column).data(StaticReportModel::WarningRole).toBool();
        };
        // A clean launch has nothing highlighted.
        for (int column = 0; column < model.columnCount(); ++column)
            QVERIFY2(!warned(0, column), qPrintable(QString::number(column)));
        QVERIFY(warned(1, StaticReportModel::SpillStoresColumn));
        QVERIFY(warned(1, StaticReportModel::SpillLoadsColumn));
        QVERIFY(warned(1, StaticReportModel::StackFrameColumn));
        QVERIFY(warned(1, StaticReportModel::OccupancyColumn));
        QVERIFY(warned(2, StaticReportModel::OccupancyColumn));
        QVERIFY(!warned(2, StaticReportModel::SpillStoresColumn));
        // Spills and very low occupancy are red; 40% is amber.
        const QColor spill
            = cell(model, 1, StaticReportModel::SpillStoresColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        const QColor amber
            = cell(model, 2, StaticReportModel::OccupancyColumn).data(Qt::BackgroundRole).value<QBrush>().color();
        QVERIFY(spill.red() > spill.green() + 20);
        QVERIFY(amber != spill);
        QVERIFY(!cell(model, 0, StaticReportModel::OccupancyColumn).data(Qt::BackgroundRole).isValid());
    }

    void staticReportModelUsesCoresSeverities()
    {
        // Every highlighted cell is the severity core gives (what `check` prints): a launch that
        // cannot run is critical in its occupancy, but its limiter is no warning (there is none).
        auto report = std::make_shared<StaticReport>(*syntheticReport());
        StaticReport::PerLaunch cannot = report->launches[0];
        cannot.occupancy.error = "too many threads per block";
        cannot.occupancy.theoretical = 0;
        report->launches.push_back(cannot);
        StaticReportModel model;
        model.setReport(report);
        const std::pair<int, report::StaticFigure> columns[] = {
            { StaticReportModel::SpillStoresColumn, report::StaticFigure::SpillStores },
            { StaticReportModel::StackFrameColumn, report::StaticFigure::StackFrame },
            { StaticReportModel::OccupancyColumn, report::StaticFigure::Occupancy },
            { StaticReportModel::LimiterColumn, report::StaticFigure::Limiter },
            { StaticReportModel::WavesColumn, report::StaticFigure::Waves },
        };
        for (int row = 0; row < model.rowCount(); ++row)
            for (const auto& [column, figure] : columns)
                QCOMPARE(cell(model, row, column).data(StaticReportModel::WarningRole).toBool(),
                    report::staticSeverity(report->launches[static_cast<std::size_t>(row)], figure)
                        != report::Severity::None);
        QVERIFY(cell(model, 3, StaticReportModel::OccupancyColumn).data(StaticReportModel::WarningRole).toBool());
        QVERIFY(!cell(model, 3, StaticReportModel::LimiterColumn).data(StaticReportModel::WarningRole).toBool());
    }

    void staticReportModelGivesOneShapePerLaunch()
    {
        StaticReportModel model;
        model.setReport(syntheticReport());
        const auto shapes = model.kernelShapes();
        QCOMPARE(shapes.size(), std::size_t(3));
        QCOMPARE(shapes[1].registers, 255);
        QCOMPARE(shapes[1].threadsPerBlock, 128);
        QVERIFY(shapes[1].kernel.startsWith(QStringLiteral("spilling")));
    }

    void staticReportModelOverARealReport()
    {
        const Problem problem = loadProblem(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");
        CompileOptions options;
        options.arch = problem.arch;
        const StaticReport report
            = analyseCandidate(problem, problem.baseline, {}, options, DeviceLimits::forArch(problem.arch));
        QVERIFY2(report.ok(), report.firstProblem().c_str());
        StaticReportModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setReport(std::make_shared<const StaticReport>(report));
        QCOMPARE(model.rowCount(), static_cast<int>(problem.mainSizes.size()));
        QVERIFY(cell(model, 0, StaticReportModel::RegistersColumn).data().toInt() > 0);
        QVERIFY(cell(model, 0, StaticReportModel::BlocksPerSmColumn).data().toInt() > 0);
        QCOMPARE(cell(model, 0, StaticReportModel::ThreadsColumn).data().toString(), QStringLiteral("128"));
        QCOMPARE(cell(model, 0, StaticReportModel::GridColumn).data().toString(), QStringLiteral("8192"));
        QVERIFY(cell(model, 0, StaticReportModel::OccupancyColumn).data().toString().endsWith(QLatin1Char('%')));
    }

    void diagnosticsModelPassesTheTester()
    {
        DiagnosticsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        CompilerDiagnostic syntax;
        syntax.file = "baseline.cu";
        syntax.line = 12;
        syntax.column = 5;
        syntax.severity = "error";
        syntax.message = "expected a \";\"";
        syntax.kind = CompileErrorKind::Syntax;
        CompilerDiagnostic unused = syntax;
        unused.severity = "warning";
        unused.line = 3;
        unused.message = "variable \"x\" was declared but never referenced";
        unused.kind = CompileErrorKind::Other;
        model.setEntries({ DiagnosticEntry::fromCompiler(syntax), DiagnosticEntry::fromCompiler(unused) });
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.errorCount(), 1);
        QCOMPARE(model.warningCount(), 1);
        QCOMPARE(model.index(0, DiagnosticsModel::SeverityColumn).data().toString(), QStringLiteral("error"));
        QCOMPARE(model.index(0, DiagnosticsModel::CategoryColumn).data().toString(), QStringLiteral("syntax"));
        QCOMPARE(
            model.index(0, DiagnosticsModel::LocationColumn).data().toString(), QStringLiteral("baseline.cu:12:5"));
        QCOMPARE(model.index(0, 0).data(DiagnosticsModel::LineRole).toInt(), 12);
        QCOMPARE(model.index(1, DiagnosticsModel::SeverityColumn).data().toString(), QStringLiteral("warning"));

        model.setEntries({ DiagnosticEntry::fromError(
            Error("problem.missing-field", "/tmp/p/problem.json", "inputs[1].dtype", "dtype is required")) });
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, DiagnosticsModel::CategoryColumn).data().toString(),
            QStringLiteral("problem.missing-field"));
        QCOMPARE(model.index(0, DiagnosticsModel::LocationColumn).data().toString(),
            QStringLiteral("problem.json (inputs[1].dtype)"));
        QCOMPARE(model.index(0, 0).data(DiagnosticsModel::LineRole).toInt(), 0);

        model.setEntries({ DiagnosticEntry::fromError(
            Error("candidate.bad-directive", "baseline.cu", "line 14", "unknown directive \"tunabel\"")) });
        QCOMPARE(model.index(0, 0).data(DiagnosticsModel::LineRole).toInt(), 14);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestGuiModels)
#include "test_models.moc"
