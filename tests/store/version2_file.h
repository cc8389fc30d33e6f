#pragma once
// Version-2 files for the migration and import tests: the rows a current store holds, laid out
// as version 2 stored them (the version-2 DDL, every version-2 column, nothing added later).
#include "core/store/schema.h"
#include "raw_sqlite.h"

#include <string>
#include <vector>

namespace kl::store::testing {

// The lines of RawDb::rows for a one-column query.
inline std::vector<std::string> lines(const std::string& rows)
{
    std::vector<std::string> out;
    std::string::size_type start = 0;
    for (auto end = rows.find('\n'); end != std::string::npos; start = end + 1, end = rows.find('\n', start))
        out.push_back(rows.substr(start, end - start));
    return out;
}

inline std::vector<std::string> tableNames(RawDb& raw)
{
    return lines(raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"));
}

// "a, b, c": the columns of `table` in the file's own schema.
inline std::string columnList(RawDb& raw, const std::string& table)
{
    return raw.text("SELECT group_concat(name, ', ') FROM pragma_table_info('" + table + "', 'main')");
}

// Writes a new version-2 file at `to` with every row of `from` (a closed current store or export).
inline void writeVersion2Copy(const std::string& from, const std::string& to)
{
    RawDb raw(to);
    raw.exec(std::string(kSchemaV2));
    raw.exec("ATTACH DATABASE '" + from + "' AS current");
    for (const auto& table : tableNames(raw)) {
        const auto columns = columnList(raw, table);
        raw.exec("INSERT INTO main." + table + " (" + columns + ") SELECT " + columns + " FROM current." + table);
    }
    raw.exec("DETACH DATABASE current");
    raw.exec("PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = 2");
}

// Every row of every table, in the columns `columns` names per table (a version-2 file's own),
// sorted: equal dumps mean the same rows.
inline std::string dumpRows(RawDb& raw, const std::vector<std::pair<std::string, std::string>>& columns)
{
    std::string out;
    for (const auto& [table, list] : columns)
        out += "[" + table + "]\n" + raw.rows("SELECT " + list + " FROM " + table + " ORDER BY " + list);
    return out;
}

inline std::vector<std::pair<std::string, std::string>> tableColumns(RawDb& raw)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& table : tableNames(raw))
        out.emplace_back(table, columnList(raw, table));
    return out;
}

} // namespace kl::store::testing
