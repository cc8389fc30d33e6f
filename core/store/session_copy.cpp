#include "core/store/session_copy.h"

#include "core/model/hash.h"
#include "core/store/sqlite.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kl::store {

namespace {

enum class Rows {
    Renumbered, // the "id" column gets a new value in the target
    Kept, // no id of its own (metrics)
    Shared, // content-addressed: kept when the target already has it
};

struct Reference {
    std::string_view column;
    std::string_view table; // whose renumbered ids the column holds
};

struct TableCopy {
    std::string_view table;
    std::string_view select; // ?1 is the session id; parents before children
    Rows rows;
    std::vector<Reference> references;
};

// In dependency order.
const std::vector<TableCopy>& tables()
{
    static const std::vector<TableCopy> list {
        { "problems", "SELECT p.* FROM problems p JOIN sessions s ON s.problem_hash = p.hash WHERE s.id = ?1",
            Rows::Shared, {} },
        { "sessions", "SELECT * FROM sessions WHERE id = ?1", Rows::Renumbered, {} },
        { "sources", "SELECT * FROM sources WHERE hash IN (SELECT source_hash FROM candidates WHERE session_id = ?1)",
            Rows::Shared, {} },
        { "candidates", "SELECT * FROM candidates WHERE session_id = ?1 ORDER BY id", Rows::Renumbered,
            { { "session_id", "sessions" }, { "parent_id", "candidates" } } },
        { "iterations", "SELECT * FROM iterations WHERE session_id = ?1 ORDER BY idx", Rows::Renumbered,
            { { "session_id", "sessions" }, { "candidate_id", "candidates" } } },
        { "results",
            "SELECT r.* FROM results r JOIN iterations i ON i.id = r.iteration_id WHERE i.session_id = ?1 ORDER BY "
            "r.id",
            Rows::Renumbered, { { "iteration_id", "iterations" } } },
        { "metrics",
            "SELECT m.* FROM metrics m JOIN results r ON r.id = m.result_id JOIN iterations i ON i.id = r.iteration_id "
            "WHERE i.session_id = ?1",
            Rows::Kept, { { "result_id", "results" } } },
        { "size_results",
            "SELECT z.* FROM size_results z JOIN results r ON r.id = z.result_id JOIN iterations i ON i.id = "
            "r.iteration_id WHERE i.session_id = ?1",
            Rows::Kept, { { "result_id", "results" } } },
        { "findings",
            "SELECT f.* FROM findings f JOIN results r ON r.id = f.result_id JOIN iterations i ON i.id = "
            "r.iteration_id "
            "WHERE i.session_id = ?1 ORDER BY f.id",
            Rows::Renumbered, { { "result_id", "results" } } },
        { "decisions",
            "SELECT d.* FROM decisions d JOIN iterations i ON i.id = d.iteration_id WHERE i.session_id = ?1 "
            "ORDER BY d.id",
            Rows::Renumbered, { { "iteration_id", "iterations" }, { "replacement_candidate_id", "candidates" } } },
        { "llm_exchanges",
            "SELECT x.* FROM llm_exchanges x JOIN iterations i ON i.id = x.iteration_id WHERE i.session_id = ?1 "
            "ORDER BY x.id",
            Rows::Renumbered, { { "iteration_id", "iterations" } } },
        { "evaluation_cache",
            "SELECT e.* FROM evaluation_cache e JOIN results r ON r.id = e.result_id "
            "JOIN iterations i ON i.id = r.iteration_id WHERE i.session_id = ?1",
            Rows::Shared, { { "result_id", "results" } } },
    };
    return list;
}

using IdMap = std::unordered_map<std::int64_t, std::int64_t>;

class Copier {
public:
    Copier(Database& from, Database& to, std::string category, std::string valueCategory)
        : m_from(from)
        , m_to(to)
        , m_category(std::move(category))
        , m_valueCategory(std::move(valueCategory))
    {
    }

    void copy(const TableCopy& spec, std::int64_t sessionId)
    {
        Statement select = m_from.prepare(spec.select);
        select.bind(1, sessionId);
        sqlite3_stmt* row = select.handle();
        const int columns = select.columnCount();

        // What each column of the source row becomes in the insert.
        struct Column {
            std::string name;
            int parameter = 0; // 0: not inserted (a renumbered id)
            const IdMap* ids = nullptr;
            bool json = false;
            Kind kind = Kind::Any;
        };
        const auto kinds = columnKinds(spec.table);
        std::vector<Column> plan(static_cast<std::size_t>(columns));
        std::string names;
        std::string values;
        int idColumn = -1;
        int parameters = 0;
        for (int c = 0; c < columns; ++c) {
            auto& column = plan[static_cast<std::size_t>(c)];
            column.name = select.columnName(c);
            if (spec.rows == Rows::Renumbered && column.name == "id") {
                idColumn = c;
                continue;
            }
            column.parameter = ++parameters;
            column.json = column.name.size() > 5 && column.name.ends_with("_json");
            if (auto it = kinds.find(column.name); it != kinds.end())
                column.kind = it->second;
            for (const auto& reference : spec.references) {
                if (reference.column == column.name)
                    column.ids = &m_ids[std::string(reference.table)];
            }
            names += (names.empty() ? "" : ", ") + column.name;
            values += (values.empty() ? "?" : ", ?");
        }
        Statement insert = m_to.prepare(std::string(spec.rows == Rows::Shared ? "INSERT OR IGNORE" : "INSERT")
            + " INTO " + std::string(spec.table) + " (" + names + ") VALUES (" + values + ")");
        IdMap& ids = m_ids[std::string(spec.table)];

        while (select.step()) {
            const std::string where = std::string(spec.table)
                + (idColumn >= 0 ? " row " + std::to_string(select.integer(idColumn)) : std::string());
            checkContentHash(spec.table, select, where);
            for (int c = 0; c < columns; ++c) {
                const auto& column = plan[static_cast<std::size_t>(c)];
                if (column.parameter == 0)
                    continue;
                if (column.ids && !select.isNull(c)) {
                    auto it = column.ids->find(select.integer(c));
                    if (it == column.ids->end())
                        bad(where,
                            column.name + " refers to row " + std::to_string(select.integer(c))
                                + ", which is not part of the session");
                    insert.bind(column.parameter, it->second);
                    continue;
                }
                if (column.json && !select.isNull(c) && !nlohmann::json::accept(select.text(c)))
                    bad(where, column.name + " is not valid JSON");
                checkValue(column.kind, column.name, row, c, where);
                sqlite3_bind_value(insert.handle(), column.parameter, sqlite3_column_value(row, c));
            }
            try {
                insert.run();
            } catch (const Error& error) {
                if (error.category() == "store.constraint")
                    bad(where, error.message());
                throw;
            }
            insert.reset();
            if (idColumn >= 0)
                ids[select.integer(idColumn)] = m_to.lastInsertId();
        }
    }

    std::int64_t newId(const std::string& table, std::int64_t oldId) { return m_ids[table].at(oldId); }

private:
    enum class Kind { Any, Integer, Real };

    // The declared kind of each of the target table's number columns.
    std::map<std::string, Kind> columnKinds(std::string_view table)
    {
        std::map<std::string, Kind> kinds;
        Statement info = m_to.prepare("PRAGMA table_info(" + std::string(table) + ")");
        while (info.step()) {
            const auto type = info.text(2);
            if (type == "INTEGER")
                kinds[info.text(1)] = Kind::Integer;
            else if (type == "REAL")
                kinds[info.text(1)] = Kind::Real;
        }
        return kinds;
    }

    // SQLite keeps whatever a file holds: text in a number column, or an infinity, would read back
    // as 0 (a 1970 date, "0.00 us"). Such a row is refused, naming its field.
    void checkValue(Kind kind, const std::string& column, sqlite3_stmt* row, int c, const std::string& where)
    {
        if (kind == Kind::Any)
            return;
        const int type = sqlite3_column_type(row, c);
        if (type == SQLITE_NULL)
            return;
        const bool whole = type == SQLITE_INTEGER;
        const bool number = whole || (type == SQLITE_FLOAT && std::isfinite(sqlite3_column_double(row, c)));
        std::string problem;
        if (kind == Kind::Integer && !whole)
            problem = "is not a whole number";
        else if (kind == Kind::Real && !number)
            problem = "is not a finite number";
        else if (whole && column.ends_with("_ms") && sqlite3_column_int64(row, c) < 0)
            problem = "is a time before 1970";
        if (problem.empty())
            return;
        const auto* text = sqlite3_column_text(row, c);
        std::string shown = text ? reinterpret_cast<const char*>(text) : "";
        if (shown.size() > 40)
            shown = shown.substr(0, 40) + "...";
        throw Error(m_valueCategory, m_from.file(), where + " " + column, column + " (\"" + shown + "\") " + problem);
    }

    // Shared rows are trusted by their hash alone, so an imported one must really have it.
    void checkContentHash(std::string_view table, const Statement& row, const std::string& where)
    {
        std::map<std::string, std::string> fields;
        if (table != "problems" && table != "sources")
            return;
        for (int c = 0; c < row.columnCount(); ++c)
            fields[row.columnName(c)] = row.text(c);
        const std::string actual = table == "sources"
            ? contentHash(fields["text"])
            : contentHash({ fields["json"], fields["reference_source"], fields["baseline_source"] });
        if (actual != fields["hash"])
            bad(where + " " + fields["hash"], "its content does not match its hash");
    }

    [[noreturn]] void bad(const std::string& where, const std::string& message)
    {
        throw Error(m_category, m_from.file(), where, message);
    }

    Database& m_from;
    Database& m_to;
    std::string m_category;
    std::string m_valueCategory;
    std::map<std::string, IdMap> m_ids;
};

} // namespace

std::int64_t copySession(Database& from, std::int64_t sessionId, Database& to, const std::string& badRowCategory,
    const std::string& badValueCategory)
{
    Copier copier(from, to, badRowCategory, badValueCategory);
    for (const auto& table : tables())
        copier.copy(table, sessionId);
    return copier.newId("sessions", sessionId);
}

} // namespace kl::store
