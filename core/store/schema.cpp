#include "core/store/schema.h"

#include "core/store/size_results.h"
#include "core/store/sqlite.h"

#include <functional>
#include <string>
#include <vector>

namespace kl::store {

const std::string_view kSchemaV1 = R"sql(
CREATE TABLE problems (
    hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    json TEXT NOT NULL,
    reference_source TEXT NOT NULL,
    baseline_source TEXT NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    problem_hash TEXT NOT NULL REFERENCES problems(hash),
    device TEXT NOT NULL,
    proposer TEXT NOT NULL,
    mode TEXT NOT NULL,
    budget_json TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER,
    status TEXT NOT NULL
);
CREATE TABLE candidates (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    source_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    parent_id INTEGER REFERENCES candidates(id),
    proposer TEXT NOT NULL CHECK (proposer IN ('llm', 'tuner', 'human')),
    tunables_json TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE iterations (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    idx INTEGER NOT NULL,
    candidate_id INTEGER REFERENCES candidates(id),
    state TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER NOT NULL,
    UNIQUE (session_id, idx)
);
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    iteration_id INTEGER NOT NULL UNIQUE REFERENCES iterations(id),
    status TEXT NOT NULL,
    category TEXT NOT NULL,
    detail TEXT NOT NULL,
    median_us REAL,
    gbps REAL,
    verification_json TEXT,
    timing_json TEXT,
    metrics_json TEXT,
    device_json TEXT,
    sm_clock_mhz REAL,
    toolkit TEXT NOT NULL
);
CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    result_id INTEGER NOT NULL REFERENCES results(id),
    rule_id TEXT NOT NULL,
    severity TEXT NOT NULL,
    message TEXT NOT NULL,
    evidence_json TEXT NOT NULL
);
CREATE INDEX findings_result ON findings(result_id);
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    iteration_id INTEGER NOT NULL REFERENCES iterations(id),
    kind TEXT NOT NULL CHECK (kind IN ('accept', 'reject', 'steer', 'auto-keep', 'auto-revert')),
    reason TEXT NOT NULL,
    steering TEXT NOT NULL,
    decided_ms INTEGER NOT NULL
);
CREATE INDEX decisions_iteration ON decisions(iteration_id);
)sql";

// Summary columns come before the JSON blobs in `results`: a listing then reads them from the
// row's first page and never follows the blobs' overflow pages.
const std::string_view kSchemaV2 = R"sql(
CREATE TABLE problems (
    hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    json TEXT NOT NULL,
    reference_source TEXT NOT NULL,
    baseline_source TEXT NOT NULL,
    added_ms INTEGER NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    problem_hash TEXT NOT NULL REFERENCES problems(hash),
    label TEXT NOT NULL DEFAULT '',
    device TEXT NOT NULL,
    device_json TEXT,
    proposer TEXT NOT NULL,
    mode TEXT NOT NULL,
    config_json TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER,
    status TEXT NOT NULL
);
CREATE INDEX sessions_started ON sessions(started_ms);
CREATE TABLE sources (
    hash TEXT PRIMARY KEY,
    text TEXT NOT NULL
);
CREATE TABLE candidates (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    source_hash TEXT NOT NULL REFERENCES sources(hash),
    file_name TEXT NOT NULL,
    parent_id INTEGER REFERENCES candidates(id),
    proposer TEXT NOT NULL CHECK (proposer IN ('llm', 'tuner', 'human')),
    proposer_detail TEXT NOT NULL DEFAULT '',
    tunables_json TEXT NOT NULL,
    hypothesis TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL
);
CREATE INDEX candidates_session ON candidates(session_id);
CREATE INDEX candidates_parent ON candidates(parent_id);
CREATE INDEX candidates_source ON candidates(source_hash);
CREATE TABLE iterations (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    candidate_id INTEGER REFERENCES candidates(id),
    state TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER NOT NULL,
    UNIQUE (session_id, idx)
);
CREATE INDEX iterations_candidate ON iterations(candidate_id);
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    iteration_id INTEGER NOT NULL UNIQUE REFERENCES iterations(id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    category TEXT NOT NULL,
    median_us REAL,
    p20_us REAL,
    p80_us REAL,
    cv REAL,
    gbps REAL,
    pct_of_copy REAL,
    speedup REAL,
    sm_clock_mhz REAL,
    toolkit TEXT NOT NULL,
    from_cache INTEGER NOT NULL DEFAULT 0,
    recorded_ms INTEGER NOT NULL,
    detail TEXT NOT NULL,
    verification_json TEXT,
    timing_json TEXT,
    device_json TEXT,
    compile_json TEXT,
    profile_json TEXT
);
CREATE TABLE metrics (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (result_id, name)
) WITHOUT ROWID;
CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    rule_id TEXT NOT NULL,
    severity TEXT NOT NULL,
    message TEXT NOT NULL,
    evidence_json TEXT NOT NULL,
    directions_json TEXT NOT NULL,
    UNIQUE (result_id, position)
);
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    iteration_id INTEGER NOT NULL REFERENCES iterations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('accept', 'reject', 'steer', 'replace', 'auto-keep', 'auto-revert')),
    reason TEXT NOT NULL,
    steering TEXT NOT NULL,
    replacement_candidate_id INTEGER REFERENCES candidates(id),
    decided_ms INTEGER NOT NULL
);
CREATE INDEX decisions_iteration ON decisions(iteration_id);
CREATE INDEX decisions_replacement ON decisions(replacement_candidate_id);
CREATE TABLE llm_exchanges (
    id INTEGER PRIMARY KEY,
    iteration_id INTEGER NOT NULL REFERENCES iterations(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    request_json TEXT NOT NULL,
    response TEXT NOT NULL,
    usage_json TEXT,
    latency_ms REAL,
    category TEXT NOT NULL,
    started_ms INTEGER NOT NULL
);
CREATE INDEX llm_exchanges_iteration ON llm_exchanges(iteration_id);
CREATE TABLE evaluation_cache (
    key TEXT PRIMARY KEY,
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    stored_ms INTEGER NOT NULL
);
CREATE INDEX evaluation_cache_result ON evaluation_cache(result_id);
)sql";

namespace {

// v1 → v2: move the v1 tables aside, create the v2 schema as a new file would have it, copy the
// rows across (sources out of candidates, metrics out of JSON, percentiles out of the timing
// JSON), drop the old tables. The migrated file's schema is then exactly a new file's.
void migrate1to2(Database& db)
{
    db.exec(R"sql(
DROP INDEX findings_result;
DROP INDEX decisions_iteration;
ALTER TABLE problems RENAME TO v1_problems;
ALTER TABLE sessions RENAME TO v1_sessions;
ALTER TABLE candidates RENAME TO v1_candidates;
ALTER TABLE iterations RENAME TO v1_iterations;
ALTER TABLE results RENAME TO v1_results;
ALTER TABLE findings RENAME TO v1_findings;
ALTER TABLE decisions RENAME TO v1_decisions;
)sql");
    db.exec(kSchemaV2);
    db.exec(R"sql(
INSERT INTO problems (hash, name, json, reference_source, baseline_source, added_ms)
    SELECT p.hash, p.name, p.json, p.reference_source, p.baseline_source,
           COALESCE((SELECT MIN(s.started_ms) FROM v1_sessions s WHERE s.problem_hash = p.hash), 0)
    FROM v1_problems p;
INSERT INTO sessions (id, problem_hash, label, device, device_json, proposer, mode, config_json, started_ms,
                      ended_ms, status)
    SELECT id, problem_hash, '', device, NULL, proposer, mode, budget_json, started_ms, ended_ms, status
    FROM v1_sessions;
INSERT OR IGNORE INTO sources (hash, text) SELECT source_hash, source FROM v1_candidates ORDER BY id;
INSERT INTO candidates (id, session_id, source_hash, file_name, parent_id, proposer, proposer_detail, tunables_json,
                        hypothesis, created_ms)
    SELECT id, session_id, source_hash, 'candidate.cu', parent_id, proposer, '', tunables_json, '', created_ms
    FROM v1_candidates;
INSERT INTO iterations (id, session_id, idx, candidate_id, state, started_ms, ended_ms)
    SELECT id, session_id, idx, candidate_id, state, started_ms, ended_ms FROM v1_iterations;
INSERT INTO results (id, iteration_id, status, category, median_us, p20_us, p80_us, cv, gbps, pct_of_copy, speedup,
                     sm_clock_mhz, toolkit, from_cache, recorded_ms, detail, verification_json, timing_json,
                     device_json, compile_json, profile_json)
    SELECT r.id, r.iteration_id, r.status, r.category, r.median_us,
           CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[0].candidate.p20_us') END,
           CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[0].candidate.p80_us') END,
           CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[0].candidate.cv') END,
           r.gbps,
           CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[0].pct_of_copy') END,
           CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[0].speedup_vs_baseline') END,
           r.sm_clock_mhz, r.toolkit, 0, i.ended_ms, r.detail, r.verification_json, r.timing_json, r.device_json,
           NULL, NULL
    FROM v1_results r JOIN v1_iterations i ON i.id = r.iteration_id;
INSERT INTO metrics (result_id, name, value)
    SELECT r.id, m.key, m.value FROM v1_results r, json_each(r.metrics_json) m
    WHERE json_valid(r.metrics_json) AND json_type(r.metrics_json) = 'object' AND m.type IN ('integer', 'real');
INSERT INTO findings (id, result_id, position, rule_id, severity, message, evidence_json, directions_json)
    SELECT id, result_id, ROW_NUMBER() OVER (PARTITION BY result_id ORDER BY id) - 1, rule_id, severity, message,
           evidence_json, '[]'
    FROM v1_findings;
INSERT INTO decisions (id, iteration_id, kind, reason, steering, replacement_candidate_id, decided_ms)
    SELECT id, iteration_id, kind, reason, steering, NULL, decided_ms FROM v1_decisions;
DROP TABLE v1_decisions;
DROP TABLE v1_findings;
DROP TABLE v1_results;
DROP TABLE v1_iterations;
DROP TABLE v1_candidates;
DROP TABLE v1_sessions;
DROP TABLE v1_problems;
)sql");
}

// v2 → v3: the proposer's predicted speedup, the loop round of an iteration, the session's summary
// (NULL in every existing row: older files never recorded them), and an index of the passing
// results for the examples shown to proposers (Store::bestVerifiedCandidates), so that finding
// them never reads the results table itself. No index on iterations.round: rows are read by
// (session_id, idx), never by round.
void migrate2to3(Database& db)
{
    db.exec(R"sql(
ALTER TABLE candidates ADD COLUMN predicted_speedup REAL;
ALTER TABLE iterations ADD COLUMN round INTEGER;
ALTER TABLE sessions ADD COLUMN summary_json TEXT;
CREATE INDEX results_verified ON results(speedup, iteration_id) WHERE status = 'ok' AND category = 'passed';
)sql");
}

// v3 → v4: who owns a running session (NULL for older rows: their owner is unknown, so they are
// never declared interrupted), and each main size's timing as rows, taken from the stored timing
// JSON; the headline columns of a multi-size result become its first size's.
void migrate3to4(Database& db)
{
    db.exec(R"sql(
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
ALTER TABLE sessions ADD COLUMN owner_host TEXT;
ALTER TABLE sessions ADD COLUMN owner_start TEXT;
CREATE TABLE size_results (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    label TEXT NOT NULL,
    values_json TEXT,
    median_us REAL,
    p20_us REAL,
    p80_us REAL,
    cv REAL,
    gbps REAL,
    pct_of_copy REAL,
    speedup REAL,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;
)sql");
    backfillSizeResults(db);
}

// v4 → v5: which runner endpoint measured a result ("local:0", "ssh:host:1", "slurm:-p gpu"), now that a
// session may spread its candidates over a pool; NULL in older rows (one local runner measured them).
void migrate4to5(Database& db) { db.exec("ALTER TABLE results ADD COLUMN runner_endpoint TEXT;"); }

// v5 → v6: the runner's PC samples of a result (its reply's "pc_sampling", as JSON), which the line
// views, `show --lines` and the prompt read back; NULL in older rows and where nothing was sampled.
void migrate5to6(Database& db) { db.exec("ALTER TABLE results ADD COLUMN pc_sampling_json TEXT;"); }

// v6 → v7: speed of light per size (the runner's pct_of_sol and sol_bound: the floor over the median and
// which of memory and compute binds); NULL in older rows, whose runners did not compute it.
void migrate6to7(Database& db)
{
    // A file taken back to an older version by hand (the tests' downgrades) may still have them.
    for (const char* column : { "pct_of_sol REAL", "sol_bound TEXT" }) {
        const std::string name = std::string(column).substr(0, std::string(column).find(' '));
        auto has = db.prepare("SELECT COUNT(*) FROM pragma_table_info('size_results') WHERE name = ?1");
        has.bind(1, name);
        if (has.step() && has.integer(0) == 0)
            db.exec("ALTER TABLE size_results ADD COLUMN " + std::string(column) + ";");
    }
}

// v7 → v8: campaigns (many problems run as sessions over a runner pool, core/store/campaign_store.h): the
// campaign (its name, the per-problem recipe as a `tune` line, its owning process) and one row per problem
// (where it stands, the category of a failure, the session that ran it). A deleted session leaves its row
// without a session rather than taking the row with it.
void migrate7to8(Database& db)
{
    // IF NOT EXISTS: a file taken back to an older version by hand (the tests' downgrades) may still have them.
    db.exec(R"sql(
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    recipe TEXT NOT NULL,
    status TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    ended_ms INTEGER,
    owner_pid INTEGER,
    owner_host TEXT,
    owner_start TEXT
);
CREATE TABLE IF NOT EXISTS campaign_problems (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    problem TEXT NOT NULL,
    status TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    endpoint TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    started_ms INTEGER,
    ended_ms INTEGER,
    PRIMARY KEY (campaign_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS campaign_problems_session ON campaign_problems(session_id);
)sql");
}

// migrations[v - 1] takes a file from version v to v + 1.
const std::vector<std::function<void(Database&)>>& migrations()
{
    static const std::vector<std::function<void(Database&)>> steps { migrate1to2, migrate2to3, migrate3to4, migrate4to5,
        migrate5to6, migrate6to7, migrate7to8 };
    return steps;
}

std::string capitalised(std::string_view what)
{
    std::string text(what);
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z')
        text[0] = static_cast<char>(text[0] - 'a' + 'A');
    return text;
}

} // namespace

int schemaVersionOf(Database& db, std::string_view what)
{
    const auto application = db.pragmaInteger("application_id"); // the first read: a non-database fails here
    const auto version = db.pragmaInteger("user_version");
    if (application == kApplicationId) {
        if (version > kSchemaVersion)
            throw Error("store.newer-version", db.file(), {},
                capitalised(what) + " was written by a newer KernelLoop (schema version " + std::to_string(version)
                    + "; this build knows up to " + std::to_string(kSchemaVersion) + "); update KernelLoop to open it");
        if (version < 1)
            throw Error("store.corrupt", db.file(), {}, capitalised(what) + " has no schema version");
        return static_cast<int>(version);
    }
    const bool empty
        = db.pragmaInteger("page_count") == 0 || db.prepare("SELECT 1 FROM sqlite_master LIMIT 1").step() == false;
    if (application == 0 && version == 0 && empty)
        return 0;
    throw Error("store.not-kernelloop", db.file(), {},
        capitalised(what) + " is an SQLite database of another application, not a KernelLoop store");
}

void prepareSchema(Database& db, std::string_view what)
{
    if (schemaVersionOf(db, what) == kSchemaVersion)
        return;
    // Table rebuilds need foreign keys off, and that can only change outside a transaction.
    db.exec("PRAGMA foreign_keys = OFF");
    try {
        Transaction transaction(db);
        int version = schemaVersionOf(db, what); // again, under the write lock: another process may have done it
        const bool created = version == 0;
        if (created) {
            // Born at version 2, then the same steps as a migrated file: one schema, however it got there.
            db.exec(kSchemaV2);
            version = 2;
        }
        for (; version < kSchemaVersion; ++version) {
            try {
                migrations().at(static_cast<std::size_t>(version - 1))(db);
            } catch (const Error& error) {
                throw Error("store.migration-failed", db.file(), "schema version " + std::to_string(version),
                    "cannot migrate " + std::string(what) + " to schema version " + std::to_string(version + 1) + ": "
                        + error.message());
            }
        }
        if (!created) {
            Statement check = db.prepare("PRAGMA foreign_key_check");
            if (check.step())
                throw Error("store.migration-failed", db.file(), check.text(0),
                    "a migrated row of table " + check.text(0) + " refers to a missing row of " + check.text(2));
        }
        db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
        db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
        transaction.commit();
    } catch (...) {
        db.exec("PRAGMA foreign_keys = ON");
        throw;
    }
    db.exec("PRAGMA foreign_keys = ON");
}

} // namespace kl::store
