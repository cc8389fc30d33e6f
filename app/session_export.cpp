#include "app/session_export.h"

#include "app/main_window.h"
#include "app/review_workspace.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/field_formats/kernel_tuner_t4.h"
#include "core/field_formats/trajectories.h"
#include "core/model/error.h"
#include "core/store/store.h"
#include "widgets/iteration_selection.h"
#include "widgets/string_conversion.h"

#include <QAction>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdlib>
#include <filesystem>

namespace kl::gui {

namespace {

QString errorText(const Error& e)
{
    return QStringLiteral("[") + toQString(e.category()) + QStringLiteral("] ") + toQString(e.message());
}

// The keys the CLI's exports redact in every form (cli/cmd_field_formats.cpp): those of the usual
// variables, where set. A key never reaches the store; the export redacts again all the same.
fieldformats::ExportSecrets environmentSecrets()
{
    fieldformats::ExportSecrets secrets;
    for (const char* name : { "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KERNELLOOP_API_KEY" })
        if (const char* value = std::getenv(name); value && *value)
            secrets.keys.emplace_back(value);
    return secrets;
}

} // namespace

SessionExport::SessionExport(MainWindow* window, QMenu* sessionMenu)
    : QObject(window)
    , m_window(window)
    //: Session menu, submenu: the shown session written in other tools' formats
    , m_menu(sessionMenu->addMenu(tr("E&xport")))
    , m_watcher(new QFutureWatcher<Outcome>(this))
{
    //: Session ▸ Export: a FlashInfer-Bench dataset folder (definitions, workloads, solutions, traces)
    m_trace
        = m_menu->addAction(tr("&FlashInfer Trace Dataset…"), this, [this] { exportShown(Format::FlashInferTrace); });
    //: Session ▸ Export: one JSON line per iteration (prompts, kernel, verdict, the engineer's decision)
    m_trajectories
        = m_menu->addAction(tr("&Trajectories (JSONL)…"), this, [this] { exportShown(Format::Trajectories); });
    //: Session ▸ Export: the session's evaluations as Kernel Tuner's T4 results file
    m_t4 = m_menu->addAction(tr("&Kernel Tuner T4 (JSON)…"), this, [this] { exportShown(Format::KernelTuner); });
    m_prompt = [this](Format format, const QString& suggested) -> QString {
        if (format != Format::FlashInferTrace) {
            const bool lines = format == Format::Trajectories;
            //: file dialog titles of Session ▸ Export
            const QString title = lines ? tr("Export Trajectories") : tr("Export Kernel Tuner T4");
            return QFileDialog::getSaveFileName(
                m_window, title, suggested, lines ? tr("JSON Lines (*.jsonl)") : tr("JSON (*.json)"));
        }
        //: file dialog title: where the FlashInfer Trace dataset is written
        const QString dir = QFileDialog::getExistingDirectory(m_window, tr("FlashInfer Trace Dataset Folder"));
        if (dir.isEmpty())
            return {};
        try {
            fieldformats::checkExportFolder(toStdString(dir), false);
        } catch (const Error& e) { // not empty: files of the same names would be replaced
            if (e.category() != "trace.folder-not-empty")
                return dir; // the export says what is wrong
            const auto answer = QMessageBox::question(m_window, tr("FlashInfer Trace Dataset Folder"),
                //: %1 a folder
                tr("%1 is not empty. Write the dataset into it, replacing files of the same names?").arg(dir),
                QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
            if (answer != QMessageBox::Yes)
                return {};
        }
        return dir;
    };
    connect(m_window->review()->selection(), &IterationSelection::sessionChanged, this, &SessionExport::updateActions);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &SessionExport::done);
    updateActions();
}

SessionExport::~SessionExport() { m_watcher->waitForFinished(); }

QAction* SessionExport::action(Format format) const
{
    switch (format) {
    case Format::FlashInferTrace:
        return m_trace;
    case Format::Trajectories:
        return m_trajectories;
    case Format::KernelTuner:
        return m_t4;
    }
    return nullptr;
}

void SessionExport::updateActions()
{
    const bool enabled = m_window->review()->hasSession() && !isRunning();
    m_menu->menuAction()->setEnabled(enabled);
    for (QAction* a : { m_trace, m_trajectories, m_t4 })
        a->setEnabled(enabled);
}

void SessionExport::exportShown(Format format)
{
    const auto document = m_window->review()->document();
    const auto shown = m_window->review()->selection()->session();
    if (!document || !shown || isRunning())
        return;
    const std::int64_t id = shown->session.id;
    const QString base = toQString(shown->session.problemName) + QStringLiteral("-session%1").arg(id);
    const QString suggested = format == Format::FlashInferTrace ? base + QStringLiteral("-flashinfer-trace")
        : format == Format::Trajectories                        ? base + QStringLiteral("-trajectories.jsonl")
                                                                : base + QStringLiteral("-t4.json");
    const QString destination = m_prompt(format, suggested);
    if (destination.isEmpty())
        return;
    // Its own read-only connection on the worker: the document's stays the GUI thread's. The prompt
    // confirmed replacing what is there (the file dialog asks for a file, the folder prompt for a folder
    // that is not empty), so the core is told to overwrite; it still refuses the store itself as target.
    const std::filesystem::path store = toStdString(document->path());
    const std::filesystem::path target = toStdString(destination);
    auto work = [format, store, target, id, destination, secrets = environmentSecrets()]() -> Outcome {
        try {
            store::Store::Options options;
            options.readOnly = true;
            const store::Store s = store::Store::open(store, options);
            switch (format) {
            case Format::FlashInferTrace: {
                const auto summary = fieldformats::exportFlashInferTrace(s, { id }, target, { secrets, true });
                if (!summary.schemaProblems.empty())
                    //: %n problems, %1 the first one
                    return { tr("[trace.schema] %n problem(s) against the FlashInfer Trace schema, the first: %1",
                                 nullptr, int(summary.schemaProblems.size()))
                                 .arg(toQString(summary.schemaProblems.front())),
                        true };
                //: %1 definitions, %2 workloads, %3 solutions, %4 traces, %5 the folder
                return { tr("Wrote %1 definition(s), %2 workloads, %3 solutions and %4 traces to %5 (schema check "
                            "passed)")
                             .arg(summary.definitions.size())
                             .arg(summary.workloads)
                             .arg(summary.solutions)
                             .arg(summary.traces)
                             .arg(destination),
                    false };
            }
            case Format::Trajectories: {
                const auto summary = fieldformats::exportTrajectories(s, { id }, target, secrets, true);
                //: %1 iterations, %2 session id, %3 preference pairs, %4 the file
                return { tr("Wrote %1 iterations of session %2 and %3 preference pairs to %4")
                             .arg(summary.iterations)
                             .arg(id)
                             .arg(summary.preferencePairs)
                             .arg(destination),
                    false };
            }
            case Format::KernelTuner: {
                const int n = fieldformats::exportKernelTuner(s, id, target, secrets, true);
                //: %1 results, %2 session id, %3 the file
                return { tr("Wrote %1 T4 results of session %2 to %3").arg(n).arg(id).arg(destination), false };
            }
            }
            return {};
        } catch (const Error& e) {
            return { errorText(e), true };
        } catch (const std::exception& e) {
            return { QStringLiteral("[export.failed] ") + toQString(e.what()), true };
        }
    };
    //: status bar while an export is written
    m_window->statusBar()->showMessage(tr("Exporting session %1 to %2…").arg(id).arg(destination));
    m_watcher->setFuture(QtConcurrent::run(std::move(work)));
    updateActions();
}

void SessionExport::done()
{
    const Outcome outcome = m_watcher->result();
    m_window->statusBar()->showMessage(outcome.message, outcome.isError ? 0 : 8000);
    updateActions();
    emit finished(outcome.message, outcome.isError);
}

} // namespace kl::gui
