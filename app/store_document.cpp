#include "app/store_document.h"

#include "core/loop/store_records.h"
#include "core/model/error.h"
#include "core/report/best_iteration.h"
#include "core/report/same_problem.h"
#include "widgets/string_conversion.h"

#include <QFile>

namespace kl::gui {

namespace {

store::Store::Options viewing()
{
    store::Store::Options options;
    options.readOnly = true;
    return options;
}

} // namespace

bool isStoreFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    return file.read(16) == QByteArray("SQLite format 3\0", 16);
}

StoreDocument::StoreDocument(QString path, store::Store store)
    : m_path(std::move(path))
    , m_store(std::move(store))
{
}

std::shared_ptr<StoreDocument> StoreDocument::open(const QString& path)
{
    const std::filesystem::path file(toStdString(path));
    if (!std::filesystem::exists(file))
        throw Error("store.open-failed", file.string(), {}, "no such file");
    return std::shared_ptr<StoreDocument>(new StoreDocument(path, store::Store::open(file, viewing())));
}

// Each row's "best" is the session's best iteration's, as Select Best picks it (best_iteration.h).
std::vector<store::SessionRow> StoreDocument::sessions() const { return report::listSessions(m_store); }

std::shared_ptr<SessionView> StoreDocument::session(std::int64_t sessionId) const
{
    auto record = m_store.session(sessionId);
    if (!record)
        return nullptr;
    auto view = std::make_shared<SessionView>();
    view->session = std::move(*record);
    view->rows = m_store.listIterations(sessionId);
    if (const auto problem = m_store.problem(view->session.problemHash))
        view->problemJson = problem->json;
    view->sameProblem = report::sameProblemSessions(m_store.listSessions(), view->session);
    view->indexCandidates();
    for (const auto& [candidateId, iteration] : view->firstIterationOf)
        if (const auto candidate = m_store.candidate(candidateId))
            view->parentOf[candidateId] = candidate->parentId;
    view->summary = loopSummary(view->session.summary);
    view->decisionReasons = m_store.sessionDecisionReasons(sessionId);
    return view;
}

std::shared_ptr<const store::IterationDetail> StoreDocument::iteration(std::int64_t sessionId, int index) const
{
    auto detail = m_store.iteration(sessionId, index);
    return detail ? std::make_shared<const store::IterationDetail>(std::move(*detail)) : nullptr;
}

std::vector<figures::IterationFigures> StoreDocument::readFigures(const QString& path, std::int64_t sessionId)
{
    const store::Store own = store::Store::open(std::filesystem::path(toStdString(path)), viewing());
    return figures::readFigures(own, sessionId);
}

void StoreDocument::exportSession(std::int64_t sessionId, const QString& file) const
{
    m_store.exportSession(sessionId, std::filesystem::path(toStdString(file)));
}

} // namespace kl::gui
