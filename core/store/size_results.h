#pragma once
// Per-size timing (table size_results): derived from a result's timing, named by the
// problem's main sizes, written and read beside the result row. Internal to core/store.
#include "core/store/records.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {

class Database;
class Statement;

// The problem file's main sizes, by label ("8192x4096" or the label the file gives): symbol → value.
std::map<std::string, std::map<std::string, std::int64_t>> mainSizeValues(const nlohmann::json& problem);

// Fills the values of sizes that have none from the problem's main size of the same label.
void nameSizes(std::vector<SizeResult>& sizes, const nlohmann::json& problem);

void insertSizeResults(Database& db, std::int64_t resultId, const std::vector<SizeResult>& sizes);
std::vector<SizeResult> readSizeResults(Database& db, std::int64_t resultId);
// One row's columns label, values_json, median_us, p20_us, p80_us, cv, gbps, pct_of_copy, speedup,
// pct_of_sol, sol_bound, then kSizeCeilingColumns' two (the stored timing's compute and
// compute_reason of the size's case) from `first` on.
SizeResult readSizeRow(const Statement& row, int first, const std::string& file);
// The two columns readSizeRow reads last, for a query that joins size_results z to results r.
extern const char* const kSizeCeilingColumns;

// Schema v3 → v4: size rows for every stored result with timing cases, and the headline columns
// of multi-size results made one size's (v3 rows mixed the first size's median with percentiles
// averaged over sizes).
void backfillSizeResults(Database& db);

} // namespace kl::store
