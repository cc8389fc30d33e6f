#pragma once
// Plain SQLite access for the tests: to build old-version files, to damage files on purpose,
// and to look at what the store wrote behind its API.
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kl::store::testing {

class RawDb {
public:
    explicit RawDb(const std::string& path)
    {
        if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
            throw std::runtime_error("cannot open " + path);
    }
    RawDb(const RawDb&) = delete;
    RawDb& operator=(const RawDb&) = delete;
    ~RawDb() { sqlite3_close_v2(m_db); }

    void exec(const std::string& sql)
    {
        char* error = nullptr;
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
            std::string message = error ? error : "?";
            sqlite3_free(error);
            throw std::runtime_error(message + " in: " + sql.substr(0, 200));
        }
    }

    // The first column of the first row, as text ("" when there is no row).
    std::string text(const std::string& sql)
    {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string(sqlite3_errmsg(m_db)) + " in: " + sql);
        std::string value;
        if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0))
            value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        sqlite3_finalize(stmt);
        return value;
    }

    std::int64_t integer(const std::string& sql)
    {
        const std::string value = text(sql);
        return value.empty() ? 0 : std::stoll(value);
    }

    // Every row, columns separated by '|', rows by '\n'.
    std::string rows(const std::string& sql)
    {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string(sqlite3_errmsg(m_db)) + " in: " + sql);
        std::string out;
        while (sqlite3_step(stmt) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
                const auto* value = sqlite3_column_text(stmt, c);
                out += (c ? "|" : "") + std::string(value ? reinterpret_cast<const char*>(value) : "NULL");
            }
            out += "\n";
        }
        sqlite3_finalize(stmt);
        return out;
    }

private:
    sqlite3* m_db = nullptr;
};

} // namespace kl::store::testing
