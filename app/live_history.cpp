#include "app/live_history.h"

#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/store_document.h"
#include "core/figures/iteration_figures.h"
#include "core/model/error.h"
#include "widgets/iteration_selection.h"
#include "widgets/session_view.h"

#include <QCoreApplication>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <vector>

namespace kl::gui {

LiveHistory::LiveHistory(MainWindow* window, LiveSession* live, QObject* parent)
    : QObject(parent)
    , m_window(window)
    , m_live(live)
    , m_read(new QFutureWatcher<std::shared_ptr<const Read>>(this))
{
    connect(m_read, &QFutureWatcherBase::finished, this, &LiveHistory::showRead);
    // The workspace's own figures read, begun when it opened the session, replaces every figure: the
    // loop's iterations go back in.
    connect(window->review(), &ReviewWorkspace::figuresShown, this, [this] {
        if (!m_iterations.empty() && showsLiveSession())
            m_window->review()->selection()->updateSession(merged(*m_window->review()->selection()->session()));
    });
}

LiveHistory::~LiveHistory() { m_read->waitForFinished(); }

void LiveHistory::reset()
{
    m_store.clear();
    m_lastIteration = 0;
    m_iterations.clear();
    m_readAgain = m_wholeAgain = false;
}

void LiveHistory::follow(const QString& storePath) { m_store = storePath; }

bool LiveHistory::showsLiveSession() const
{
    const ReviewWorkspace* review = m_window->review();
    const auto document = review->document();
    const auto shown = review->selection()->session();
    return !m_store.isEmpty() && m_live->sessionId() && document && document->path() == m_store && shown
        && shown->session.id == m_live->sessionId();
}

void LiveHistory::add(const IterationOutcome& outcome)
{
    m_lastIteration = std::max(m_lastIteration, outcome.index);
    if (m_store.isEmpty() || !m_live->sessionId() || outcome.index <= 0)
        return;
    m_iterations[outcome.index] = report::liveIteration(outcome);
    if (showsLiveSession())
        showMerged(); // its row and figures now, from what the loop announced
    if (m_readQueued)
        return; // the followed iteration's detail is read at most ten times a second
    m_readQueued = true;
    QTimer::singleShot(100, this, [this] {
        m_readQueued = false;
        read(false);
    });
}

void LiveHistory::reconcile() { read(true); }

std::shared_ptr<const SessionView> LiveHistory::merged(const SessionView& shown) const
{
    auto view = std::make_shared<SessionView>(shown);
    for (const auto& [index, live] : m_iterations) {
        if (!view->row(index))
            view->rows.push_back(live.row);
        if (!view->figuresOf(index))
            view->figures.push_back(live.figures);
        if (live.row.candidateId)
            view->parentOf.emplace(*live.row.candidateId, live.parentCandidateId);
    }
    // The loop announces a round's refusals before its measured candidates: index order again.
    std::stable_sort(
        view->rows.begin(), view->rows.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    std::stable_sort(
        view->figures.begin(), view->figures.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    view->indexCandidates();
    view->sizes = figures::timedSizes(view->figures);
    return view;
}

void LiveHistory::showMerged()
{
    IterationSelection* selection = m_window->review()->selection();
    selection->extendSession(merged(*selection->session())); // the followed iteration's panels stay as they are
}

// The followed iteration's detail (with its parent's and the baseline's), or at the end the whole
// session, read off the GUI thread (own read-only connection); one read at a time, one more if
// iterations arrived meanwhile.
void LiveHistory::read(bool whole)
{
    if (m_store.isEmpty() || !m_live->sessionId())
        return;
    if (m_read->isRunning()) {
        (whole ? m_wholeAgain : m_readAgain) = true;
        return;
    }
    m_readAgain = false;
    if (whole)
        m_wholeAgain = false;
    const QString path = m_store;
    const std::int64_t id = m_live->sessionId();
    const int follow = m_lastIteration;
    std::vector<int> wanted { follow };
    if (const auto shown = m_window->review()->selection()->session(); !whole && shown && showsLiveSession()) {
        const auto view = merged(*shown);
        wanted = { follow, view->parentIteration(follow), view->baselineIteration() };
    }
    ++m_storeReads;
    m_read->setFuture(QtConcurrent::run([path, id, follow, whole, wanted]() -> std::shared_ptr<const Read> {
        try {
            const auto document = StoreDocument::open(path);
            auto read = std::make_shared<Read>();
            std::vector<int> indexes = wanted;
            if (whole) {
                auto view = document->session(id);
                if (!view)
                    return nullptr;
                view->figures = StoreDocument::readFigures(path, id);
                view->sizes = figures::timedSizes(view->figures);
                indexes = { follow, view->parentIteration(follow), view->baselineIteration() };
                read->view = std::move(view);
            }
            for (const int index : indexes)
                if (index > 0 && !read->details.count(index))
                    read->details[index] = document->iteration(id, index);
            read->sessions = document->sessions();
            return read;
        } catch (const Error&) {
            return nullptr; // the next read tries again; the session's end reopens the store
        }
    }));
}

void LiveHistory::showRead()
{
    const auto done = m_read->result();
    ReviewWorkspace* review = m_window->review();
    IterationSelection* selection = review->selection();
    const std::int64_t id = m_live->sessionId();
    if (done && id && (!done->view || done->view->session.id == id)) {
        const auto document = review->document();
        const int shown = m_lastIteration ? m_lastIteration : selection->current();
        if (!document || document->path() != m_store || !selection->session()
            || selection->session()->session.id != id) {
            review->openSession(id); // the first time: the workspace's own loaders for this session
            if (done->view)
                selection->updateSession(done->view);
        } else {
            auto loader = [document, id, details = done->details](int index) {
                const auto at = details.find(index);
                return at != details.end() ? at->second : document->iteration(id, index);
            };
            if (done->view) { // the store's rows and figures: the loop's announced ones are in them now
                // The same session, whole: the selection and its panels stay (setSession redrew them all).
                m_iterations.clear();
                selection->updateSession(done->view);
                selection->setLoader(std::move(loader));
            } else {
                // The rows and figures are shown already (add()); the followed iteration's detail, read
                // off the GUI thread, is what the selection below needs.
                if (const auto view = merged(*selection->session());
                    view->rows.size() != selection->session()->rows.size()
                    || view->figures.size() != selection->session()->figures.size())
                    selection->extendSession(view);
                selection->setLoader(std::move(loader));
            }
        }
        // The browser's iteration count of the running session, listed off the GUI thread with the rest.
        if (document && document->path() == m_store)
            review->showSessionList(done->sessions);
        else
            review->refreshSessionList();
        if (shown > 0)
            selection->select(shown);
        if (m_live->running() && selection->session()) // openSession's "N iteration(s)" of the start would stay
            //: status bar while a session runs; %1 its id, %n the iterations committed so far (in the
            //: context of the Session menu, where it was first written)
            emit review->statusMessage(
                QCoreApplication::translate("kl::gui::SessionController", "Session %1 running: %n iteration(s) so far",
                    nullptr, int(selection->session()->rows.size()))
                    .arg(id),
                false);
    }
    if (m_wholeAgain)
        read(true);
    else if (m_readAgain)
        read(false);
}

} // namespace kl::gui
