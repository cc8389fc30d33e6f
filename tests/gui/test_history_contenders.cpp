// PyTorch as a contender in the GUI's history: on the bundled H200 KernelBench softmax session (a
// Triton candidate against a PyTorch reference, eager and torch.compile timed in the same job), the
// history table's "vs eager" and "vs torch.compile" cells read what `kernelloop-cli history` prints
// for the same iteration, the GPU cell names the runner, and the history's CSV and JSON exports carry
// the same figures. A CUDA session hides the PyTorch columns. The bundled file is opened read-only
// and must come out byte-identical.
#include "app/review_workspace.h"
#include "review_fixture.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_table_model.h"
#include "widgets/proposal_tree_model.h"

#include <QAbstractItemModelTester>
#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <map>
#include <utility>

using namespace kl;
using namespace kl::gui;

namespace {

const QString softmaxSession
    = QStringLiteral(KL_SOURCE_DIR "/resources/sessions/kernelbench-softmax-triton-h200.klsession");

QByteArray digest(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256);
}

// What `kernelloop-cli history` prints under each iteration's row: "vs eager 1.11x (eager 143.17 us),
// vs torch.compile 0.61x (...)"; by iteration, the two speedups as printed.
std::map<int, std::pair<QString, QString>> cliContenders(const QString& store)
{
    QProcess cli;
    cli.start(QStringLiteral(KL_CLI), { QStringLiteral("history"), QStringLiteral("--db"), store });
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
        return {};
    const QString out = QString::fromUtf8(cli.readAllStandardOutput());
    static const QRegularExpression row(QStringLiteral("^\\s*(\\d+) "));
    static const QRegularExpression contenders(
        QStringLiteral("^\\s+vs eager ([0-9.]+)x \\(eager [0-9.]+ us\\), vs torch.compile ([0-9.]+)x"));
    std::map<int, std::pair<QString, QString>> byIteration;
    int iteration = 0;
    for (const QString& line : out.split(QLatin1Char('\n'))) {
        if (const auto m = row.match(line); m.hasMatch())
            iteration = m.captured(1).toInt();
        else if (const auto c = contenders.match(line); c.hasMatch() && iteration > 0)
            byIteration[iteration] = { c.captured(1), c.captured(2) };
    }
    return byIteration;
}

// One CSV line's fields (RFC 4180: a quoted field may hold commas and doubled quotes).
QList<QByteArray> csvFields(const QByteArray& line)
{
    QList<QByteArray> fields(1);
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            fields.back() += line[++i];
        else if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            fields.append(QByteArray());
        else
            fields.back() += c;
    }
    return fields;
}

} // namespace

class TestHistoryContenders : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        testing::useTestSettings(QStringLiteral("test_gui_history_contenders"));
        QVERIFY(m_dir.isValid());
    }

    void historyShowsEagerAndTorchCompileAsTheCliDoes()
    {
        const QByteArray before = digest(softmaxSession);
        QVERIFY(!before.isEmpty());
        const auto cli = cliContenders(softmaxSession);
        QCOMPARE(int(cli.size()), 17);

        auto review = testing::shownReviewWorkspace();
        review->resize(1920, 1000); // room for the GPU column too (one GPU for all gives way when narrower)
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        HistoryPanel* history = review->history();
        // Attached before the rows and before the figures: the insertion and the later in-place change.
        QAbstractItemModelTester table(history->tableModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tree(history->treeModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        testing::openAndWait(*review, softmaxSession);
        QVERIFY(review->hasSession());

        const IterationTableModel* model = history->tableModel();
        QCOMPARE(model->rowCount(), 17);
        QCOMPARE(model->headerData(IterationTableModel::VsEagerColumn, Qt::Horizontal).toString(), u"vs eager"_qs);
        QCOMPARE(
            model->headerData(IterationTableModel::VsCompileColumn, Qt::Horizontal).toString(), u"vs torch.compile"_qs);
        QVERIFY(!history->table()->isColumnHidden(IterationTableModel::VsEagerColumn));
        QVERIFY(!history->table()->isColumnHidden(IterationTableModel::VsCompileColumn));
        QVERIFY(!history->table()->isColumnHidden(IterationTableModel::GpuColumn));
        for (int row = 0; row < model->rowCount(); ++row) {
            const int iteration = model->index(row, 0).data(IterationTableModel::IterationRole).toInt();
            const auto printed = cli.find(iteration);
            QVERIFY(printed != cli.end());
            QCOMPARE(model->index(row, IterationTableModel::VsEagerColumn).data().toString(),
                printed->second.first + u"×"_qs);
            QCOMPARE(model->index(row, IterationTableModel::VsCompileColumn).data().toString(),
                printed->second.second + u"×"_qs);
            QCOMPARE(model->index(row, IterationTableModel::GpuColumn).data().toString(), u"local:0 · NVIDIA H200"_qs);
        }
        // Iteration 6: "vs eager 1.64x (eager 143.01 us), vs torch.compile 1.11x (torch.compile 96.29 us)".
        const int six = model->rowOf(6);
        QCOMPARE(model->index(six, IterationTableModel::VsEagerColumn).data().toString(), u"1.64×"_qs);
        const QString tip = model->index(six, IterationTableModel::VsEagerColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(
            tip.contains(u"(eager 143.01 us)"_qs) && tip.contains(u"(torch.compile 96.29 us)"_qs), qPrintable(tip));
        // The proposal tree shows the same cells.
        const QModelIndex node = history->treeModel()->indexOf(6);
        QCOMPARE(node.siblingAtColumn(IterationTableModel::VsCompileColumn).data().toString(), u"1.11×"_qs);
        // Sorting by "vs eager" orders by the number: iteration 17 (1.95x) first when descending.
        history->table()->sortByColumn(IterationTableModel::VsEagerColumn, Qt::DescendingOrder);
        QCOMPARE(history->table()->model()->index(0, 0).data(IterationTableModel::IterationRole).toInt(), 17);

        // The exports carry them too.
        const QString csv = m_dir.filePath(QStringLiteral("history.csv"));
        QCOMPARE(review->exportHistory(csv, false), QString());
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = csvFile.readAll().split('\n');
        QCOMPARE(lines.size(), 19); // header, 17 rows, the final newline
        const QList<QByteArray> header = lines[0].split(',');
        const int eagerAt = header.indexOf("vs_eager");
        const int compileAt = header.indexOf("vs_torch_compile");
        const int runnerAt = header.indexOf("runner");
        QVERIFY(eagerAt > 0 && compileAt > 0 && runnerAt > 0);
        for (int line = 1; line <= 17; ++line) {
            const QList<QByteArray> fields = csvFields(lines[line]);
            QCOMPARE(fields.size(), header.size());
            const auto printed = cli.at(fields[0].toInt());
            QCOMPARE(QString::number(fields[eagerAt].toDouble(), 'f', 2), printed.first);
            QCOMPARE(QString::number(fields[compileAt].toDouble(), 'f', 2), printed.second);
            QCOMPARE(fields[runnerAt], QByteArray("local:0"));
        }
        const QString json = m_dir.filePath(QStringLiteral("history.json"));
        QCOMPARE(review->exportHistory(json, true), QString());
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonArray iterations = QJsonDocument::fromJson(jsonFile.readAll()).object()[u"iterations"_qs].toArray();
        QCOMPARE(iterations.size(), 17);
        const QJsonObject sixth = iterations[5].toObject();
        QCOMPARE(sixth[u"iteration"_qs].toInt(), 6);
        QCOMPARE(QString::number(sixth[u"vs_eager"_qs].toDouble(), 'f', 2), u"1.64"_qs);
        QCOMPARE(QString::number(sixth[u"vs_torch_compile"_qs].toDouble(), 'f', 2), u"1.11"_qs);
        QCOMPARE(sixth[u"gpu_model"_qs].toString(), u"NVIDIA H200"_qs);
        const QJsonObject size = sixth[u"pytorch"_qs].toArray().at(0).toObject();
        QCOMPARE(QString::number(size[u"eager_us"_qs].toDouble(), 'f', 2), u"143.01"_qs);
        QCOMPARE(QString::number(size[u"torch_compile_us"_qs].toDouble(), 'f', 2), u"96.29"_qs);

        review.reset();
        QCOMPARE(digest(softmaxSession), before);
    }

    // A CUDA reference has no PyTorch contenders: the columns stay hidden, the export's are empty.
    void cudaSessionHidesThePytorchColumns()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::tunerSession);
        const HistoryPanel* history = review->history();
        QVERIFY(history->tableModel()->rowCount() > 0);
        QVERIFY(history->table()->isColumnHidden(IterationTableModel::VsEagerColumn));
        QVERIFY(history->table()->isColumnHidden(IterationTableModel::VsCompileColumn));
        QVERIFY(history->tree()->isColumnHidden(IterationTableModel::VsEagerColumn));
        QCOMPARE(history->tableModel()->index(0, IterationTableModel::VsEagerColumn).data().toString(), u"–"_qs);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestHistoryContenders)
#include "test_history_contenders.moc"
