#include "core/store/sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace kl::store {

std::string sqliteCategory(int code)
{
    switch (code & 0xff) {
    case SQLITE_NOTADB:
        return "store.not-a-database";
    case SQLITE_CORRUPT:
        return "store.corrupt";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "store.busy";
    case SQLITE_FULL:
        return "store.disk-full";
    case SQLITE_IOERR:
        return "store.io";
    case SQLITE_READONLY:
        return "store.read-only";
    case SQLITE_CONSTRAINT:
        return "store.constraint";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return "store.open-failed";
    default:
        return "store.sql";
    }
}

namespace {
[[noreturn]] void throwSqlite(sqlite3* db, int code, const std::string& file, std::string_view what)
{
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    if (!what.empty())
        message = std::string(what) + ": " + message;
    throw Error(sqliteCategory(code), file, {}, message);
}
// file:PATH?immutable=1 with PATH percent-encoded (a '?' or '#' in a name is not a URI part).
std::string immutableUri(const std::filesystem::path& path)
{
    static const char* hex = "0123456789ABCDEF";
    std::string uri = "file:";
    for (unsigned char c : std::filesystem::absolute(path).string()) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '-'
            || c == '_' || c == '.' || c == '~') {
            uri += static_cast<char>(c);
        } else {
            uri += '%';
            uri += hex[c >> 4];
            uri += hex[c & 15];
        }
    }
    return uri + "?immutable=1";
}
} // namespace

// --- Statement ---

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt, std::string file, bool owned)
    : m_db(db)
    , m_stmt(stmt)
    , m_file(std::move(file))
    , m_owned(owned)
{
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db)
    , m_stmt(std::exchange(other.m_stmt, nullptr))
    , m_file(std::move(other.m_file))
    , m_owned(other.m_owned)
{
}

Statement::~Statement()
{
    if (!m_stmt)
        return;
    if (m_owned) {
        sqlite3_finalize(m_stmt);
    } else {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }
}

void Statement::fail(int code) const
{
    throwSqlite(m_db, code, m_file, sqlite3_sql(m_stmt) ? std::string_view(sqlite3_sql(m_stmt)).substr(0, 60) : "");
}

Statement& Statement::bind(int index, std::int64_t value)
{
    if (int rc = sqlite3_bind_int64(m_stmt, index, value); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bind(int index, double value)
{
    if (int rc = sqlite3_bind_double(m_stmt, index, value); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text)
{
    if (int rc = sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        rc != SQLITE_OK)
        fail(rc);
    return *this;
}

Statement& Statement::bind(int index, std::optional<double> value)
{
    return value ? bind(index, *value) : bindNull(index);
}

Statement& Statement::bind(int index, std::optional<std::int64_t> value)
{
    return value ? bind(index, *value) : bindNull(index);
}

Statement& Statement::bindNull(int index)
{
    if (int rc = sqlite3_bind_null(m_stmt, index); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

bool Statement::step()
{
    int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    fail(rc);
}

void Statement::run()
{
    while (step()) { }
}

void Statement::reset() { sqlite3_reset(m_stmt); }

bool Statement::isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(m_stmt, column); }

double Statement::real(int column) const { return sqlite3_column_double(m_stmt, column); }

std::optional<double> Statement::optionalReal(int column) const
{
    if (isNull(column))
        return std::nullopt;
    return real(column);
}

std::optional<std::int64_t> Statement::optionalInteger(int column) const
{
    if (isNull(column))
        return std::nullopt;
    return integer(column);
}

std::string Statement::text(int column) const
{
    const auto* data = sqlite3_column_text(m_stmt, column);
    if (!data)
        return {};
    return std::string(
        reinterpret_cast<const char*>(data), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
}

int Statement::columnCount() const { return sqlite3_column_count(m_stmt); }

std::string Statement::columnName(int column) const
{
    const char* name = sqlite3_column_name(m_stmt, column);
    return name ? name : "";
}

// --- Database ---

Database::Database(const std::filesystem::path& path, Mode mode)
    : m_file(mode == Mode::Memory ? std::string(":memory:") : path.string())
{
    if (mode != Mode::Memory) {
        // A FIFO would block the open for ever, a device would be read as pages: only plain files.
        std::error_code error;
        const auto status = std::filesystem::status(path, error);
        if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
            throw Error("store.not-a-file", m_file, {}, "not a regular file (a folder, device, FIFO or socket)");
    }
    int flags = SQLITE_OPEN_NOMUTEX;
    switch (mode) {
    case Mode::ReadWrite:
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        break;
    case Mode::ReadOnly:
        flags |= SQLITE_OPEN_READONLY;
        break;
    case Mode::ReadOnlyImmutable:
        flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
        break;
    case Mode::Memory:
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY;
        break;
    }
    const std::string name = mode == Mode::ReadOnlyImmutable ? immutableUri(path) : m_file;
    int rc = sqlite3_open_v2(name.c_str(), &m_db, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        throw Error(sqliteCategory(rc) == "store.sql" ? "store.open-failed" : sqliteCategory(rc), m_file, {},
            "cannot open: " + message);
    }
    sqlite3_extended_result_codes(m_db, 1);
    // Another writer (the GUI beside the CLI) holds the lock briefly; wait rather than fail.
    sqlite3_busy_timeout(m_db, 5000);
    // Files may come from elsewhere (imports): refuse schema tricks and side-effecting functions
    // hidden in views or triggers.
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
}

Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr))
    , m_file(std::move(other.m_file))
    , m_cache(std::move(other.m_cache))
{
}

Database::~Database()
{
    for (auto& [sql, stmt] : m_cache)
        sqlite3_finalize(stmt);
    if (m_db)
        sqlite3_close_v2(m_db);
}

void Database::fail(int code, std::string_view what) const { throwSqlite(m_db, code, m_file, what); }

void Database::exec(std::string_view sql)
{
    std::string text(sql);
    char* error = nullptr;
    int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        std::string message = error ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        throw Error(sqliteCategory(rc), m_file, {}, message);
    }
}

Statement Database::prepare(std::string_view sql)
{
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK)
        fail(rc, sql.substr(0, 60));
    return Statement(m_db, stmt, m_file, true);
}

Statement Database::cached(const std::string& sql)
{
    auto it = m_cache.find(sql);
    if (it == m_cache.end()) {
        sqlite3_stmt* stmt = nullptr;
        int rc = sqlite3_prepare_v3(
            m_db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
        if (rc != SQLITE_OK)
            fail(rc, std::string_view(sql).substr(0, 60));
        it = m_cache.emplace(sql, stmt).first;
    }
    return Statement(m_db, it->second, m_file, false);
}

void Database::loadFrom(Database& source)
{
    sqlite3_backup* backup = sqlite3_backup_init(m_db, "main", source.m_db, "main");
    if (!backup)
        fail(sqlite3_errcode(m_db), "copy");
    sqlite3_backup_step(backup, -1);
    int rc = sqlite3_backup_finish(backup);
    if (rc != SQLITE_OK)
        throw Error(sqliteCategory(rc), source.m_file, {}, std::string("cannot read: ") + sqlite3_errstr(rc));
}

std::int64_t Database::lastInsertId() const { return sqlite3_last_insert_rowid(m_db); }

int Database::changes() const { return sqlite3_changes(m_db); }

std::int64_t Database::pragmaInteger(std::string_view pragma)
{
    Statement statement = prepare("PRAGMA " + std::string(pragma));
    if (!statement.step())
        return 0;
    return statement.integer(0);
}

bool Database::inTransaction() const { return sqlite3_get_autocommit(m_db) == 0; }

// --- Transaction ---

Transaction::Transaction(Database& db, Kind kind)
    : m_db(db)
{
    m_db.exec(kind == Kind::Write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction()
{
    if (m_open && m_db.inTransaction())
        sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit()
{
    m_db.exec("COMMIT");
    m_open = false;
}

} // namespace kl::store
