#pragma once
// The session store: every session, problem, candidate, result, finding, decision and LLM
// exchange, in one SQLite file (WAL). Value types in, value types out; no SQL leaves core/store.
//
// Durability: WAL with synchronous=FULL. A commit returns only after the WAL is on disk, so a
// committed iteration survives a killed process *and* a power cut. (NORMAL would survive a
// killed process too, since the WAL is already in the OS's cache, but could lose the last
// commits on power loss.) One fsync per iteration is nothing next to an evaluation that takes
// seconds. Options::durable = false picks NORMAL for bulk work (benchmarks, scratch copies).
//
// An iteration's rows are written together: beginIteration reserves its index, record* collect
// in memory, finishIteration writes them all in one transaction. A process that dies before
// finishIteration leaves no trace of that iteration; one that dies after keeps all of it.
//
// A Store is one connection: use it from one thread at a time. Open another Store on the same
// file for another thread or process (WAL lets readers run beside the writer).
// Errors are kl::Error with categories "store.*" (see each function, and sqliteCategory()).
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {

class Store {
public:
    struct Options {
        bool durable = true; // synchronous=FULL; false: NORMAL (survives a killed process, not a power cut)
        // For browsing (history, show, export, the GUI): SQLITE_OPEN_READONLY, never a write, not
        // even a journal-mode switch, so the file's bytes and mtime stay as they are. The file must
        // exist. In a folder or on a file this process cannot write, it is opened immutable. A file
        // of an older schema is read through a migrated copy in memory; the file is not changed.
        bool readOnly = false;
    };

    // Opens the store at `path`, creating it if missing and migrating it if older. A writable
    // open also marks the running sessions whose process is gone (killed) as "interrupted".
    // Throws "store.open-failed" (no such folder, no permission), "store.not-a-file" (a FIFO, a
    // device, a folder), "store.not-a-database",
    // "store.corrupt", "store.not-kernelloop", "store.newer-version", "store.migration-failed",
    // "store.busy".
    static Store open(const std::filesystem::path& path, Options options);
    static Store open(const std::filesystem::path& path) { return open(path, Options {}); }

    Store(Store&&) noexcept;
    Store& operator=(Store&&) noexcept;
    ~Store();

    const std::filesystem::path& path() const;
    static int schemaVersion();

    // Problems: stored once per content hash; adding again returns the same hash.
    std::string addProblem(const ProblemRecord& problem);
    std::optional<ProblemRecord> problem(const std::string& hash) const;

    // Sessions. createSession throws "store.unknown-problem" for a hash never added.
    std::int64_t createSession(const SessionRecord& session);
    void finishSession(std::int64_t sessionId, const std::string& status, std::int64_t endedMs = 0);
    // Replaces the session's summary (none clears it). Throws "store.unknown-session".
    void recordSessionSummary(std::int64_t sessionId, const std::optional<SessionSummary>& summary);
    std::optional<SessionRecord> session(std::int64_t sessionId) const;
    // A session whose status says "running" but whose process on this host is gone reads as
    // "interrupted", ended at its last iteration, even from a read-only store.
    std::vector<SessionRow> listSessions() const; // newest first
    // Deletes a session and every row that hangs off it (candidates, iterations, results, sizes,
    // findings, decisions, exchanges, its cache entries, sources no other candidate uses), in one
    // transaction. Throws "store.unknown-session", "store.session-running" (its process is alive).
    void deleteSession(std::int64_t sessionId);

    // Candidates belong to a session; a parent must be a candidate of the same session
    // ("store.bad-parent"). Written at once, outside any iteration.
    std::int64_t addCandidate(std::int64_t sessionId, const CandidateRecord& candidate);
    std::optional<CandidateRecord> candidate(std::int64_t candidateId) const;

    // Recording one iteration. Indices count from 1 per session. Errors: "store.unknown-session",
    // "store.unknown-candidate", "store.no-such-iteration" (not begun, or already finished),
    // "store.findings-without-result".
    // `round`: the loop round the iteration belongs to (several iterations share one when k
    // candidates are evaluated per round; 0 is the baseline).
    IterationRef beginIteration(std::int64_t sessionId, std::optional<std::int64_t> candidateId = std::nullopt,
        std::optional<int> round = std::nullopt);
    void setCandidate(const IterationRef& iteration, std::int64_t candidateId);
    void recordResult(const IterationRef& iteration, const ResultRecord& result);
    void recordFindings(const IterationRef& iteration, const std::vector<FindingRecord>& findings);
    // On a finished iteration the decision is written at once (an engineer reviewing history).
    void recordDecision(const IterationRef& iteration, const DecisionRecord& decision);
    void recordExchange(const IterationRef& iteration, const ExchangeRecord& exchange);
    // Writes everything recorded for the iteration in one transaction. `state`: "done",
    // "cancelled", "proposer-error", ... (the loop's word for how it ended).
    CommittedIteration finishIteration(const IterationRef& iteration, const std::string& state = "done");
    // Forgets an unfinished iteration (nothing of it was written).
    void abandonIteration(const IterationRef& iteration);
    // Sets the code listings of an iteration's result, finished or not (made by nvdisasm after the
    // iteration was recorded). "store.no-such-iteration" when neither exists; an iteration without a
    // result is left as it is.
    void addListings(const IterationRef& iteration, const StoredListings& listings);

    // Reading history: committed iterations only.
    std::vector<IterationRow> listIterations(std::int64_t sessionId) const;
    std::optional<IterationDetail> iteration(std::int64_t sessionId, int index) const;
    // Each main size's own figures for one iteration (empty without a timed result), and for every
    // iteration of a session at once (by iteration index), for tables and charts.
    std::vector<SizeResult> sizeResults(std::int64_t sessionId, int index) const;
    std::map<int, std::vector<SizeResult>> sizeResults(std::int64_t sessionId) const;
    // For charts over a whole session, one query each (store_figures.cpp), by iteration index:
    // the profiled metrics whose counter name matches one of the SQL LIKE `patterns`
    // ("sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__average_warp_latency_issue_stalled_%"),
    // and each result's static telemetry (compile.telemetry: registers, theoretical_occupancy, ...).
    std::map<int, MetricValues> sessionMetrics(std::int64_t sessionId, const std::vector<std::string>& patterns) const;
    std::map<int, KernelStatics> sessionStatics(std::int64_t sessionId) const;
    // Each timed result's timing (results with a median) as the runner's typed value, by iteration index;
    // a row that does not read as protocol v1 is left out.
    std::map<int, protocol::Timing> sessionTimings(std::int64_t sessionId) const;
    // Which runner measured each result (results.runner_endpoint, "" before schema v5) and on which
    // GPU (device_json: model name and index), by iteration index: for history's "runner" column.
    struct MeasuredOn {
        std::string endpoint; // "local:1", "ssh:box:0", "slurm:-p gpu [job 12]"
        std::string model; // "NVIDIA H200"; empty when the result has no device
        int gpu = -1; // the device index on its host
    };
    std::map<int, MeasuredOn> sessionRunners(std::int64_t sessionId) const;
    // Each iteration's last decision in words ("new best: 1.484x [1.482, 1.486] faster over ..."), by
    // iteration index: the hypothesis log's "measured against the best then", for a whole session at once.
    std::map<int, std::string> sessionDecisionReasons(std::int64_t sessionId) const;

    // Examples for a proposer: the best verified candidate of each earlier session (result status
    // "ok", category "passed", speedup > 1; ties: the earlier iteration), sessions of problems named
    // `problemName` first, then other problems; best speedup first within each group (ties: the newer
    // session). At most `limit` rows (none when limit <= 0); sessions in `excludeSessions` are skipped.
    std::vector<ExampleRow> bestVerifiedCandidates(
        const std::string& problemName, const std::vector<std::int64_t>& excludeSessions, int limit) const;

    // The evaluation cache (key: evaluationCacheKey()), shared by every session in the file.
    std::optional<ResultRecord> cacheLookup(const std::string& key) const;
    void cacheStore(const std::string& key, std::int64_t resultId);

    // One session to one self-contained SQLite file (written to a temporary name, then renamed,
    // so a failed export leaves nothing). Throws "store.unknown-session", "store.export-failed",
    // "store.export-onto-source" (the file is this store, or its -wal/-shm/-journal, by filesystem
    // identity), "store.export-not-a-file" (a device, FIFO, folder, ...), "store.export-exists"
    // (an existing file, unless options.overwrite).
    struct ExportOptions {
        bool overwrite = false; // replace an existing regular file (never the store itself)
    };
    void exportSession(std::int64_t sessionId, const std::filesystem::path& file, ExportOptions options) const;
    void exportSession(std::int64_t sessionId, const std::filesystem::path& file) const
    {
        exportSession(sessionId, file, ExportOptions {});
    }
    // Imports the single session of an exported file (older schema versions are migrated in
    // memory; the file is not changed) and returns its new id. All or nothing. Throws
    // "store.import-not-a-file" (a folder, a device),
    // "store.import-not-a-database", "store.import-not-kernelloop", "store.import-newer-version",
    // "store.import-corrupt", "store.import-malformed", "store.import-bad-value" (a field that is not
    // of its column's kind: text or NaN where a number belongs; `where` names table, row and column).
    // A fault of this store itself (read-only, disk full, damaged) keeps its own category and names
    // this store, not the import file; a store that fails SQLite's integrity check takes nothing in
    // ("store.corrupt"), and gives nothing away either (exportSession).
    std::int64_t importSession(const std::filesystem::path& file);

    // What SQLite's integrity and foreign-key checks find wrong; empty when the file is sound.
    std::vector<std::string> checkIntegrity() const;

private:
    struct Impl;
    explicit Store(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// The checks exportSession makes of its target, for other writers of files beside a store (a kernel
// export): throws "store.export-onto-source", "store.export-not-a-file", and "store.export-exists"
// unless `overwrite`. A file that does not exist yet passes.
void checkExportTarget(const std::filesystem::path& store, const std::filesystem::path& file, bool overwrite);

} // namespace kl::store
