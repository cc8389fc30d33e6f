#include "app/analysis_scheduler.h"

#include <QtConcurrent/QtConcurrentRun>

namespace kl::gui {

AnalysisScheduler::AnalysisScheduler(QObject* parent)
    : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcherBase::finished, this, &AnalysisScheduler::onFinished);
}

AnalysisScheduler::~AnalysisScheduler()
{
    // The job owns copies of its inputs, but let it end before the process tears down NVRTC.
    m_watcher.waitForFinished();
}

quint64 AnalysisScheduler::request(AnalysisRequest request)
{
    request.id = m_nextId++;
    m_latest = request.id;
    if (m_running) {
        if (m_waiting)
            ++m_dropped;
        m_waiting = std::move(request);
    } else {
        start(std::move(request));
    }
    return m_latest;
}

void AnalysisScheduler::start(AnalysisRequest request)
{
    m_running = true;
    const quint64 id = request.id;
    m_watcher.setFuture(QtConcurrent::run([request = std::move(request)] { return analyse(request); }));
    emit started(id);
}

void AnalysisScheduler::onFinished()
{
    m_running = false;
    std::shared_ptr<const AnalysisOutcome> outcome = m_watcher.result();
    if (m_waiting) {
        AnalysisRequest next = std::move(*m_waiting);
        m_waiting.reset();
        start(std::move(next));
    }
    if (!outcome || outcome->id != m_latest) {
        ++m_dropped;
        return;
    }
    emit finished(std::move(outcome));
}

} // namespace kl::gui
