#pragma once
// Session ▸ Export: the session shown in the review workspace in the field's formats, through the
// same core calls as kernelloop-cli's export-trace, export-trajectories and export-t4
// (core/field_formats): a FlashInfer Trace dataset (a folder), trajectories JSONL, Kernel Tuner T4
// JSON. Each action asks for the destination, writes off the GUI thread through a connection of its
// own, and says in the status bar what was written or the categorised error. Disabled while no
// session is shown, and while an export runs.
#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <functional>

class QAction;
class QMenu;

namespace kl::gui {

class MainWindow;

class SessionExport : public QObject {
    Q_OBJECT
public:
    enum class Format { FlashInferTrace, Trajectories, KernelTuner };
    // Where to write: a folder for the trace, a file otherwise; empty: cancelled. `suggested` is the
    // name offered. The default asks with a QFileDialog (which confirms replacing a file); tests hand
    // in a path.
    using DestinationPrompt = std::function<QString(Format format, const QString& suggested)>;

    // Adds the "Export" submenu to `sessionMenu`.
    SessionExport(MainWindow* window, QMenu* sessionMenu);
    ~SessionExport() override;

    QMenu* menu() const { return m_menu; }
    QAction* action(Format format) const;
    void setDestinationPrompt(DestinationPrompt prompt) { m_prompt = std::move(prompt); }
    bool isRunning() const { return m_watcher->isRunning(); }

    // Asks for the destination, then exports the shown session there (what the actions do).
    void exportShown(Format format);

signals:
    // An export ended: what was written, or "[category] message".
    void finished(const QString& message, bool isError);

private:
    struct Outcome {
        QString message;
        bool isError = false;
    };
    void updateActions();
    void done();

    MainWindow* m_window;
    QMenu* m_menu;
    QAction* m_trace;
    QAction* m_trajectories;
    QAction* m_t4;
    DestinationPrompt m_prompt;
    QFutureWatcher<Outcome>* m_watcher;
};

} // namespace kl::gui
