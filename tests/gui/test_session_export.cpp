// Session ▸ Export, offscreen, on the bundled recorded sessions: each of the three actions triggered with
// its destination handed in (no file dialog) writes what the core's checks pass (the FlashInfer Trace
// schema, trajectories lines with a session line, the T4 schema's rules); the actions are disabled with no
// session shown; a refused destination reads as the core's category in the status bar.
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "app/session_export.h"
#include "core/field_formats/flashinfer_check.h"
#include "core/field_formats/kernel_tuner_t4.h"
#include "core/field_formats/trajectories.h"
#include "review_fixture.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <memory>

using namespace kl;
using namespace kl::gui;
using Format = SessionExport::Format;

namespace {

QStringList nonEmptyLines(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QStringList out;
    for (const QByteArray& line : file.readAll().split('\n'))
        if (!line.trimmed().isEmpty())
            out << QString::fromUtf8(line);
    return out;
}

} // namespace

class TestGuiSessionExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        testing::useTestSettings(QStringLiteral("test_gui_session_export"));
        QVERIFY(m_dir.isValid());
    }

    void init()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1366, 768);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        m_export = m_window->sessionController()->sessionExport();
        QVERIFY(m_export);
        m_export->setDestinationPrompt([this](Format, const QString& suggested) {
            m_suggested = suggested;
            return m_destination;
        });
    }

    void cleanup() { m_window.reset(); }

    void disabledWithoutASession()
    {
        QVERIFY(!m_window->review()->hasSession());
        QVERIFY(!m_export->menu()->menuAction()->isEnabled());
        for (const Format f : { Format::FlashInferTrace, Format::Trajectories, Format::KernelTuner })
            QVERIFY(!m_export->action(f)->isEnabled());
        // Under Session, after the session's own actions.
        QVERIFY(m_export->menu()->menuAction()->parent());
        QCOMPARE(m_export->menu()->actions().size(), 3);
    }

    void writesAFlashInferTraceDataset()
    {
        openSession(testing::tunerSession);
        m_destination = m_dir.filePath(QStringLiteral("trace"));
        QString message;
        QVERIFY(run(Format::FlashInferTrace, &message));
        QVERIFY2(message.contains(QStringLiteral("schema check passed")), qPrintable(message));
        QVERIFY(m_suggested.startsWith(QStringLiteral("layernorm_gelu-session")));
        QVERIFY(QDir(m_destination + QStringLiteral("/definitions")).exists());
        QVERIFY(QDir(m_destination + QStringLiteral("/traces")).exists());
        const auto problems = fieldformats::checkTraceSet(m_destination.toStdString());
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        QCOMPARE(m_window->statusBar()->currentMessage(), message);
    }

    void writesTrajectories()
    {
        openSession(testing::llmSession);
        m_destination = m_dir.filePath(QStringLiteral("llm.jsonl"));
        QString message;
        QVERIFY(run(Format::Trajectories, &message));
        QVERIFY(m_suggested.endsWith(QStringLiteral("-trajectories.jsonl")));
        const QStringList written = nonEmptyLines(m_destination);
        QVERIFY(written.size() > 1);
        int sessions = 0;
        int iterations = 0;
        for (const QString& line : written) {
            const auto record = fieldformats::Json::parse(line.toStdString()); // throws on a bad line
            QCOMPARE(record.value("schema", std::string()), std::string(fieldformats::kTrajectorySchema));
            const std::string type = record.value("type", std::string());
            sessions += type == "session";
            iterations += type == "iteration";
        }
        QCOMPARE(sessions, 1);
        QVERIFY(iterations > 0);
        QVERIFY2(message.contains(QStringLiteral("Wrote %1 iterations").arg(iterations)), qPrintable(message));
    }

    void writesKernelTunerT4()
    {
        openSession(testing::tunerSession);
        m_destination = m_dir.filePath(QStringLiteral("tuner-t4.json"));
        QString message;
        QVERIFY(run(Format::KernelTuner, &message));
        QFile file(m_destination);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto results = fieldformats::Json::parse(file.readAll().toStdString());
        const auto problems = fieldformats::checkKernelTunerResults(results);
        QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
        QVERIFY(results.contains("results") && !results["results"].empty());
        QVERIFY2(message.contains(QStringLiteral("T4 results")), qPrintable(message));
    }

    void aRefusedDestinationShowsTheCategory()
    {
        openSession(testing::tunerSession);
        m_destination = m_dir.path(); // a folder where a file is asked for
        QString message;
        QVERIFY(!run(Format::KernelTuner, &message));
        QVERIFY2(message.startsWith(QStringLiteral("[store.export-not-a-file]")), qPrintable(message));
        QCOMPARE(m_window->statusBar()->currentMessage(), message);
        QVERIFY(m_export->action(Format::KernelTuner)->isEnabled()); // ready for another try
    }

    void cancellingWritesNothing()
    {
        openSession(testing::tunerSession);
        m_destination.clear(); // the dialog cancelled
        QSignalSpy finished(m_export, &SessionExport::finished);
        m_export->action(Format::Trajectories)->trigger();
        QVERIFY(!m_export->isRunning());
        QCOMPARE(finished.count(), 0);
    }

private:
    void openSession(const QString& path)
    {
        QVERIFY(m_window->openStore(path));
        QTRY_VERIFY(m_window->review()->hasSession());
        QVERIFY(m_export->menu()->menuAction()->isEnabled());
    }

    // Triggers the action and waits for the export; true when it succeeded.
    bool run(Format format, QString* message)
    {
        QSignalSpy finished(m_export, &SessionExport::finished);
        m_export->action(format)->trigger();
        [&] { QVERIFY(m_export->isRunning() || finished.count() == 1); }();
        [&] { QVERIFY(!m_export->action(format)->isEnabled() || finished.count() == 1); }(); // one at a time
        if (finished.count() == 0 && !finished.wait(60000))
            return false;
        *message = finished.at(0).at(0).toString();
        return !finished.at(0).at(1).toBool();
    }

    std::unique_ptr<MainWindow> m_window;
    SessionExport* m_export = nullptr;
    QTemporaryDir m_dir;
    QString m_destination;
    QString m_suggested;
};

QTEST_MAIN(TestGuiSessionExport)
#include "test_session_export.moc"
