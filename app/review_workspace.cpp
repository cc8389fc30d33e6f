#include "app/review_workspace.h"

#include "core/export/history_export.h"
#include "core/model/error.h"
#include "core/report/kernel_export.h"
#include "core/report/listings_compiled_here.h"
#include "widgets/charts_panel.h"
#include "widgets/code_diff_panel.h"
#include "widgets/diff_panel.h"
#include "widgets/fitting_tab_widget.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/line_profile_panel.h"
#include "widgets/metrics_model.h"
#include "widgets/metrics_view.h"
#include "widgets/report_view.h"
#include "widgets/roofline_chart.h"
#include "widgets/session_browser.h"
#include "widgets/session_list_model.h"
#include "widgets/source_panel.h"
#include "widgets/string_conversion.h"
#include "widgets/transcript_panel.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kl::gui {

namespace {

QString errorText(const Error& error)
{
    return QStringLiteral("[") + toQString(error.category()) + QStringLiteral("] ") + toQString(error.message());
}

QString writeFile(const QString& file, const QByteArray& bytes)
{
    QFile out(file);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(bytes) != bytes.size())
        return QCoreApplication::translate("kl::gui::ReviewWorkspace", "Cannot write %1: %2")
            .arg(file, out.errorString());
    return {};
}

} // namespace

ReviewWorkspace::ReviewWorkspace(QWidget* parent)
    : QWidget(parent)
    , m_selection(new IterationSelection(this))
    , m_browser(new SessionBrowser(this))
    , m_history(new HistoryPanel(m_selection, this))
    , m_inspector(new FittingTabWidget(this))
    , m_source(new SourcePanel(m_selection, this))
    , m_diff(new DiffPanel(m_selection, this))
    , m_codeDiff(new CodeDiffPanel(m_selection, this))
    , m_verification(new ReportView(
          m_selection, verificationPage, tr("Select an iteration to read its verification report."), this))
    , m_metrics(new MetricsModel(this))
    , m_metricsView(new MetricsView(m_metrics, this))
    , m_findings(new ReportView(m_selection, findingsPage, tr("Select an iteration to read its findings."), this))
    , m_evidence(new ReportView(
          m_selection, evidencePage, tr("Select an iteration to see how its numbers were measured."), this))
    , m_transcript(new TranscriptPanel(m_selection, this))
    , m_charts(new ChartsPanel(m_selection, this))
    , m_figures(new QFutureWatcher<std::vector<figures::IterationFigures>>(this))
{
    follow(m_selection, m_metrics, m_metrics, Deferral::WhileHidden,
        m_metricsView); // the model fills while its tab is seen

    m_inspector->setDocumentMode(true);
    m_inspector->addTab(m_source, tr("Source"));
    m_inspector->addTab(m_diff, tr("Diff"));
    m_inspector->addTab(m_verification, tr("Verification"));
    m_inspector->addTab(m_metricsView, tr("Metrics"));
    m_inspector->addTab(m_findings, tr("Findings"));
    m_inspector->addTab(m_evidence, tr("Evidence"));
    //: inspector tab: the LLM's prompt and reply
    m_inspector->addTab(m_transcript, tr("LLM"));
    //: inspector tab: PC samples per source line with the SASS/PTX of the line
    auto* lines = new LineProfilePanel(m_selection, this);
    // An iteration whose session kept no listing: its stored source compiled here (NVRTC needs no GPU).
    lines->setListingCompiler(&report::compileListingsHere);
    m_codeDiff->setListingCompiler(&report::compileListingsHere);
    m_inspector->addTab(lines, tr("Lines"));
    m_inspector->setTabToolTip(m_inspector->indexOf(lines),
        tr("The source beside its SASS (or PTX), linked line by line, with the PC samples per line where sampled"));
    //: inspector tab: two iterations' SASS/PTX side by side with the instruction mix of both
    m_inspector->addTab(m_codeDiff, tr("Code Diff"));
    m_inspector->addTab(new RooflineChart(m_selection, this), tr("Roofline"));

    auto* left = new QSplitter(Qt::Vertical, this);
    left->addWidget(m_browser);
    left->addWidget(m_history);
    left->setStretchFactor(0, 1);
    left->setStretchFactor(1, 3);
    // The inspector's tallest tab (Lines: source, listing and hot lines) set the whole window's height;
    // on a laptop with the review dock open a tab scrolls or clips instead.
    m_inspector->setMinimumHeight(150);
    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(m_inspector);
    right->addWidget(m_charts);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    auto* main = m_columns = new QSplitter(Qt::Horizontal, this);
    main->addWidget(left);
    main->addWidget(right);
    // The history holds % of copy and % of speed of light beside latency and speedup: half the width.
    main->setStretchFactor(0, 1);
    main->setStretchFactor(1, 1);
    main->setSizes({ 790, 790 });
    left->setSizes({ 200, 600 });
    right->setSizes({ 480, 360 });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(main);

    m_browser->setDeleteAllowed(false, tr("Open a store to delete its sessions"));
    connect(m_browser, &SessionBrowser::openRequested, this, &ReviewWorkspace::openSession);
    connect(m_browser, &SessionBrowser::exportRequested, this, &ReviewWorkspace::askToExport);
    connect(m_browser, &SessionBrowser::deleteRequested, this, &ReviewWorkspace::askToDelete);
    connect(m_source, &SourcePanel::openAsCandidate, this, &ReviewWorkspace::openAsCandidate);
    connect(m_figures, &QFutureWatcherBase::finished, this, &ReviewWorkspace::figuresRead);
}

ReviewWorkspace::~ReviewWorkspace() { m_figures->waitForFinished(); }

ReportView* ReviewWorkspace::verificationView() const { return showPending(m_verification); }
ReportView* ReviewWorkspace::findingsView() const { return showPending(m_findings); }
ReportView* ReviewWorkspace::evidenceView() const { return showPending(m_evidence); }
MetricsModel* ReviewWorkspace::metricsModel() const { return showPending(m_metrics); }
TranscriptPanel* ReviewWorkspace::transcript() const { return showPending(m_transcript); }

bool ReviewWorkspace::hasSession() const { return m_selection->session() != nullptr; }

void ReviewWorkspace::openStore(const QString& path)
{
    auto document = StoreDocument::open(path);
    auto sessions = document->sessions();
    m_figures->waitForFinished(); // the previous store's read
    m_document = std::move(document);
    const std::int64_t newest = sessions.empty() ? 0 : sessions.front().session.id;
    m_browser->setSessions(std::move(sessions));
    const QFileInfo file(path);
    const bool writable = file.isWritable() && QFileInfo(file.absolutePath()).isWritable();
    //: tooltip of the disabled Delete button
    m_browser->setDeleteAllowed(writable, tr("%1 is read-only here: its sessions cannot be deleted").arg(path));
    if (newest)
        openSession(newest);
    else
        m_selection->setSession(nullptr, {});
}

void ReviewWorkspace::refreshSessionList()
{
    if (!m_document)
        return;
    try {
        showSessionList(m_document->sessions());
    } catch (const Error& error) {
        emit statusMessage(tr("The sessions cannot be listed %1").arg(errorText(error)), true);
    }
}

void ReviewWorkspace::showSessionList(const std::vector<store::SessionRow>& sessions)
{
    m_browser->setSessions(sessions);
    if (hasSession())
        m_browser->setCurrentSession(m_selection->session()->session.id);
}

void ReviewWorkspace::openSession(std::int64_t sessionId)
{
    if (!m_document)
        return;
    std::shared_ptr<const SessionView> view;
    try {
        view = m_document->session(sessionId);
    } catch (const Error& error) {
        emit statusMessage(tr("The session cannot be read %1").arg(errorText(error)), true);
        return;
    }
    if (!view)
        return;
    const std::shared_ptr<StoreDocument> document = m_document;
    // The diff can compare with an iteration of another session of the same problem in this store.
    m_diff->setIterationLoader([document](std::int64_t other, int index) { return document->iteration(other, index); });
    m_selection->setSession(view, [document, sessionId](int index) { return document->iteration(sessionId, index); });
    m_browser->setCurrentSession(sessionId);
    // The loop's best first: what a reviewer looks at before anything else.
    std::optional<int> best;
    try {
        best = report::bestIteration(m_document->store(), sessionId);
    } catch (const Error&) {
    }
    m_selection->select(best.value_or(view->rows.empty() ? 0 : view->rows.front().index));
    m_figuresFor = sessionId;
    m_figures->setFuture(QtConcurrent::run(&StoreDocument::readFigures, m_document->path(), sessionId));
    //: status bar; %1 the problem, %2 the device, %n iterations
    emit statusMessage(tr("Session %1: %2 on %3, %n iteration(s)", nullptr, static_cast<int>(view->rows.size()))
                           .arg(sessionId)
                           .arg(toQString(view->session.problemName), toQString(view->session.device)),
        false);
    emit sessionShown();
}

void ReviewWorkspace::figuresRead()
{
    const auto session = m_selection->session();
    if (!session || session->session.id != m_figuresFor)
        return; // a newer session is shown; its own read is under way
    auto view = std::make_shared<SessionView>(*session);
    try {
        view->figures = m_figures->result();
    } catch (const Error& error) {
        emit statusMessage(tr("The iterations' figures cannot be read %1").arg(errorText(error)), true);
    }
    view->sizes = figures::timedSizes(view->figures);
    m_selection->updateSession(view);
    // A narrow window (1366 px): the history gets the width its columns need, up to 56 % of the
    // workspace, rather than scrolling sideways.
    if (const auto sizes = m_columns->sizes(); sizes.size() == 2 && sizes[0] < m_history->neededWidth()) {
        const int total = sizes[0] + sizes[1];
        const int left = std::min(m_history->neededWidth(), total * 56 / 100);
        if (left > sizes[0])
            m_columns->setSizes({ left, total - left });
    }
    emit figuresShown();
}

void ReviewWorkspace::compareCode(int other)
{
    m_selection->compareWith(other);
    m_inspector->setCurrentWidget(m_codeDiff);
}

QString ReviewWorkspace::exportSession(std::int64_t sessionId, const QString& file) const
{
    if (!m_document)
        return tr("No store is open");
    try {
        m_document->exportSession(sessionId, file);
    } catch (const Error& error) {
        return errorText(error);
    }
    return {};
}

QString ReviewWorkspace::exportKernel(const QString& file) const
{
    const auto session = m_selection->session();
    if (!m_document || !session || m_selection->current() == 0)
        return tr("Select an iteration first");
    try {
        const report::ExportedKernel kernel
            = report::exportKernel(m_document->store(), session->session.id, m_selection->current());
        return writeFile(file, QByteArray::fromStdString(kernel.text));
    } catch (const Error& error) {
        return errorText(error);
    }
}

QString ReviewWorkspace::exportKernelName() const
{
    const auto session = m_selection->session();
    const auto focus = m_selection->focus();
    const bool triton = focus && focus->detail && focus->detail->candidate
        && candidateLanguageOf(focus->detail->candidate->fileName) == CandidateLanguage::Triton;
    return QStringLiteral("%1-session%2-iteration%3%4")
        .arg(session ? toQString(session->session.problemName) : QStringLiteral("kernel"))
        .arg(session ? session->session.id : 0)
        .arg(m_selection->current())
        .arg(triton ? QStringLiteral(".py") : QStringLiteral(".cu"));
}

QString ReviewWorkspace::pinBaselineFrom(const QString& path, qint64 sessionId, int index)
{
    try {
        const auto other = StoreDocument::open(path);
        const auto sessions = other->sessions();
        if (sessions.empty())
            return tr("%1 holds no session").arg(path);
        const std::int64_t id = sessionId > 0 ? sessionId : sessions.front().session.id;
        auto detail = other->iteration(id, index);
        if (!detail)
            return tr("Session %1 of %2 has no iteration %3").arg(id).arg(path).arg(index);
        m_selection->pinBaseline(
            std::move(detail), toStdString(QFileInfo(path).completeBaseName()) + " #" + std::to_string(index));
        return {};
    } catch (const Error& error) {
        return errorText(error);
    }
}

QString ReviewWorkspace::exportHistory(const QString& file, bool json) const
{
    const auto session = m_selection->session();
    if (!session)
        return tr("Open a session first");
    // The runner and PyTorch columns come from the figures: read them here if the background read has not.
    std::vector<figures::IterationFigures> read;
    if (session->figures.empty() && !session->rows.empty() && m_document) {
        try {
            read = figures::readFigures(m_document->store(), session->session.id);
        } catch (const Error&) {
        }
    }
    const auto& shown = session->figures.empty() ? read : session->figures;
    const std::string text = json ? history::historyJson(session->session, session->rows, shown)
                                  : history::historyCsv(session->rows, shown);
    return writeFile(file, QByteArray::fromStdString(text));
}

void ReviewWorkspace::askToExport(std::int64_t sessionId)
{
    const QString file = QFileDialog::getSaveFileName(this, tr("Export Session"),
        QStringLiteral("session-%1.klsession").arg(sessionId), tr("KernelLoop sessions (*.klsession)"));
    if (file.isEmpty())
        return;
    const QString error = exportSession(sessionId, file);
    emit statusMessage(
        error.isEmpty() ? tr("Exported session %1 to %2").arg(sessionId).arg(file) : error, !error.isEmpty());
}

void ReviewWorkspace::askToDelete(std::int64_t sessionId)
{
    const auto row = std::find_if(m_browser->model()->sessions().begin(), m_browser->model()->sessions().end(),
        [sessionId](const store::SessionRow& r) { return r.session.id == sessionId; });
    const QString what = row == m_browser->model()->sessions().end()
        ? tr("session %1").arg(sessionId)
        //: %1 session id, %2 problem, %n iterations
        : tr("session %1 (%2, %n iteration(s))", nullptr, row->iterations)
              .arg(sessionId)
              .arg(toQString(row->session.problemName));
    QMessageBox box(QMessageBox::Warning, tr("Delete Session"),
        //: %1 e.g. "session 3 (layernorm_gelu, 41 iterations)", %2 the store file
        tr("Delete %1 from %2?").arg(what, m_document ? m_document->path() : QString()),
        QMessageBox::Yes | QMessageBox::Cancel, this);
    box.setInformativeText(tr("Its candidates, results, findings and LLM exchanges are deleted with it. This "
                              "cannot be undone; export it first to keep a copy."));
    box.button(QMessageBox::Yes)->setText(tr("&Delete"));
    box.setDefaultButton(QMessageBox::Cancel);
    if (box.exec() != QMessageBox::Yes)
        return;
    const QString error = deleteSession(sessionId);
    emit statusMessage(error.isEmpty() ? tr("Deleted session %1").arg(sessionId) : error, !error.isEmpty());
}

QString ReviewWorkspace::deleteSession(std::int64_t sessionId)
{
    if (!m_document)
        return tr("No store is open");
    const QString path = m_document->path();
    const bool shown = hasSession() && m_selection->session()->session.id == sessionId;
    // The browsing connection stays read-only; a short-lived writer deletes. Readers of this
    // process (the figures' worker) are done first, so that a rollback-journal file is not busy.
    m_figures->waitForFinished();
    try {
        store::Store writer = store::Store::open(std::filesystem::path(toStdString(path)));
        writer.deleteSession(sessionId);
    } catch (const Error& error) {
        return tr("Session %1 was not deleted %2").arg(sessionId).arg(errorText(error));
    }
    try {
        m_document = StoreDocument::open(path);
    } catch (const Error& error) {
        m_document.reset();
        return errorText(error);
    }
    auto sessions = m_document->sessions();
    const std::int64_t newest = sessions.empty() ? 0 : sessions.front().session.id;
    m_browser->setSessions(std::move(sessions));
    if (!shown && hasSession())
        m_browser->setCurrentSession(m_selection->session()->session.id);
    else if (newest)
        openSession(newest);
    else
        m_selection->setSession(nullptr, {});
    return {};
}

} // namespace kl::gui
