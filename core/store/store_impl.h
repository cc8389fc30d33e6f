#pragma once
// The inside of kl::store::Store, shared by the files that implement it (not a public header).
#include "core/store/sqlite.h"
#include "core/store/store.h"

#include <map>
#include <utility>

namespace kl::store {

struct PendingIteration {
    std::optional<std::int64_t> candidateId;
    std::optional<int> round;
    std::int64_t startedMs = 0;
    std::optional<ResultRecord> result;
    std::vector<FindingRecord> findings;
    std::vector<DecisionRecord> decisions;
    std::vector<ExchangeRecord> exchanges;
};

struct Store::Impl {
    Impl(const std::filesystem::path& file, Options opts);

    Database db;
    std::filesystem::path path;
    Options options;
    std::map<std::pair<std::int64_t, int>, PendingIteration> pending;

    // Running sessions whose owning process is gone become "interrupted" (writable opens only).
    void markInterrupted();
    void requireSession(std::int64_t sessionId);
    void requireCandidateOf(std::int64_t sessionId, std::int64_t candidateId);
    PendingIteration& pendingOf(const IterationRef& iteration);
    std::optional<std::int64_t> committedIterationId(const IterationRef& iteration);

    void insertDecision(std::int64_t iterationId, const DecisionRecord& decision);
    std::optional<ResultRecord> readResult(const std::string& where, std::int64_t key);
    // The result's sizes (derived from its timing when it has none), with values from the session's problem.
    std::vector<SizeResult> namedSizes(std::int64_t sessionId, const ResultRecord& result);
    std::optional<CandidateRecord> readCandidate(std::int64_t candidateId);
};

// A read-only connection to an existing file, immutable where the folder or file is not writable
// by this process (a WAL file there has no -shm to share). Throws as Database's constructor.
Database readOnlyConnection(const std::filesystem::path& file);

// JSON columns: SQL NULL for a null value; a stored text that is not JSON is a corrupt file.
std::string jsonText(const nlohmann::json& value); // dump(), a byte that is not UTF-8 replaced
void bindJson(Statement& statement, int index, const nlohmann::json& value);
nlohmann::json readJson(const Statement& statement, int column, const std::string& file);
// A candidate's tunables_json as values; entries that are not integers are skipped.
TunableValues tunablesFromJson(const nlohmann::json& tunables);

} // namespace kl::store
