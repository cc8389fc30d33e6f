#pragma once
// Runs analyses off the GUI thread, one at a time, newest wins: a request made while one runs
// waits (replacing any older waiting one), and a result older than the newest request is dropped,
// so the window never shows a report for values the engineer has already changed.
#include "app/analysis.h"

#include <QFutureWatcher>
#include <QObject>

#include <optional>

namespace kl::gui {

class AnalysisScheduler : public QObject {
    Q_OBJECT
public:
    explicit AnalysisScheduler(QObject* parent = nullptr);
    ~AnalysisScheduler() override;

    // Returns the request's id. `request.id` is assigned here.
    quint64 request(AnalysisRequest request);

    bool isBusy() const { return m_running; }
    quint64 latestRequest() const { return m_latest; }
    int droppedCount() const { return m_dropped; } // results or waiting requests superseded

signals:
    void started(quint64 id);
    // Only for the newest request; on the GUI thread.
    void finished(std::shared_ptr<const kl::gui::AnalysisOutcome> outcome);

private:
    void start(AnalysisRequest request);
    void onFinished();

    QFutureWatcher<std::shared_ptr<const AnalysisOutcome>> m_watcher;
    std::optional<AnalysisRequest> m_waiting;
    quint64 m_nextId = 1;
    quint64 m_latest = 0;
    bool m_running = false;
    int m_dropped = 0;
};

} // namespace kl::gui
