// Moving a session between stores: export to one self-contained SQLite file, import from one.
#include "core/store/schema.h"
#include "core/store/session_copy.h"
#include "core/store/store.h"
#include "core/store/store_impl.h"

#include <unistd.h>

#include <map>
#include <system_error>

namespace kl::store {

// The export must never replace the store it reads (or a file beside it that SQLite owns), nor
// anything that is not a plain file, nor an existing file the engineer did not offer.
void checkExportTarget(const std::filesystem::path& store, const std::filesystem::path& file, bool overwrite)
{
    std::error_code error;
    const auto status = std::filesystem::status(file, error);
    if (error || !std::filesystem::exists(status))
        return; // nothing there yet (a missing folder fails when the file is written)
    for (const char* suffix : { "", "-wal", "-shm", "-journal" }) {
        auto companion = store;
        companion += suffix;
        if (std::filesystem::equivalent(file, companion, error) && !error)
            throw Error("store.export-onto-source", file.string(), {},
                std::string("the export file is the store being read")
                    + (*suffix ? std::string(" (its ") + (suffix + 1) + " file)" : "") + "; export to another file");
    }
    if (!std::filesystem::is_regular_file(status))
        throw Error("store.export-not-a-file", file.string(), {},
            "not a regular file (a folder, device, FIFO or socket); export to a plain file");
    if (!overwrite)
        throw Error("store.export-exists", file.string(), {}, "the file exists; pass --force to replace it");
}

namespace {
// A store that fails SQLite's integrity check gives no session away and takes none in: an export would
// carry the damage elsewhere, an import would add rows beside pages that are already wrong. Throws
// "store.corrupt" naming the store (a page too damaged to read fails in the check with that category too).
void requireSound(Database& db, const std::filesystem::path& store, const std::string& refused)
{
    auto check = db.prepare("PRAGMA integrity_check(8)");
    std::string problems;
    while (check.step())
        if (check.text(0) != "ok")
            problems += (problems.empty() ? "" : "; ") + check.text(0);
    if (!problems.empty())
        throw Error("store.corrupt", store.string(), {},
            "the store fails SQLite's integrity check (" + problems.substr(0, 600) + "): " + refused
                + "; recover it first (sqlite3 FILE .recover)");
}
} // namespace

void Store::exportSession(std::int64_t sessionId, const std::filesystem::path& file, ExportOptions options) const
{
    m_impl->requireSession(sessionId);
    requireSound(m_impl->db, m_impl->path, "nothing was exported");
    checkExportTarget(m_impl->path, file, options.overwrite);
    // Written beside the destination and renamed over it at the end: a reader never sees half a file.
    auto partial = file;
    partial += ".part-" + std::to_string(::getpid());
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    try {
        {
            Database out(partial, Database::Mode::ReadWrite);
            out.exec("PRAGMA journal_mode = DELETE"); // one file, no WAL beside it
            prepareSchema(out, "the export file");
            out.exec("PRAGMA foreign_keys = ON");
            Transaction snapshot(m_impl->db, Transaction::Kind::Read);
            Transaction write(out);
            copySession(m_impl->db, sessionId, out, "store.export-failed", "store.export-failed");
            write.commit();
            snapshot.commit();
        }
        std::filesystem::rename(partial, file);
    } catch (const Error& error) {
        std::filesystem::remove(partial, ignored);
        throw Error(
            "store.export-failed", file.string(), error.where(), "cannot export the session: " + error.message());
    } catch (const std::filesystem::filesystem_error& error) {
        std::filesystem::remove(partial, ignored);
        throw Error(
            "store.export-failed", file.string(), {}, std::string("cannot export the session: ") + error.what());
    }
}

namespace {
// The file's own problems, in the words of an import.
Error asImportError(const Error& error)
{
    static const std::map<std::string, std::string> categories {
        { "store.not-a-database", "store.import-not-a-database" },
        { "store.not-a-file", "store.import-not-a-file" },
        { "store.not-kernelloop", "store.import-not-kernelloop" },
        { "store.newer-version", "store.import-newer-version" },
        { "store.corrupt", "store.import-corrupt" },
        { "store.migration-failed", "store.import-malformed" },
        { "store.constraint", "store.import-malformed" },
        { "store.sql", "store.import-malformed" },
    };
    auto it = categories.find(error.category());
    if (it == categories.end())
        return error;
    return Error(it->second, error.file(), error.where(), error.message());
}
} // namespace

std::int64_t Store::importSession(const std::filesystem::path& file)
{
    // Read into memory and migrate there: the user's file is never changed, and a damaged one
    // fails here, before the store is touched.
    std::error_code statError;
    if (std::filesystem::is_directory(file, statError))
        throw Error("store.import-not-a-file", file.string(), {},
            "a folder, not an exported session file (kernelloop-cli export writes one file per session)");
    requireSound(m_impl->db, m_impl->path, "nothing was imported");
    Database copy({}, Database::Mode::Memory);
    std::int64_t sourceSession = 0;
    try {
        {
            Database source = readOnlyConnection(file);
            copy.loadFrom(source);
        }
        copy.setFileName(file.string()); // a bad row names the import file
        const int version = schemaVersionOf(copy, "the import file");
        if (version == 0)
            throw Error("store.import-malformed", file.string(), {}, "the import file holds no session");
        auto check = copy.prepare("PRAGMA integrity_check");
        while (check.step()) {
            if (check.text(0) != "ok")
                throw Error("store.import-corrupt", file.string(), {}, "the import file is damaged: " + check.text(0));
        }
        prepareSchema(copy, "the import file");
        auto sessions = copy.prepare("SELECT id FROM sessions ORDER BY id");
        int count = 0;
        while (sessions.step()) {
            sourceSession = sessions.integer(0);
            ++count;
        }
        if (count != 1)
            throw Error("store.import-malformed", file.string(), {},
                "the import file holds " + std::to_string(count) + " sessions; an export holds exactly one");
    } catch (const Error& error) {
        Error mapped = asImportError(error);
        if (error.category() == "store.not-a-database")
            throw Error(
                "store.import-not-a-database", file.string(), {}, "not a KernelLoop export: " + error.message());
        throw Error(mapped.category(), file.string(), mapped.where(), mapped.message());
    }

    // From here a fault is the store's own (read-only, disk full, damaged, busy) unless it names the
    // import file (its copy in memory): a bad row of the file.
    std::int64_t sessionId = 0;
    try {
        Transaction transaction(m_impl->db);
        sessionId = copySession(copy, sourceSession, m_impl->db, "store.import-malformed", "store.import-bad-value");
        transaction.commit();
    } catch (const Error& error) {
        if (error.file() == m_impl->db.file() && error.file() != copy.file()) {
            const auto& target = m_impl->path.string();
            throw Error(error.category(), target, error.where(),
                "the store (not the import file) failed while importing: " + error.message());
        }
        Error mapped = asImportError(error);
        throw Error(mapped.category(), file.string(), mapped.where(), mapped.message());
    }
    return sessionId;
}

} // namespace kl::store
