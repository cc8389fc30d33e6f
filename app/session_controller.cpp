#include "app/session_controller.h"

#include "app/analysis.h"
#include "app/api_keys.h"
#include "app/live_history.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/runner_probe.h"
#include "app/session_export.h"
#include "app/session_toolbar.h"
#include "app/store_document.h"
#include "app/unconfined_python.h"
#include "core/figures/iteration_figures.h"
#include "core/model/error.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store_location.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/live_transcript_panel.h"
#include "widgets/phase_strip.h"
#include "widgets/pool_status_panel.h"
#include "widgets/review_panel.h"
#include "widgets/run_dialog.h"
#include "widgets/session_view.h"
#include "widgets/string_conversion.h"
#include "widgets/tunables_panel.h"

#include <QCoreApplication>
#include <QDockWidget>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>

#include <filesystem>

namespace kl::gui {

namespace {

QString errorText(const Error& e)
{
    return QStringLiteral("[") + toQString(e.category()) + QStringLiteral("] ") + toQString(e.message());
}

} // namespace

SessionController::SessionController(MainWindow* window)
    : QObject(window)
    , m_window(window)
    , m_live(new LiveSession(this))
    , m_reviewPanel(new ReviewPanel(window))
    , m_transcript(new LiveTranscriptPanel(window))
    , m_phases(new PhaseStrip(window))
    //: dock title: the proposal waiting for the engineer's decision
    , m_reviewDock(new QDockWidget(tr("Proposal Review"), window))
    //: dock title: the LLM's text while it is written
    , m_transcriptDock(new QDockWidget(tr("Live Transcript"), window))
    , m_poolPanel(new PoolStatusPanel(window))
    //: dock title: the runners (GPUs) of the running session, their state and jobs done
    , m_poolDock(new QDockWidget(tr("Runner Pool"), window))
    , m_poolPoll(new QTimer(this))
    , m_strip(new QToolBar(tr("Session Progress"), window))
    , m_bannerBar(new QToolBar(tr("No GPU"), window))
    , m_banner(new QLabel(window))
    , m_reviewCompile(new QFutureWatcher<std::shared_ptr<const AnalysisOutcome>>(this))
    , m_probe(new QFutureWatcher<QString>(this))
    , m_history(new LiveHistory(window, m_live, this))
{
    m_reviewDock->setObjectName(QStringLiteral("proposalReviewDock"));
    m_reviewDock->setWidget(m_reviewPanel);
    m_transcriptDock->setObjectName(QStringLiteral("liveTranscriptDock"));
    m_transcriptDock->setWidget(m_transcript);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_reviewDock);
    window->addDockWidget(Qt::RightDockWidgetArea, m_transcriptDock);
    m_poolDock->setObjectName(QStringLiteral("runnerPoolDock"));
    m_poolDock->setWidget(m_poolPanel);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_poolDock);
    window->tabifyDockWidget(m_reviewDock, m_poolDock); // one bottom area; the review's tab raised when it asks
    m_reviewDock->hide();
    m_transcriptDock->hide();
    m_poolDock->hide(); // until a session runs (or View ▸ Runner Pool)
    m_poolPoll->setInterval(500);
    connect(m_poolPoll, &QTimer::timeout, this, &SessionController::pollPool);
    m_strip->setObjectName(QStringLiteral("sessionProgress"));
    m_strip->addWidget(m_phases);
    m_strip->setMovable(false);
    window->addToolBar(Qt::TopToolBarArea, m_strip);
    m_strip->hide();
    m_bannerBar->setObjectName(QStringLiteral("noGpuBanner"));
    m_bannerBar->setMovable(false);
    m_banner->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred); // across the window
    // Wrapped: on one line the loader's long message made the window 1544 px wide on a 1366-px laptop.
    m_banner->setWordWrap(true);
    m_banner->setMinimumWidth(600); // wraps to a few lines at most
    m_banner->setStyleSheet(QStringLiteral("background: #fff4ce; color: #5c4500; padding: 4px;"));
    m_bannerBar->addWidget(m_banner);
    window->addToolBarBreak(Qt::TopToolBarArea);
    window->addToolBar(Qt::TopToolBarArea, m_bannerBar);
    m_bannerBar->hide();
    buildMenu();

    connect(m_live, &LiveSession::sessionStarted, this, &SessionController::onStarted);
    connect(m_live, &LiveSession::iterationFinished, this, &SessionController::onIteration);
    connect(m_live, &LiveSession::reviewRequested, this, &SessionController::onReview);
    connect(m_live, &LiveSession::sessionEnded, this, &SessionController::onEnded);
    connect(m_live, &LiveSession::phaseChanged, m_phases, &PhaseStrip::setPhase);
    connect(m_live, &LiveSession::holdChanged, this, &SessionController::showRunState); // the pause held, or let go
    connect(m_live, &LiveSession::tokensChanged, m_phases, &PhaseStrip::setTokens);
    connect(m_live, &LiveSession::streamingTokensEstimated, m_phases, &PhaseStrip::setStreamingTokens);
    connect(m_live, &LiveSession::textArrived, m_transcript, &LiveTranscriptPanel::appendText);
    connect(m_reviewPanel, &ReviewPanel::accepted, this, [this] {
        answer({ ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} });
    });
    connect(m_reviewPanel, &ReviewPanel::rejected, this, [this](const QString& reason) {
        answer({ ReviewDecision::Kind::Reject, toStdString(reason), {}, std::nullopt, {} });
    });
    connect(m_reviewPanel, &ReviewPanel::steered, this, [this](const QString& text) {
        answer({ ReviewDecision::Kind::Steer, {}, toStdString(text), std::nullopt, {} });
    });
    connect(m_reviewPanel, &ReviewPanel::editRequested, this,
        [this](const QString& source, const TunableValues& tunables, const QString&) {
            m_window->openCandidate(source, tunables);
            m_window->showWorkspace(MainWindow::Workspace::Editor);
            m_reviewPanel->setEditing(true);
            m_editing = true;
        });
    connect(m_reviewPanel, &ReviewPanel::runEditedRequested, this, [this] {
        try {
            auto edited = parseCandidate(toStdString(m_window->editor()->source()), "edited.cu");
            const TunableValues tunables = edited.applicable(m_window->tunablesPanel()->values());
            answer({ ReviewDecision::Kind::Replace, "edited by the engineer", {}, std::move(edited), tunables });
        } catch (const Error& e) {
            status(tr("The edited candidate cannot be used %1").arg(errorText(e)), true);
        }
    });
    // A destroyed panel must not leave the loop waiting.
    connect(m_reviewPanel, &QObject::destroyed, m_live, [live = m_live] { live->stopNow(); });
    connect(m_reviewCompile, &QFutureWatcherBase::finished, this, [this] {
        const auto outcome = m_reviewCompile->result();
        if (!m_reviewPanel->hasRequest() || !outcome)
            return;
        if (outcome->report)
            m_reviewPanel->setStaticReport(outcome->report);
        else if (outcome->error)
            m_reviewPanel->setCompileError(errorText(*outcome->error));
    });
    connect(m_probe, &QFutureWatcherBase::finished, this, [this] {
        const std::string answer = toStdString(m_probe->result());
        if (answer.rfind(kNoDevicePrefix, 0) == 0) {
            m_noDevice = toQString(answer.substr(kNoDevicePrefix.size()));
            //: banner on a machine without a GPU; %1 is the runner's own message
            m_banner->setText(
                tr("No GPU here: %1. Browsing, editing and static analysis work; a session runs on a GPU elsewhere "
                   "through Session ▸ New Session (Runner: ssh host kernelloop-runner, or Runner endpoints).")
                    .arg(m_noDevice));
            m_bannerBar->show();
        } else {
            m_noDevice.clear();
            m_bannerBar->hide();
        }
        updateActions();
        emit probed();
    });
    updateActions();
    if (QFileInfo(defaultRunnerPath()).isExecutable())
        probeRunner();
}

SessionController::~SessionController()
{
    m_reviewCompile->waitForFinished();
    m_probe->waitForFinished();
}

QString SessionController::defaultRunnerPath() { return windowRunnerPath(); }

void SessionController::probeRunner(const QString& runnerPath)
{
    m_runnerPath = runnerPath.isEmpty() ? defaultRunnerPath() : runnerPath;
    m_probe->setFuture(QtConcurrent::run(probeRunnerAt, toStdString(m_runnerPath)));
}

void SessionController::buildMenu()
{
    auto* menu = new QMenu(tr("&Session"), m_window->menuBar());
    QAction* before = nullptr; // before Help, where menus of this kind sit
    for (QAction* a : m_window->menuBar()->actions())
        if (a->text().remove(QLatin1Char('&')) == QLatin1String("Help"))
            before = a;
    m_window->menuBar()->insertMenu(before, menu);
    //: menu action: the dialog that starts a tuning session
    m_newSession = menu->addAction(tr("&New Session…"), this, &SessionController::showRunDialog);
    m_newSession->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
    //: menu action: start a session from a pasted kernelloop-cli tune line
    m_fromLine = menu->addAction(tr("From a &Command Line…"), this, [this] {
        bool ok = false;
        const QString line = QInputDialog::getText(m_window, tr("Session from a Command Line"),
            tr("kernelloop-cli tune …"), QLineEdit::Normal, QString(), &ok);
        if (!ok || line.isEmpty())
            return;
        try {
            startSession(session::parseCommandLine(toStdString(line)));
        } catch (const Error& e) {
            status(errorText(e), true);
        }
    });
    menu->addAction(unconfinedPythonAction(m_window));
    menu->addSeparator();
    //: menu action: the loop stops before its next proposal; the candidate in flight finishes
    m_pause = menu->addAction(tr("&Pause after the Current Candidate"), this, [this] {
        m_live->setPaused(true);
        showRunState();
        updateActions();
    });
    m_resume = menu->addAction(tr("&Resume"), this, [this] {
        m_live->setPaused(false);
        showRunState();
        updateActions();
    });
    //: menu action: kill the runner now; the session ends cancelled, its iterations kept
    m_stop = menu->addAction(tr("&Stop Now"), this, &SessionController::stop);
    m_stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    //: menu action: five more rounds for the running session
    m_extend = menu->addAction(tr("&Extend Budget by 5 Rounds"), this, [this] {
        m_live->extendBudget(5);
        m_phases->setBudget(m_live->budget());
    });
    menu->addSeparator();
    //: menu action: run the editor's kernel through the pipeline into the open session
    m_evaluate = menu->addAction(tr("E&valuate the Editor's Kernel"), this, &SessionController::evaluateEditorKernel);
    m_evaluate->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    //: menu action: the selected iteration becomes the base of the next proposals
    m_continue = menu->addAction(tr("&Continue from Here"), this, &SessionController::continueFromSelected);
    menu->addSeparator();
    m_export = new SessionExport(m_window, menu); // Export ▸ FlashInfer Trace, trajectories, T4
    //: Session menu section: what answers the proposal waiting in the Proposal Review dock
    menu->addSection(tr("Proposal"));
    menu->addActions(m_reviewPanel->reviewActions()); // their shortcuts, listed where they can be found
    menu->addSeparator();
    buildToolBar();
    menu->addAction(m_toolBar->toggleViewAction());
    menu->addAction(m_reviewDock->toggleViewAction());
    menu->addAction(m_transcriptDock->toggleViewAction());
    menu->addAction(m_poolDock->toggleViewAction());
    for (QAction* action : m_window->menuBar()->actions()) // the window's View menu lists every dock
        if (action->menu() && action->text() == tr("&View"))
            action->menu()->addAction(m_poolDock->toggleViewAction());
}

void SessionController::buildToolBar()
{
    m_toolBar = sessionToolBar(m_window,
        { m_newSession, m_pause, m_resume, m_stop, m_reviewPanel->reviewActions().value(0),
            m_reviewPanel->reviewActions().value(1), m_reviewPanel->reviewActions().value(2) });
}

// What the strip says while a session runs: paused (held at the engineer's pause: the clock stopped),
// pausing (asked for; the candidate in flight finishes first), waiting for a review, or running. A
// paused session read "running" with its clock going (issue 28).
void SessionController::showRunState()
{
    if (!m_live->running() || m_stopping)
        return;
    const bool held = m_live->holding();
    m_phases->setHeld(held);
    if (held)
        //: phase strip: the loop waits at the engineer's pause, before its next proposal
        m_phases->setState(tr("paused (Session ▸ Resume continues)"));
    else if (m_live->paused())
        m_phases->setState(tr("pausing after the current candidate"));
    else if (m_reviewPanel->hasRequest())
        m_phases->setState(tr("waiting for your review"));
    else
        m_phases->setState(m_reviewMode ? tr("running (review mode)") : tr("running"));
}

void SessionController::pollPool()
{
    m_poolPanel->setStatus(m_live->poolStatus());
    if (!m_live->running())
        m_poolPoll->stop(); // the last rows stay shown
}

void SessionController::updateActions()
{
    const bool running = m_live->running();
    m_newSession->setEnabled(!running);
    m_fromLine->setEnabled(!running);
    m_pause->setEnabled(running && !m_live->paused());
    m_resume->setEnabled(running && m_live->paused());
    m_stop->setEnabled(running);
    m_extend->setEnabled(running && m_live->budget() > 0);
    m_continue->setEnabled(running);
    m_evaluate->setEnabled(m_window->problem() != nullptr || running);
    //: tooltip of disabled run actions on a machine without a GPU
    m_newSession->setToolTip(m_noDevice.isEmpty() ? QString() : tr("No GPU: %1").arg(m_noDevice));
}

void SessionController::status(const QString& text, bool isError)
{
    m_window->statusBar()->showMessage(text, isError ? 0 : 8000);
    if (isError)
        m_phases->setState(text);
}

QString SessionController::startSession(const session::SessionRecipe& recipe)
{
    auto refuse = [this](const QString& why) {
        status(why, true);
        return why;
    };
    if (m_live->running())
        return refuse(tr("A session is already running: stop it first"));
    // The probe answered for the default local runner only: a session on other runners (the Runner
    // field's program or command line, ssh/Slurm/cmd endpoints) is checked by its own start.
    const bool probedRunner = recipe.runners.empty() && recipe.runnersFile.empty()
        && (recipe.runner.empty() || toQString(recipe.runner) == m_runnerPath);
    if (!m_noDevice.isEmpty() && probedRunner) // the runner's own words, as the CLI prints them
        return refuse(QStringLiteral("[runner.no-device] ")
            + tr("this needs a GPU: no GPU: %1. A GPU elsewhere: give its runner in Session ▸ New Session (Runner, "
                 "Runner endpoints).")
                  .arg(m_noDevice));
    session::SessionSetup setup;
    setup.recipe = recipe;
    std::string apiKey;
    try {
        m_problem = std::make_shared<const Problem>(loadProblem(recipe.problem)); // a bad file fails here
        if (recipe.proposer != session::ProposerChoice::Tuner)
            apiKey = ApiKeys::load(recipe.llm).key;
        setup.store = store::storeLocation(recipe.db);
        std::error_code ec;
        std::filesystem::create_directories(setup.store.parent_path(), ec);
    } catch (const Error& e) {
        return refuse(errorText(e));
    }
    setup.localRunner = recipe.runner.empty() ? toStdString(m_runnerPath.isEmpty() ? defaultRunnerPath() : m_runnerPath)
                                              : recipe.runner;
    if (!m_live->start(std::move(setup), std::move(apiKey)))
        return refuse(m_live->lastError());
    showStarting(tr("starting"));
    m_transcript->clear();
    m_phases->setBudget(recipe.budget);
    if (recipe.proposer != session::ProposerChoice::Tuner)
        m_transcriptDock->show();
    if (recipe.mode == LoopMode::Review)
        m_reviewDock->show();
    return {};
}

// What every start shows (the loop's, an evaluation's): the phase strip, the Runner Pool dock polled.
void SessionController::showStarting(const QString& state)
{
    m_stopping = false;
    m_history->reset();
    m_phases->reset();
    m_phases->setState(state);
    m_strip->show();
    m_poolPanel->setStatus({});
    m_poolDock->show();
    m_poolPoll->start();
    updateActions();
}

void SessionController::showRunDialog()
{
    RunDialog dialog(m_window);
    session::SessionRecipe recipe;
    // The last run's fields (as its command line: never a key, only where the key comes from), on the
    // problem open now.
    QSettings settings;
    if (const QString last = settings.value(QStringLiteral("session/lastCommandLine")).toString(); !last.isEmpty())
        try {
            recipe = session::parseCommandLine(toStdString(last));
        } catch (const Error&) {
            recipe = {};
        }
    if (const auto problem = m_window->problem())
        recipe.problem = problem->file.string();
    dialog.setRecipe(recipe);
    dialog.setKeychainAvailable(
        ApiKeys::keychainUsable(), tr("no keychain runs here: use a key variable or a 0600 key file"));
    if (dialog.exec() != QDialog::Accepted)
        return;
    const auto chosen = dialog.recipe();
    settings.setValue(QStringLiteral("session/lastCommandLine"), toQString(session::commandLine(chosen)));
    if (!dialog.typedApiKey().isEmpty() && dialog.saveKeyInKeychain()) {
        const QString error = ApiKeys::save(chosen.llm, dialog.typedApiKey());
        if (!error.isEmpty())
            status(tr("The key was not stored: %1").arg(error), true);
    }
    startSession(chosen);
}

void SessionController::onStarted(const SessionStarted& started)
{
    m_phases->setBudget(m_live->budget());
    m_reviewMode = started.mode == LoopMode::Review;
    showRunState();
    try {
        m_window->review()->openStore(m_live->storePath());
        m_window->review()->openSession(started.sessionId);
        m_history->follow(m_live->storePath());
        //: status bar at a session's start, before its baseline is measured; %1 its id
        emit m_window->review()->statusMessage(
            tr("Session %1 running: measuring the baseline").arg(started.sessionId), false);
    } catch (const Error& e) {
        status(errorText(e), true);
    }
    m_window->showWorkspace(MainWindow::Workspace::Review);
}

void SessionController::onIteration(const IterationOutcome& outcome)
{
    //: live transcript note: an iteration finished; %1 index, %2 its category, %3 its speedup or nothing
    m_transcript->appendNote(
        tr("iteration %1 (%2): %3%4")
            .arg(outcome.index)
            .arg(toQString(outcome.proposer), toQString(outcome.category),
                outcome.speedup ? QStringLiteral(", %1x").arg(*outcome.speedup, 0, 'f', 2) : QString()));
    m_history->add(outcome);
}

void SessionController::onReview(const ReviewRequested& request)
{
    m_reviewPanel->showRequest(request);
    const bool wasShown = m_reviewDock->isVisible();
    m_reviewDock->show();
    m_reviewDock->raise();
    if (!wasShown || m_reviewDock->height() < m_window->height() / 3) // room for the plan and the diff
        m_window->resizeDocks({ m_reviewDock }, { m_window->height() * 2 / 5 }, Qt::Vertical);
    showRunState(); // waiting for your review (or paused: the pause holds after the answer)
    if (!m_problem)
        return;
    AnalysisRequest a; // the static report offline, at once, while the engineer reads the diff
    a.problem = m_problem;
    a.source = request.proposal.candidate.source;
    a.fileName = request.proposal.candidate.fileName;
    a.tunables = request.proposal.tunables;
    m_reviewCompile->setFuture(QtConcurrent::run([a] { return analyse(a); }));
}

void SessionController::answer(ReviewDecision decision)
{
    if (!m_live->answerReview(std::move(decision)))
        return;
    m_reviewPanel->clearRequest();
    showRunState();
    if (m_editing) {
        m_editing = false;
        m_window->showWorkspace(MainWindow::Workspace::Review);
    }
}

void SessionController::onEnded(const QString& statusText, const QString& reason)
{
    m_phases->setHeld(false);
    const std::int64_t id = m_live->sessionId();
    const bool failed = statusText == QLatin1String("failed");
    const QString why = failed && !m_live->failureText().isEmpty() ? m_live->failureText() : reason;
    m_reviewPanel->clearRequest(tr("The session ended (%1)").arg(statusText));
    if (id == 0 && failed) {
        // Nothing began (no session stored, no round run): never "Session 0 failed".
        //: status bar and phase strip; %1 why, e.g. "the runner did not start: cannot execute ..."
        const QString line = tr("The session did not start: %1").arg(why);
        m_phases->setState(line);
        status(line, true);
    } else {
        //: phase strip: the session's end; %1 finished/cancelled/failed, %2 why
        m_phases->setState(why.isEmpty() ? statusText : tr("%1: %2").arg(statusText, why));
        //: status bar: %1 the session's id, %2 finished/cancelled/failed, %3 why
        status(why.isEmpty() ? tr("Session %1 %2").arg(id).arg(statusText)
                             : tr("Session %1 %2: %3").arg(id).arg(statusText, why),
            failed);
    }
    // The session list's status and iteration count are final now. Where the review shows this store
    // already, the whole read below lists them off the GUI thread with the final rows and figures;
    // reopening the store here redrew every chart twice at the session's end (40-70 ms stalls).
    const auto document = m_window->review()->document();
    if (!m_history->storePath().isEmpty() && (!document || document->path() != m_history->storePath())) {
        try {
            m_window->review()->openStore(m_history->storePath());
        } catch (const Error& e) {
            status(errorText(e), true);
        }
    }
    m_history->reconcile();
    pollPool(); // the runners' final rows
    updateActions();
}

void SessionController::stop()
{
    m_live->stopNow();
    if (!m_live->running())
        return;
    m_stopping = true;
    m_phases->setHeld(false);
    m_phases->setState(tr("stopping"));
}

void SessionController::evaluateEditorKernel()
{
    try {
        const std::string source = toStdString(m_window->editor()->source());
        // What the editor marks as not compiling (its last analysis, of this very text) is not sent.
        if (const auto outcome = m_window->lastOutcome(); outcome && outcome->candidate
            && outcome->candidate->source == source && outcome->report && !outcome->report->compile.ok) {
            //: status bar; %1 the compiler's one-line summary
            status(tr("The editor's kernel does not compile (%1): fix it before evaluating it")
                       .arg(toQString(outcome->report->compile.summary)),
                true);
            return;
        }
        auto candidate = parseCandidate(source, "editor.cu");
        const TunableValues tunables = candidate.applicable(m_window->tunablesPanel()->values());
        if (m_live->running()) {
            m_live->evaluateCandidate(candidate, tunables);
            status(tr("The editor's kernel runs next in session %1").arg(m_live->sessionId()), false);
            return;
        }
        const auto problem = m_window->problem();
        if (!problem)
            return;
        if (!m_noDevice.isEmpty()) {
            status(QStringLiteral("[runner.no-device] ") + tr("this needs a GPU: no GPU: %1").arg(m_noDevice), true);
            return;
        }
        session::SessionSetup setup;
        setup.recipe.problem = problem->file.string();
        setup.store = store::storeLocation({});
        // The open session of this problem takes it as its next iteration; else it gets a session of its own.
        const auto [openId, openStore] = openSessionFor(*problem);
        if (openId) {
            setup.appendTo = openId;
            setup.store = toStdString(openStore);
        }
        setup.localRunner = toStdString(m_runnerPath.isEmpty() ? defaultRunnerPath() : m_runnerPath);
        setup.only = std::move(candidate);
        setup.onlyTunables = tunables;
        if (m_live->start(std::move(setup)))
            showStarting(
                openId ? tr("evaluating into session %1").arg(openId) : tr("evaluating in a session of its own"));
        else
            status(m_live->lastError(), true);
    } catch (const Error& e) {
        status(errorText(e), true);
    }
}

void SessionController::continueFromSelected()
{
    const auto focus = m_window->review()->selection()->focus();
    if (!focus || !focus->detail || !focus->detail->candidate) {
        status(tr("Select an iteration first"), true);
        return;
    }
    if (!m_live->running()) {
        status(tr("Start a session first: its next proposals continue from the selected iteration"), true);
        return;
    }
    if (!focus->session || focus->session->session.id != m_live->sessionId()) {
        status(tr("Select an iteration of the running session %1").arg(m_live->sessionId()), true);
        return;
    }
    if (!m_live->continueFrom(focus->index())) {
        status(tr("The session is not proposing yet: try again in a moment"), true);
        return;
    }
    status(tr("The next round starts from iteration %1").arg(focus->index()), false);
}

std::pair<std::int64_t, QString> SessionController::openSessionFor(const Problem& problem) const
{
    const ReviewWorkspace* review = m_window->review();
    const auto document = review->document();
    const auto shown = review->selection()->session();
    if (!document || !shown || shown->session.problemHash != problem.contentHash)
        return { 0, {} };
    const QFileInfo file(document->path()); // a read-only file or a .klsession copy is not written into
    // A .klsession is someone's exported record: never written into.
    if (file.suffix() == QLatin1String("klsession") || !file.isWritable()
        || !QFileInfo(file.absolutePath()).isWritable())
        return { 0, {} };
    return { shown->session.id, file.absoluteFilePath() };
}

} // namespace kl::gui
