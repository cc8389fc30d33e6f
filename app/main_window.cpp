#include "app/main_window.h"

#include "app/analysis_scheduler.h"
#include "app/help_dialogs.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "app/store_document.h"
#include "widgets/diagnostics_model.h"
#include "widgets/find_bar.h"
#include "widgets/kernel_editor.h"
#include "widgets/occupancy_panel.h"
#include "widgets/static_report_model.h"
#include "widgets/static_report_view.h"
#include "widgets/string_conversion.h"
#include "widgets/tunables_panel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace kl::gui {

namespace {

// What the editor holds for a problem with no kernel yet (a PyTorch reference only): where the first
// kernel comes from, as comments in the problem's language, so that typing one in starts right there.
std::string noKernelYet(const Problem& problem)
{
    const std::string c = problem.language() == CandidateLanguage::Triton ? "# " : "// ";
    return c + problem.name + " has no kernel yet. PyTorch eager (" + problem.referencePath.filename().string() + ")\n"
        + c + "is the baseline, timed beside every candidate.\n" + c + "Session > New Session... starts from\n" + c
        + "  a model's first kernel (Proposer: llm or llm+tuner), or\n" + c
        + "  torch.compile's kernel (Start: inductor);\n" + c + "or write one here in the " + c
        + "@kl format (docs/formats.md).\n";
}

// Room a window manager's title bar and frame take above and around the window (a guess until shown).
constexpr int kTitleBarAllowance = 40;

// Edits are analysed once the engineer pauses typing, not on every key.
constexpr int kEditDebounceMillis = 500;

QWidget* titled(const QString& title, QWidget* content, QWidget* parent)
{
    auto* box = new QWidget(parent);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* label = new QLabel(title, box);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setContentsMargins(4, 4, 4, 0);
    layout->addWidget(label);
    layout->addWidget(content, 1);
    return box;
}

QPlainTextEdit* monospaceView(QWidget* parent)
{
    auto* view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return view;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_scheduler(new AnalysisScheduler(this))
    , m_review(new ReviewWorkspace(this))
    , m_workspaces(new QTabWidget(this))
    , m_editor(new KernelEditor(this))
    , m_findBar(new FindBar(m_editor, this))
    , m_problemHeader(new QLabel(this))
    , m_reportModel(new StaticReportModel(this))
    , m_reportView(new StaticReportView(this))
    , m_tunables(new TunablesPanel(this))
    , m_occupancy(new OccupancyPanel(this))
    , m_diagnosticsModel(new DiagnosticsModel(this))
    , m_diagnosticsView(new QTableView(this))
    , m_compilerLog(monospaceView(this))
    , m_ptx(monospaceView(this))
    , m_dockTabs(new QTabWidget(this))
    , m_mainSplitter(new QSplitter(Qt::Horizontal, this))
    , m_rightSplitter(new QSplitter(Qt::Vertical, this))
    , m_status(new QLabel(this))
    , m_busy(new QLabel(this))
    , m_timing(new QLabel(this))
    , m_editDebounce(new QTimer(this))
{
    setDocumentTitle(tr("No problem open"));
    setObjectName(QStringLiteral("MainWindow"));

    // Left: the problem line and the editor. Right: tunables, the report, the occupancy chart.
    auto* editorPane = new QWidget(this);
    auto* editorLayout = new QVBoxLayout(editorPane);
    editorLayout->setContentsMargins(0, 0, 0, 0);
    editorLayout->setSpacing(0);
    m_problemHeader->setContentsMargins(6, 4, 6, 4);
    m_problemHeader->setTextFormat(Qt::RichText);
    m_problemHeader->setWordWrap(true);
    editorLayout->addWidget(m_problemHeader);
    editorLayout->addWidget(m_editor, 1);
    editorLayout->addWidget(m_findBar);

    m_reportView->setReportModel(m_reportModel);
    // Many tunables scroll: the pane's height is never the window's (a 1366x768 laptop).
    auto* tunablesScroll = new QScrollArea(this);
    tunablesScroll->setWidget(m_tunables);
    tunablesScroll->setWidgetResizable(true);
    tunablesScroll->setFrameShape(QFrame::NoFrame);
    tunablesScroll->setMinimumHeight(fontMetrics().lineSpacing() * 3);
    m_tunablesPane = titled(tr("Tunables"), tunablesScroll, this);
    m_rightSplitter->addWidget(m_tunablesPane);
    m_rightSplitter->addWidget(titled(tr("Static report"), m_reportView, this));
    m_rightSplitter->addWidget(titled(tr("Occupancy"), m_occupancy, this));
    m_rightSplitter->setStretchFactor(0, 0);
    m_rightSplitter->setStretchFactor(1, 1);
    m_rightSplitter->setStretchFactor(2, 1);
    m_rightSplitter->setSizes({ 150, 260, 300 });

    m_mainSplitter->addWidget(editorPane);
    m_mainSplitter->addWidget(m_rightSplitter);
    m_mainSplitter->setStretchFactor(0, 5);
    m_mainSplitter->setStretchFactor(1, 4);
    m_mainSplitter->setSizes({ 820, 640 });
    m_workspaces->setDocumentMode(true);
    //: workspace tab: a stored session inspected
    m_workspaces->addTab(m_review, tr("Review"));
    //: workspace tab: the candidate editor and its static analysis
    m_workspaces->addTab(m_mainSplitter, tr("Editor"));
    m_workspaces->setCurrentWidget(m_mainSplitter);
    setCentralWidget(m_workspaces);
    setAcceptDrops(true);

    buildDocks();
    buildMenus();
    buildEditMenu();
    buildReviewMenu();
    m_session = new SessionController(this);

    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long message is cut at the window's edge, never widens the window past the screen.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_status->setMinimumWidth(1);
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_busy);
    statusBar()->addPermanentWidget(m_timing);
    setStatus(tr("Open a problem, a store or a recorded session (File ▸ Open, or drop it here) to start."), false);
    updateProblemHeader();

    m_editDebounce->setSingleShot(true);
    m_editDebounce->setInterval(kEditDebounceMillis);
    connect(m_editDebounce, &QTimer::timeout, this, &MainWindow::analyseNow);
    connect(m_editor, &KernelEditor::sourceEdited, m_editDebounce, qOverload<>(&QTimer::start));
    connect(m_editor, &KernelEditor::modificationChanged, this, &QWidget::setWindowModified);
    connect(m_tunables, &TunablesPanel::valuesChanged, this, &MainWindow::analyseNow);
    connect(m_scheduler, &AnalysisScheduler::started, this, [this] {
        //: status bar, while NVRTC compiles in the background
        m_busy->setText(tr("Compiling…"));
    });
    connect(m_scheduler, &AnalysisScheduler::finished, this, &MainWindow::showOutcome);

    QSettings settings;
    // First contact: big enough that every column of the review and the report is readable.
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
        const QSize room = screen() ? screen()->availableGeometry().size() : QSize(1600, 1000);
        // The frame is the window manager's and unknown before the first show: room is left for a
        // title bar, so that on a 1366x768 laptop the status bar is on the screen too.
        resize(std::min(1600, room.width()), std::min(1000, room.height() - kTitleBarAllowance));
    }
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildDocks()
{
    m_diagnosticsView->setModel(m_diagnosticsModel);
    m_diagnosticsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_diagnosticsView->setAlternatingRowColors(true);
    m_diagnosticsView->setWordWrap(false);
    m_diagnosticsView->verticalHeader()->hide();
    m_diagnosticsView->horizontalHeader()->setStretchLastSection(true);
    m_diagnosticsView->horizontalHeader()->setSectionResizeMode(
        DiagnosticsModel::SeverityColumn, QHeaderView::ResizeToContents);
    m_diagnosticsView->setColumnWidth(DiagnosticsModel::CategoryColumn, 200);
    m_diagnosticsView->setColumnWidth(DiagnosticsModel::LocationColumn, 200);
    connect(m_diagnosticsView, &QTableView::activated, this, &MainWindow::jumpToDiagnostic);

    m_dockTabs->setDocumentMode(true);
    m_dockTabs->addTab(m_diagnosticsView, tr("Diagnostics"));
    //: tab with NVRTC's whole program log
    m_dockTabs->addTab(m_compilerLog, tr("Compiler log"));
    //: tab with the generated PTX assembly
    m_dockTabs->addTab(m_ptx, tr("PTX"));

    auto* dock = new QDockWidget(tr("Compiler"), this);
    dock->setObjectName(QStringLiteral("CompilerDock"));
    dock->setWidget(m_dockTabs);
    dock->setFeatures(
        QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    resizeDocks({ dock }, { 130 }, Qt::Vertical);
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    //: menu action: opens a problem file, a store or a .klsession
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openWithDialog);
    open->setShortcut(QKeySequence::Open);
    addSaveActions(file);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    QAction* reload = file->addAction(tr("Re&load Problem"), this, [this] {
        if (m_problem)
            openProblem(QString::fromStdString(m_problem->file.string()));
    });
    // F5, not Ctrl+Shift+R: that is Reject in review mode (issue 28: both at once did nothing).
    reload->setShortcut(QKeySequence(Qt::Key_F5));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* analysis = menuBar()->addMenu(tr("&Analysis"));
    //: menu action: compile the editor's text again and refresh the static report
    QAction* analyseAction = analysis->addAction(tr("&Analyse Now"), this, &MainWindow::analyseNow);
    analyseAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    //: menu action: put the problem's baseline source back into the editor
    analysis->addAction(tr("Restore &Baseline"), this, [this] {
        if (!m_problem)
            return;
        m_editor->setSource(
            toQString(m_problem->hasBaselineKernel() ? m_problem->baseline.source : noKernelYet(*m_problem)));
        // The baseline is its source and its tunable values together.
        m_tunables->setTunables(m_problem->baseline.tunables, m_problem->baseline.defaults());
        analyseNow();
    });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    addHelpActions(this, help);
    help->addAction(tr("&About KernelLoop"), this, [this] {
        QMessageBox::about(this, tr("About KernelLoop"),
            tr("<p><b>KernelLoop %1</b></p><p>A workbench for closed-loop CUDA kernel "
               "optimisation: propose, compile, verify, benchmark, profile, repeat.</p>")
                .arg(QApplication::applicationVersion()));
    });
}

bool MainWindow::openProblem(const QString& path)
{
    // Asked first: a saved edit is then part of the problem that is read.
    const bool reloading = m_problem && QFileInfo(toQString(m_problem->file.string())) == QFileInfo(path);
    //: what discards the editor's edits; %1 the problem file
    if (!settleUnsavedEdits(reloading ? tr("Reloading the problem") : tr("Opening %1").arg(QFileInfo(path).fileName())))
        return false;
    std::shared_ptr<const Problem> problem;
    try {
        problem = std::make_shared<const Problem>(loadProblem(std::filesystem::path(toStdString(path))));
    } catch (const Error& error) {
        showInputError(error, tr("The problem file is malformed"));
        return false;
    } catch (const std::exception& error) {
        showInputError(Error("internal", toStdString(path), {}, error.what()), tr("The problem could not be opened"));
        return false;
    }
    m_problem = std::move(problem);
    m_candidatePath = toQString(m_problem->baselinePath.string());
    m_baselineOverwriteAllowed = false; // asked again for this problem's baseline
    m_lastOutcome.reset();
    m_recent.add(path);
    m_editDebounce->stop();
    m_editor->setSource(
        toQString(m_problem->hasBaselineKernel() ? m_problem->baseline.source : noKernelYet(*m_problem)));
    m_tunables->setTunables(m_problem->baseline.tunables, m_problem->baseline.defaults());
    showWorkspace(Workspace::Editor);
    m_fitRightPane = true; // once the first report is in and the window has its size
    m_reportModel->clear();
    m_occupancy->clear();
    m_diagnosticsModel->clear();
    m_compilerLog->clear();
    m_ptx->clear();
    setWindowFilePath(path);
    setDocumentTitle(toQString(m_problem->name));
    updateProblemHeader();
    //: status bar; %1 the problem's name
    setStatus(tr("Opened %1; analysing the baseline…").arg(toQString(m_problem->name)), false);
    analyseNow();
    return true;
}

void MainWindow::analyseNow()
{
    if (!m_problem)
        return;
    m_editDebounce->stop();
    AnalysisRequest request;
    request.problem = m_problem;
    request.source = toStdString(m_editor->source());
    request.fileName = m_problem->candidateFileName();
    request.tunables = m_tunables->values();
    m_scheduler->request(std::move(request));
}

bool MainWindow::isAnalysing() const { return m_scheduler->isBusy() || m_editDebounce->isActive(); }

QString MainWindow::statusText() const { return m_status->text(); }

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!settleUnsavedEdits(tr("Quitting"))) {
        event->ignore();
        return;
    }
    m_session->stop(); // a waiting review is answered and the runner killed: the loop thread never hangs
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

void MainWindow::openWithDialog()
{
    const QString start = m_problem ? toQString(m_problem->dir.string()) : QString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open"), start,
        //: file dialog filter
        tr("KernelLoop files (*.json *.klsession *.db);;Problem files (*.json);;Stores and recorded sessions "
           "(*.klsession *.db);;All files (*)"));
    if (!path.isEmpty())
        openPath(path);
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList paths = m_recent.paths();
    for (const QString& path : paths) {
        QAction* action = m_recentMenu->addAction(path, this, [this, path] {
            if (!QFileInfo::exists(path))
                m_recent.remove(path);
            openPath(path);
        });
        action->setToolTip(path);
    }
    if (paths.isEmpty()) {
        m_recentMenu->addAction(tr("No recent problems"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear List"), this, [this] { m_recent.clear(); });
}

void MainWindow::showOutcome(const std::shared_ptr<const AnalysisOutcome>& outcome)
{
    m_lastOutcome = outcome;
    m_busy->clear();
    //: status bar: wall time of the last analysis (parse, compile, occupancy)
    m_timing->setText(tr("analysed in %1 ms").arg(outcome->wallMillis, 0, 'f', 0));

    if (outcome->candidate && !m_tunables->shows(outcome->candidate->tunables)) {
        m_tunables->setTunables(outcome->candidate->tunables, outcome->tunables);
        m_fitRightPane = true;
    }
    if (m_fitRightPane) {
        fitRightPane();
        m_fitRightPane = false;
    }

    if (outcome->error) {
        m_reportModel->clear();
        //: occupancy chart title when the analysis stopped at an input error
        m_occupancy->clear(tr("No occupancy: the candidate could not be analysed"));
        m_compilerLog->clear();
        m_ptx->clear();
        const std::string& category = outcome->error->category();
        QString what = tr("The analysis failed");
        if (category.starts_with("candidate."))
            what = tr("The candidate's declarations are invalid");
        else if (category.starts_with("plan."))
            what = tr("The launch rule cannot be resolved");
        else if (category.starts_with("expression."))
            what = tr("An expression in the candidate is invalid");
        showInputError(*outcome->error, what);
        emit analysisShown();
        return;
    }

    const StaticReport& report = *outcome->report;
    const CompileResult& compile = report.compile;
    m_compilerLog->setPlainText(toQString(compile.log));
    m_ptx->setPlainText(toQString(compile.ptx));
    m_editor->setDiagnostics(compile.diagnostics);
    std::vector<DiagnosticEntry> entries;
    for (const CompilerDiagnostic& diagnostic : compile.diagnostics)
        entries.push_back(DiagnosticEntry::fromCompiler(diagnostic));
    m_diagnosticsModel->setEntries(std::move(entries));

    if (!compile.ok) {
        m_reportModel->clear();
        //: occupancy chart title after a compile error
        m_occupancy->clear(tr("No occupancy: the candidate did not compile"));
        m_dockTabs->setCurrentIndex(0);
        // The summary already names the error kind, the file and the line.
        //: status bar; %1 the compiler's one-line summary, e.g. "syntax error at baseline.cu:12:5: expected a ';'"
        setStatus(tr("Compile error: %1").arg(toQString(compile.summary)), true);
        emit analysisShown();
        return;
    }

    m_reportModel->setReport(outcome->report);
    m_occupancy->setKernels(report.device, m_reportModel->kernelShapes());
    //: status bar after a successful compile; %n kernel count, %1 NVRTC milliseconds, %2 the report's summary
    setStatus(tr("Compiled %n kernel(s) in %1 ms. %2", nullptr, static_cast<int>(compile.kernels.size()))
                  .arg(compile.compileMillis, 0, 'f', 0)
                  .arg(m_reportModel->summary()),
        false);
    emit analysisShown();
}

void MainWindow::showInputError(const Error& error, const QString& what)
{
    DiagnosticEntry entry = DiagnosticEntry::fromError(error);
    m_diagnosticsModel->setEntries({ entry });
    m_editor->clearDiagnostics();
    if (entry.line > 0) {
        CompilerDiagnostic diagnostic;
        diagnostic.line = entry.line;
        diagnostic.severity = "error";
        diagnostic.message = error.message();
        m_editor->setDiagnostics({ diagnostic });
    }
    m_dockTabs->setCurrentIndex(0);
    QString location = QFileInfo(entry.file).fileName();
    if (!entry.where.isEmpty())
        location += location.isEmpty() ? entry.where : QStringLiteral(" (") + entry.where + QLatin1Char(')');
    //: status bar for a categorised error; %1 what failed, %2 the stable category, %3 file and field or line, %4 the
    //: message
    setStatus(tr("%1 [%2] %3: %4").arg(what, entry.category, location, entry.message), true);
}

void MainWindow::setStatus(const QString& text, bool isError)
{
    m_status->setText(text);
    m_status->setStyleSheet(isError ? QStringLiteral("color: #b01c1c; font-weight: bold;") : QString());
}

void MainWindow::updateProblemHeader()
{
    if (!m_problem) {
        m_problemHeader->setText(tr("<i>No problem open.</i>"));
        return;
    }
    QStringList sizes;
    for (const SizeSet& size : m_problem->mainSizes)
        sizes.append(toQString(size.label));
    //: line above the editor; %1 problem name, %2 target architecture, %3 candidate file, %4 main sizes
    m_problemHeader->setText(tr("<b>%1</b> · %2 · <tt>%3</tt> · main sizes: %4")
                                 .arg(toQString(m_problem->name).toHtmlEscaped(), toQString(m_problem->arch),
                                     QFileInfo(toQString(m_problem->candidateFileName())).fileName().toHtmlEscaped(),
                                     sizes.join(QStringLiteral(", ")).toHtmlEscaped()));
    m_problemHeader->setToolTip(toQString(m_problem->description));
}

void MainWindow::fitRightPane()
{
    // Tunables as tall as their contents, the chart at least readable (axis labels not elided), the
    // report as tall as its rows where that leaves room, else it scrolls (a 1366x768 laptop).
    const int total = m_rightSplitter->height() > 0 ? m_rightSplitter->height() : 700;
    auto* scroll = m_tunablesPane->findChild<QScrollArea*>();
    const int tunables
        = m_tunables->sizeHint().height() + m_tunablesPane->sizeHint().height() - scroll->sizeHint().height() + 4;
    constexpr int kReadableChart = 230;
    const int report = std::clamp(total - tunables - kReadableChart, m_reportView->minimumHeight() + 24,
        std::max(m_reportView->minimumHeight() + 24, m_reportView->naturalHeight() + 24));
    m_rightSplitter->setSizes({ tunables, report, std::max(0, total - tunables - report) });
}

void MainWindow::jumpToDiagnostic(const QModelIndex& index)
{
    const int line = index.data(DiagnosticsModel::LineRole).toInt();
    if (line > 0)
        m_editor->goToLine(line);
}

} // namespace kl::gui
