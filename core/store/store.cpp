#include "core/store/store.h"

#include "core/model/hash.h"
#include "core/store/result_columns.h"
#include "core/store/schema.h"
#include "core/store/session_owner.h"
#include "core/store/store_impl.h"
#include "core/store/summary_columns.h"

#include <unistd.h>

namespace kl::store {

std::string jsonText(const nlohmann::json& value)
{
    // Strings that came from outside (a server's message) are repaired on their way in; a byte that
    // still is not UTF-8 is replaced here rather than failing the write (and the session with it).
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void bindJson(Statement& statement, int index, const nlohmann::json& value)
{
    if (value.is_null())
        statement.bindNull(index);
    else
        statement.bind(index, jsonText(value));
}

nlohmann::json readJson(const Statement& statement, int column, const std::string& file)
{
    if (statement.isNull(column))
        return nullptr;
    auto parsed = nlohmann::json::parse(statement.text(column), nullptr, false);
    if (parsed.is_discarded())
        throw Error("store.corrupt", file, statement.columnName(column), "a stored JSON value does not parse");
    return parsed;
}

TunableValues tunablesFromJson(const nlohmann::json& tunables)
{
    TunableValues values;
    if (tunables.is_object()) {
        for (auto it = tunables.begin(); it != tunables.end(); ++it) {
            if (it.value().is_number_integer())
                values[it.key()] = it.value().get<std::int64_t>();
        }
    }
    return values;
}

namespace {
bool writableByUs(const std::filesystem::path& file)
{
    const auto folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    return ::access(file.c_str(), W_OK) == 0 && ::access(folder.c_str(), W_OK) == 0;
}
} // namespace

Database readOnlyConnection(const std::filesystem::path& file)
{
    auto open = [&](Database::Mode mode) {
        Database db(file, mode);
        db.pragmaInteger("application_id"); // the first read: a WAL file's -shm is needed here
        return db;
    };
    try {
        return open(Database::Mode::ReadOnly);
    } catch (const Error& error) {
        // A WAL file in a folder we cannot write has no -shm to share: read it as immutable
        // (nobody can be writing it there: its folder is read-only to us, and so to our sessions).
        const auto& category = error.category();
        if (writableByUs(file) || !std::filesystem::is_regular_file(file)
            || (category != "store.open-failed" && category != "store.read-only" && category != "store.io"))
            throw;
        return open(Database::Mode::ReadOnlyImmutable);
    }
}

namespace {
std::int64_t orNow(std::int64_t ms) { return ms ? ms : nowMs(); }

// A read-only connection that reads the file as it is; see Options::readOnly.
Database openForReading(const std::filesystem::path& file)
{
    Database db = readOnlyConnection(file);
    if (schemaVersionOf(db, "the store") == kSchemaVersion)
        return db;
    // An older (or empty) file: migrate a copy in memory, never the file.
    Database copy({}, Database::Mode::Memory);
    copy.loadFrom(db);
    copy.setFileName(file.string());
    prepareSchema(copy, "the store");
    return copy;
}

Database openDatabase(const std::filesystem::path& file, const Store::Options& options)
{
    try {
        if (options.readOnly)
            return openForReading(file);
        return Database(file, Database::Mode::ReadWrite);
    } catch (const Error& error) {
        if (error.category() == "store.not-a-database")
            throw Error(error.category(), file.string(), {}, "not a KernelLoop store: " + error.message());
        throw;
    }
}

} // namespace

Store::Impl::Impl(const std::filesystem::path& file, Options opts)
    : db(openDatabase(file, opts))
    , path(file)
    , options(opts)
{
    try {
        if (!options.readOnly) {
            // Read before writing anything: another application's file must stay untouched.
            schemaVersionOf(db, "the store");
            db.exec("PRAGMA journal_mode = WAL");
            db.exec(options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
        }
        db.exec("PRAGMA foreign_keys = ON");
        db.exec("PRAGMA cell_size_check = ON"); // report damaged pages as corruption, early
        if (!options.readOnly) {
            prepareSchema(db, "the store");
            markInterrupted();
        }
    } catch (const Error& error) {
        if (error.category() == "store.not-a-database")
            throw Error(error.category(), path.string(), {}, "not a KernelLoop store: " + error.message());
        throw;
    }
}

void Store::Impl::markInterrupted()
{
    std::vector<std::int64_t> gone;
    {
        auto select = db.prepare("SELECT id, owner_pid, owner_host, owner_start FROM sessions WHERE status = 'running' "
                                 "AND owner_pid IS NOT NULL");
        while (select.step()) {
            if (ownerState(ownerOf(select, 1)) == OwnerState::Gone)
                gone.push_back(select.integer(0));
        }
    }
    if (gone.empty())
        return;
    Transaction transaction(db);
    auto update = db.prepare("UPDATE sessions SET status = 'interrupted', ended_ms = COALESCE((SELECT MAX(i.ended_ms) "
                             "FROM iterations i WHERE i.session_id = sessions.id), started_ms) "
                             "WHERE id = ?1 AND status = 'running'");
    for (const auto id : gone) {
        update.bind(1, id).run();
        update.reset();
    }
    transaction.commit();
}

Store::Store(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const std::filesystem::path& path, Options options)
{
    return Store(std::make_unique<Impl>(path, options));
}

const std::filesystem::path& Store::path() const { return m_impl->path; }

int Store::schemaVersion() { return kSchemaVersion; }

// --- problems ---

std::string Store::addProblem(const ProblemRecord& problem)
{
    const std::string hash = contentHash({ problem.json, problem.referenceSource, problem.baselineSource });
    auto insert = m_impl->db.cached("INSERT OR IGNORE INTO problems (hash, name, json, reference_source, "
                                    "baseline_source, added_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    insert.bind(1, hash).bind(2, problem.name).bind(3, problem.json).bind(4, problem.referenceSource);
    insert.bind(5, problem.baselineSource).bind(6, nowMs()).run();
    return hash;
}

std::optional<ProblemRecord> Store::problem(const std::string& hash) const
{
    auto select
        = m_impl->db.cached("SELECT hash, name, json, reference_source, baseline_source FROM problems WHERE hash = ?1");
    select.bind(1, hash);
    if (!select.step())
        return std::nullopt;
    return ProblemRecord { select.text(0), select.text(1), select.text(2), select.text(3), select.text(4) };
}

// --- sessions ---

std::int64_t Store::createSession(const SessionRecord& session)
{
    if (!problem(session.problemHash))
        throw Error("store.unknown-problem", m_impl->path.string(), session.problemHash,
            "no problem with this hash in the store; add it first");
    auto insert = m_impl->db.cached(
        "INSERT INTO sessions (problem_hash, label, device, device_json, proposer, mode, config_json, started_ms, "
        "ended_ms, status, summary_json, owner_pid, owner_host, owner_start) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    insert.bind(1, session.problemHash).bind(2, session.label).bind(3, session.device);
    bindJson(insert, 4, columnJson(session.deviceInfo));
    insert.bind(5, session.proposer).bind(6, session.mode).bind(7, jsonText(session.config));
    insert.bind(8, orNow(session.startedMs)).bind(9, session.endedMs).bind(10, session.status);
    bindJson(insert, 11, summaryColumn(session.summary));
    const auto owner = thisProcess();
    insert.bind(12, owner.pid).bind(13, owner.host).bind(14, owner.start);
    insert.run();
    return m_impl->db.lastInsertId();
}

void Store::finishSession(std::int64_t sessionId, const std::string& status, std::int64_t endedMs)
{
    auto update = m_impl->db.cached("UPDATE sessions SET status = ?2, ended_ms = ?3 WHERE id = ?1");
    update.bind(1, sessionId).bind(2, status).bind(3, orNow(endedMs)).run();
    if (m_impl->db.changes() == 0)
        throw Error("store.unknown-session", m_impl->path.string(), std::to_string(sessionId), "no such session");
}

void Store::recordSessionSummary(std::int64_t sessionId, const std::optional<SessionSummary>& summary)
{
    auto update = m_impl->db.cached("UPDATE sessions SET summary_json = ?2 WHERE id = ?1");
    update.bind(1, sessionId);
    bindJson(update, 2, summaryColumn(summary));
    update.run();
    if (m_impl->db.changes() == 0)
        throw Error("store.unknown-session", m_impl->path.string(), std::to_string(sessionId), "no such session");
}

namespace {
const std::string kSessionColumns = "s.id, s.problem_hash, p.name, s.label, s.device, s.device_json, s.proposer, "
                                    "s.mode, s.config_json, s.started_ms, s.ended_ms, s.status, s.summary_json, "
                                    "s.owner_pid, s.owner_host, s.owner_start, "
                                    "(SELECT MAX(i.ended_ms) FROM iterations i WHERE i.session_id = s.id)";
constexpr int kSessionColumnCount = 17;

SessionRecord readSession(const Statement& row, const std::string& file)
{
    SessionRecord session;
    session.id = row.integer(0);
    session.problemHash = row.text(1);
    session.problemName = row.text(2);
    session.label = row.text(3);
    session.device = row.text(4);
    session.deviceInfo = deviceColumn(readJson(row, 5, file));
    session.proposer = row.text(6);
    session.mode = row.text(7);
    session.config = readJson(row, 8, file);
    session.startedMs = row.integer(9);
    session.endedMs = row.optionalInteger(10);
    session.status = row.text(11);
    session.summary = summaryFromColumn(readJson(row, 12, file));
    const auto owner = ownerOf(row, 13);
    session.ownerPid = row.optionalInteger(13);
    session.ownerHost = owner.host;
    // What a writable open would record, told at once (a read-only store writes nothing).
    if (session.status == "running" && ownerState(owner) == OwnerState::Gone) {
        session.status = "interrupted";
        session.endedMs = row.optionalInteger(16).value_or(session.startedMs);
    }
    return session;
}
} // namespace

std::optional<SessionRecord> Store::session(std::int64_t sessionId) const
{
    auto select = m_impl->db.cached(
        "SELECT " + kSessionColumns + " FROM sessions s JOIN problems p ON p.hash = s.problem_hash WHERE s.id = ?1");
    select.bind(1, sessionId);
    if (!select.step())
        return std::nullopt;
    return readSession(select, m_impl->path.string());
}

std::vector<SessionRow> Store::listSessions() const
{
    auto select = m_impl->db.cached("SELECT " + kSessionColumns
        + ", (SELECT COUNT(*) FROM iterations i WHERE i.session_id = s.id),"
          " (SELECT MAX(r.speedup) FROM iterations i JOIN results r ON r.iteration_id = i.id"
          "   WHERE i.session_id = s.id AND r.status = 'ok'),"
          " (SELECT MIN(r.median_us) FROM iterations i JOIN results r ON r.iteration_id = i.id"
          "   WHERE i.session_id = s.id AND r.status = 'ok')"
          " FROM sessions s JOIN problems p ON p.hash = s.problem_hash ORDER BY s.started_ms DESC, s.id DESC");
    std::vector<SessionRow> rows;
    while (select.step()) {
        SessionRow row;
        row.session = readSession(select, m_impl->path.string());
        row.iterations = static_cast<int>(select.integer(kSessionColumnCount));
        row.bestSpeedup = select.optionalReal(kSessionColumnCount + 1);
        row.bestMedianUs = select.optionalReal(kSessionColumnCount + 2);
        rows.push_back(std::move(row));
    }
    return rows;
}

void Store::deleteSession(std::int64_t sessionId)
{
    auto& db = m_impl->db;
    Transaction transaction(db);
    {
        auto select = db.cached("SELECT status, owner_pid, owner_host, owner_start FROM sessions WHERE id = ?1");
        select.bind(1, sessionId);
        if (!select.step())
            throw Error("store.unknown-session", m_impl->path.string(), std::to_string(sessionId), "no such session");
        if (select.text(0) == "running" && ownerState(ownerOf(select, 1)) == OwnerState::Alive)
            throw Error("store.session-running", m_impl->path.string(), std::to_string(sessionId),
                "the session is still being recorded by process " + select.text(1) + "; stop it first");
    }
    // The foreign keys cascade from the session to everything under it.
    auto remove = db.cached("DELETE FROM sessions WHERE id = ?1");
    remove.bind(1, sessionId).run();
    db.exec("DELETE FROM sources WHERE hash NOT IN (SELECT source_hash FROM candidates)");
    transaction.commit();
}

// --- candidates ---

void Store::Impl::requireSession(std::int64_t sessionId)
{
    auto select = db.cached("SELECT 1 FROM sessions WHERE id = ?1");
    select.bind(1, sessionId);
    if (!select.step())
        throw Error("store.unknown-session", path.string(), std::to_string(sessionId), "no such session");
}

void Store::Impl::requireCandidateOf(std::int64_t sessionId, std::int64_t candidateId)
{
    auto select = db.cached("SELECT session_id FROM candidates WHERE id = ?1");
    select.bind(1, candidateId);
    if (!select.step())
        throw Error("store.unknown-candidate", path.string(), std::to_string(candidateId), "no such candidate");
    if (select.integer(0) != sessionId)
        throw Error("store.unknown-candidate", path.string(), std::to_string(candidateId),
            "the candidate belongs to session " + std::to_string(select.integer(0)) + ", not "
                + std::to_string(sessionId));
}

std::int64_t Store::addCandidate(std::int64_t sessionId, const CandidateRecord& candidate)
{
    m_impl->requireSession(sessionId);
    if (candidate.parentId) {
        try {
            m_impl->requireCandidateOf(sessionId, *candidate.parentId);
        } catch (const Error& error) {
            throw Error("store.bad-parent", error.file(), error.where(), "parent: " + error.message());
        }
    }
    nlohmann::json tunables = nlohmann::json::object();
    for (const auto& [name, value] : candidate.tunables)
        tunables[name] = value;
    const std::string hash = contentHash(candidate.source);

    Transaction transaction(m_impl->db);
    auto source = m_impl->db.cached("INSERT OR IGNORE INTO sources (hash, text) VALUES (?1, ?2)");
    source.bind(1, hash).bind(2, candidate.source).run();
    auto insert = m_impl->db.cached(
        "INSERT INTO candidates (session_id, source_hash, file_name, parent_id, proposer, proposer_detail, "
        "tunables_json, hypothesis, created_ms, predicted_speedup) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    insert.bind(1, sessionId).bind(2, hash).bind(3, candidate.fileName).bind(4, candidate.parentId);
    insert.bind(5, proposerName(candidate.proposer)).bind(6, candidate.proposerDetail).bind(7, tunables.dump());
    insert.bind(8, candidate.hypothesis).bind(9, orNow(candidate.createdMs)).bind(10, candidate.predictedSpeedup).run();
    const auto id = m_impl->db.lastInsertId();
    transaction.commit();
    return id;
}

std::optional<CandidateRecord> Store::Impl::readCandidate(std::int64_t candidateId)
{
    auto select = db.cached("SELECT c.id, c.session_id, c.source_hash, s.text, c.file_name, c.parent_id, c.proposer, "
                            "c.proposer_detail, c.tunables_json, c.hypothesis, c.created_ms, c.predicted_speedup "
                            "FROM candidates c JOIN sources s ON s.hash = c.source_hash WHERE c.id = ?1");
    select.bind(1, candidateId);
    if (!select.step())
        return std::nullopt;
    CandidateRecord candidate;
    candidate.id = select.integer(0);
    candidate.sessionId = select.integer(1);
    candidate.sourceHash = select.text(2);
    candidate.source = select.text(3);
    candidate.fileName = select.text(4);
    candidate.parentId = select.optionalInteger(5);
    candidate.proposer = parseProposer(select.text(6)).value_or(CandidateRecord::Proposer::Human);
    candidate.proposerDetail = select.text(7);
    candidate.tunables = tunablesFromJson(readJson(select, 8, path.string()));
    candidate.hypothesis = select.text(9);
    candidate.createdMs = select.integer(10);
    candidate.predictedSpeedup = select.optionalReal(11);
    return candidate;
}

std::optional<CandidateRecord> Store::candidate(std::int64_t candidateId) const
{
    return m_impl->readCandidate(candidateId);
}

// --- evaluation cache ---

std::optional<ResultRecord> Store::cacheLookup(const std::string& key) const
{
    auto select = m_impl->db.cached("SELECT result_id FROM evaluation_cache WHERE key = ?1");
    select.bind(1, key);
    if (!select.step())
        return std::nullopt;
    const auto resultId = select.integer(0);
    return m_impl->readResult("id", resultId);
}

void Store::cacheStore(const std::string& key, std::int64_t resultId)
{
    // One write transaction, taken first: a read left open here (the check's statement) would make the
    // insert upgrade a stale snapshot, which SQLite refuses at once ("database is locked", no busy wait)
    // when another connection wrote meanwhile: a campaign's sessions write one file side by side.
    Transaction transaction(m_impl->db);
    {
        auto select = m_impl->db.cached("SELECT 1 FROM results WHERE id = ?1");
        select.bind(1, resultId);
        if (!select.step())
            throw Error("store.unknown-result", m_impl->path.string(), std::to_string(resultId), "no such result");
    }
    auto insert
        = m_impl->db.cached("INSERT OR REPLACE INTO evaluation_cache (key, result_id, stored_ms) VALUES (?1, ?2, ?3)");
    insert.bind(1, key).bind(2, resultId).bind(3, nowMs()).run();
    transaction.commit();
}

// --- checks ---

std::vector<std::string> Store::checkIntegrity() const
{
    std::vector<std::string> problems;
    {
        auto check = m_impl->db.prepare("PRAGMA integrity_check");
        while (check.step()) {
            if (check.text(0) != "ok")
                problems.push_back(check.text(0));
        }
    }
    auto foreign = m_impl->db.prepare("PRAGMA foreign_key_check");
    while (foreign.step())
        problems.push_back(
            "row " + foreign.text(1) + " of " + foreign.text(0) + " refers to a missing row of " + foreign.text(2));
    return problems;
}

} // namespace kl::store
