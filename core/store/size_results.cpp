#include "core/store/size_results.h"

#include "core/store/result_columns.h"
#include "core/store/runner_result.h"
#include "core/store/sqlite.h"

#include <algorithm>
#include <cmath>

namespace kl::store {

std::map<std::string, std::map<std::string, std::int64_t>> mainSizeValues(const nlohmann::json& problem)
{
    std::map<std::string, std::map<std::string, std::int64_t>> byLabel;
    if (!problem.is_object() || !problem.contains("sizes") || !problem["sizes"].is_object())
        return byLabel;
    const auto& sizes = problem["sizes"];
    // The symbols' order names an unlabelled size; problem files keep them in "sizes", older ones at the top.
    const nlohmann::json* symbols = nullptr;
    if (sizes.contains("symbols") && sizes["symbols"].is_array())
        symbols = &sizes["symbols"];
    else if (problem.contains("symbols") && problem["symbols"].is_array())
        symbols = &problem["symbols"];
    if (!sizes.contains("main") || !sizes["main"].is_array())
        return byLabel;
    for (const auto& set : sizes["main"]) {
        if (!set.is_object())
            continue;
        std::map<std::string, std::int64_t> values;
        for (auto it = set.begin(); it != set.end(); ++it) {
            if (it.value().is_number_integer())
                values[it.key()] = it.value().get<std::int64_t>();
        }
        std::string label;
        if (set.contains("label") && set["label"].is_string()) {
            label = set["label"].get<std::string>();
        } else if (symbols) {
            for (const auto& symbol : *symbols) {
                if (!symbol.is_string() || !values.count(symbol.get<std::string>()))
                    continue;
                label += (label.empty() ? "" : "x") + std::to_string(values[symbol.get<std::string>()]);
            }
        }
        if (!label.empty())
            byLabel.emplace(label, std::move(values));
    }
    return byLabel;
}

void nameSizes(std::vector<SizeResult>& sizes, const nlohmann::json& problem)
{
    bool missing = false;
    for (const auto& size : sizes)
        missing = missing || size.values.empty();
    if (!missing)
        return;
    const auto byLabel = mainSizeValues(problem);
    for (auto& size : sizes) {
        if (!size.values.empty())
            continue;
        if (auto it = byLabel.find(size.label); it != byLabel.end())
            size.values = it->second;
    }
}

void insertSizeResults(Database& db, std::int64_t resultId, const std::vector<SizeResult>& sizes)
{
    auto insert
        = db.cached("INSERT INTO size_results (result_id, position, label, values_json, median_us, p20_us, "
                    "p80_us, cv, gbps, pct_of_copy, speedup) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    int position = 0;
    for (const auto& size : sizes) {
        insert.bind(1, resultId).bind(2, position++).bind(3, size.label);
        if (size.values.empty())
            insert.bindNull(4);
        else
            insert.bind(4, nlohmann::json(size.values).dump());
        insert.bind(5, size.medianUs).bind(6, size.p20Us).bind(7, size.p80Us).bind(8, size.cv);
        insert.bind(9, size.gbps).bind(10, size.pctOfCopy).bind(11, size.speedup);
        insert.run();
        insert.reset();
    }
    // Speed of light (schema v7) in its own statement, prepared only when there is some: the v3 -> v4
    // backfill writes size rows before those columns exist.
    const bool anySol = std::any_of(
        sizes.begin(), sizes.end(), [](const SizeResult& size) { return size.pctOfSol || size.solBound; });
    if (!anySol)
        return;
    auto sol
        = db.cached("UPDATE size_results SET pct_of_sol = ?3, sol_bound = ?4 WHERE result_id = ?1 AND position = ?2");
    position = 0;
    for (const auto& size : sizes) {
        const int at = position++;
        sol.bind(1, resultId).bind(2, at).bind(3, size.pctOfSol);
        if (size.solBound)
            sol.bind(4, std::string(boundName(*size.solBound)));
        else
            sol.bindNull(4);
        sol.run();
        sol.reset();
    }
}

SizeResult readSizeRow(const Statement& row, int first, const std::string& file)
{
    SizeResult size;
    size.label = row.text(first);
    if (!row.isNull(first + 1)) {
        const auto values = nlohmann::json::parse(row.text(first + 1), nullptr, false);
        if (!values.is_object())
            throw Error("store.corrupt", file, "size_results.values_json", "a stored size is not a JSON object");
        for (auto it = values.begin(); it != values.end(); ++it) {
            if (it.value().is_number_integer())
                size.values[it.key()] = it.value().get<std::int64_t>();
        }
    }
    size.medianUs = row.optionalReal(first + 2);
    size.p20Us = row.optionalReal(first + 3);
    size.p80Us = row.optionalReal(first + 4);
    size.cv = row.optionalReal(first + 5);
    size.gbps = row.optionalReal(first + 6);
    size.pctOfCopy = row.optionalReal(first + 7);
    size.speedup = row.optionalReal(first + 8);
    size.pctOfSol = row.optionalReal(first + 9);
    if (!row.isNull(first + 10))
        size.solBound = parseBound(row.text(first + 10));
    if (!row.isNull(first + 11))
        size.compute = parsePrecision(row.text(first + 11));
    if (!row.isNull(first + 12))
        size.computeReason = parseCeilingReason(row.text(first + 12));
    return size;
}

// The size's case in the stored timing: size rows are made from its cases in order (sizeResultsOf).
const char* const kSizeCeilingColumns
    = "CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[' || z.position || "
      "'].compute') END, CASE WHEN json_valid(r.timing_json) THEN json_extract(r.timing_json, '$.cases[' || "
      "z.position || '].compute_reason') END";

std::vector<SizeResult> readSizeResults(Database& db, std::int64_t resultId)
{
    auto select = db.cached(std::string("SELECT z.label, z.values_json, z.median_us, z.p20_us, z.p80_us, z.cv, "
                                        "z.gbps, z.pct_of_copy, z.speedup, z.pct_of_sol, z.sol_bound, ")
        + kSizeCeilingColumns
        + " FROM size_results z JOIN results r ON r.id = z.result_id WHERE z.result_id = ?1 ORDER BY z.position");
    select.bind(1, resultId);
    std::vector<SizeResult> sizes;
    while (select.step())
        sizes.push_back(readSizeRow(select, 0, db.file()));
    return sizes;
}

void backfillSizeResults(Database& db)
{
    struct Row {
        std::int64_t resultId;
        std::vector<SizeResult> sizes;
    };
    std::vector<Row> rows;
    {
        auto select = db.prepare("SELECT r.id, r.timing_json, p.json FROM results r "
                                 "JOIN iterations i ON i.id = r.iteration_id JOIN sessions s ON s.id = i.session_id "
                                 "JOIN problems p ON p.hash = s.problem_hash "
                                 "WHERE r.timing_json IS NOT NULL AND json_valid(r.timing_json) ORDER BY r.id");
        while (select.step()) {
            const auto timing = timingColumn(nlohmann::json::parse(select.text(1), nullptr, false));
            if (!timing || timing->cases.empty())
                continue;
            auto sizes = sizeResultsOf(*timing);
            nameSizes(sizes, nlohmann::json::parse(select.text(2), nullptr, false));
            for (auto& size : sizes) { // schema v7's columns do not exist yet at v4
                size.pctOfSol.reset();
                size.solBound.reset();
            }
            rows.push_back({ select.integer(0), std::move(sizes) });
        }
    }
    auto headline = db.prepare("UPDATE results SET median_us = ?2, p20_us = ?3, p80_us = ?4, cv = ?5, gbps = ?6, "
                               "pct_of_copy = ?7 WHERE id = ?1");
    for (const auto& row : rows) {
        insertSizeResults(db, row.resultId, row.sizes);
        if (row.sizes.size() < 2)
            continue; // one size: the row already is that size's
        const auto& first = row.sizes.front();
        headline.bind(1, row.resultId).bind(2, first.medianUs).bind(3, first.p20Us).bind(4, first.p80Us);
        headline.bind(5, first.cv).bind(6, first.gbps).bind(7, first.pctOfCopy).run();
        headline.reset();
    }
}

} // namespace kl::store
