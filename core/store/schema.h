#pragma once
// The store's schema and its forward migrations. PRAGMA user_version holds the schema version,
// PRAGMA application_id marks the file as KernelLoop's. A new file is created at version 2 and
// takes the same steps to the current version as an older file, so both end with the same schema;
// the migration runs in one transaction. The DDL of a shipped version never changes once
// released: files in the field were made with it.
#include <string_view>

namespace kl::store {

class Database;

constexpr int kSchemaVersion = 8;
constexpr int kApplicationId = 0x4b4c4f50; // "KLOP"

// Version 1: the first release. Candidates carry their source inline, results keep metrics as
// JSON, no LLM exchanges, no evaluation cache.
extern const std::string_view kSchemaV1;
// Version 2: sources stored once by hash, metrics as rows, percentiles and speedup columns,
// finding order and directions, replacement candidates, LLM exchanges, the cache.
extern const std::string_view kSchemaV2;
// Version 3 is version 2 plus three nullable columns added by ALTER TABLE
// (candidates.predicted_speedup, iterations.round, sessions.summary_json) and the partial index
// results_verified.
// Version 4 adds the session's owning process (sessions.owner_pid, owner_host,
// owner_start) and the table size_results (each main size's own timing figures).
// Version 5 adds results.runner_endpoint (the runner endpoint that measured a result).
// Version 6 adds results.pc_sampling_json (the runner's PC samples of a result).
// Version 7 adds size_results.pct_of_sol and sol_bound (speed of light per size).
// Version 8 (current) adds campaigns and campaign_problems (many problems run as sessions, one record;
// core/store/campaign_store.h).

// Brings the database to kSchemaVersion: creates it when empty, migrates it when older.
// Throws kl::Error "store.newer-version" (written by a newer KernelLoop), "store.not-kernelloop"
// (some other application's SQLite file), "store.migration-failed", or any store.* error the
// file itself raises ("store.not-a-database", "store.corrupt").
// `what` prefixes messages ("the store", "the import file").
void prepareSchema(Database& db, std::string_view what);

// The version of a KernelLoop file without changing it (0: empty). Throws as prepareSchema.
int schemaVersionOf(Database& db, std::string_view what);

} // namespace kl::store
