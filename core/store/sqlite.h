#pragma once
// A thin RAII layer over the sqlite3 C API for the store's own use (no other part includes it):
// a connection with a statement cache, statements with typed binds and reads, and a transaction
// guard that rolls back unless committed. Every SQLite failure becomes a kl::Error "store.*".
#include "core/model/error.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace kl::store {

// The category for an SQLite result code: "store.not-a-database", "store.corrupt", "store.busy",
// "store.disk-full", "store.io", "store.read-only", "store.constraint", "store.open-failed", "store.sql".
std::string sqliteCategory(int code);

class Statement {
public:
    // owned: finalised when destroyed; otherwise (a cached statement) reset and unbound, so that
    // an early return or an exception never leaves a read open.
    Statement(sqlite3* db, sqlite3_stmt* stmt, std::string file, bool owned);
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, std::optional<double> value);
    Statement& bind(int index, std::optional<std::int64_t> value);
    Statement& bindNull(int index);

    // True while there is a row to read; false when done. Throws on error.
    bool step();
    void run(); // step to the end (for writes)
    void reset();

    bool isNull(int column) const;
    std::int64_t integer(int column) const;
    double real(int column) const;
    std::optional<double> optionalReal(int column) const;
    std::optional<std::int64_t> optionalInteger(int column) const;
    std::string text(int column) const;
    int columnCount() const;
    std::string columnName(int column) const;

    sqlite3_stmt* handle() const { return m_stmt; }

private:
    [[noreturn]] void fail(int code) const;
    sqlite3* m_db;
    sqlite3_stmt* m_stmt;
    std::string m_file;
    bool m_owned;
};

class Database {
public:
    // ReadOnlyImmutable: read-only and promised that nobody changes the file meanwhile (no locks, no
    // -shm), for files in folders this process cannot write.
    enum class Mode { ReadWrite, ReadOnly, ReadOnlyImmutable, Memory };
    // Opens (creating when ReadWrite) the file; ":memory:" ignores `path` with Mode::Memory. Throws
    // "store.not-a-file" for anything but a regular file (a FIFO would block the open).
    Database(const std::filesystem::path& path, Mode mode);
    Database(Database&&) noexcept;
    Database& operator=(Database&&) = delete;
    ~Database();

    // Runs one or more statements that return nothing of interest.
    void exec(std::string_view sql);
    // A fresh statement.
    Statement prepare(std::string_view sql);
    // A statement prepared once per connection; reset when the returned handle goes away.
    Statement cached(const std::string& sql);
    // Replaces this database's content with a copy of `source` (SQLite's online backup).
    void loadFrom(Database& source);
    std::int64_t lastInsertId() const;
    int changes() const;
    std::int64_t pragmaInteger(std::string_view pragma);
    bool inTransaction() const;

    const std::string& file() const { return m_file; }
    // The name errors give (an in-memory copy names the file it was copied from).
    void setFileName(std::string name) { m_file = std::move(name); }
    sqlite3* handle() const { return m_db; }
    [[noreturn]] void fail(int code, std::string_view what) const;

private:
    sqlite3* m_db = nullptr;
    std::string m_file;
    std::unordered_map<std::string, sqlite3_stmt*> m_cache;
};

// BEGIN IMMEDIATE (writes) or BEGIN (a consistent read); rolls back when destroyed uncommitted.
class Transaction {
public:
    enum class Kind { Write, Read };
    explicit Transaction(Database& db, Kind kind = Kind::Write);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    void commit();

private:
    Database& m_db;
    bool m_open = true;
};

} // namespace kl::store
