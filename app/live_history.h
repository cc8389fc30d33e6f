#pragma once
// The running session in the review workspace: its history rows and chart figures come from the
// outcomes the loop announced (core/report/live_iteration.h), appended as each iteration finishes with
// no store read; the followed iteration's detail (what the inspector shows of it, its parent and the
// baseline) is read off the GUI thread, at most ten times a second; the whole session is read once at
// its end to reconcile with the store. No store is read on the GUI thread while the session runs.
#include "core/loop/loop_values.h"
#include "core/report/live_iteration.h"
#include "core/store/records.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <cstdint>
#include <map>
#include <memory>

namespace kl::gui {

class LiveSession;
class MainWindow;
struct SessionView;

class LiveHistory : public QObject {
    Q_OBJECT
public:
    LiveHistory(MainWindow* window, LiveSession* live, QObject* parent = nullptr);
    ~LiveHistory() override;

    void reset(); // a session starts: nothing followed yet
    // The session is open in the workspace from `storePath` (its rows come from the loop from now on).
    void follow(const QString& storePath);
    const QString& storePath() const { return m_store; }
    // An iteration the loop announced: its row and figures shown at once, its detail read off the GUI thread.
    void add(const IterationOutcome& outcome);
    // The session ended: the store's own rows and figures, read once (off the GUI thread).
    void reconcile();
    int storeReads() const { return m_storeReads; } // reads begun (details or the whole session), for tests

private:
    struct Read {
        std::shared_ptr<SessionView> view; // the whole session (reconcile), else null
        std::map<int, std::shared_ptr<const store::IterationDetail>> details; // by iteration index
        std::vector<store::SessionRow> sessions; // the store's session list, for the browser
    };
    void read(bool whole);
    void showRead();
    void showMerged(); // the workspace's session with the loop's iterations in it
    std::shared_ptr<const SessionView> merged(const SessionView& shown) const;
    bool showsLiveSession() const;

    MainWindow* m_window;
    LiveSession* m_live;
    QString m_store;
    int m_lastIteration = 0;
    std::map<int, report::LiveIteration> m_iterations; // announced, by index
    bool m_readQueued = false;
    bool m_readAgain = false; // iterations arrived while a read was under way
    bool m_wholeAgain = false; // the end arrived while a detail read was under way
    int m_storeReads = 0;
    QFutureWatcher<std::shared_ptr<const Read>>* m_read;
};

} // namespace kl::gui
