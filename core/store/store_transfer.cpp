// Moving a session between stores: export to one self-contained SQLite file, import from one.
#include "core/store/schema.h"
#include "core/store/session_copy.h"
#include "core/store/store.h"
#include "core/store/store_impl.h"

#include <unistd.h>

#include <map>
#include <system_error>

namespace kl::store {

void Store::exportSession(std::int64_t sessionId, const std::filesystem::path& file) const
{
    m_impl->requireSession(sessionId);
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
            copySession(m_impl->db, sessionId, out, "store.export-failed");
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
    Database copy({}, Database::Mode::Memory);
    std::int64_t sourceSession = 0;
    try {
        {
            Database source(file, Database::Mode::ReadOnly);
            copy.loadFrom(source);
        }
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

    Transaction transaction(m_impl->db);
    std::int64_t sessionId = 0;
    try {
        sessionId = copySession(copy, sourceSession, m_impl->db, "store.import-malformed");
    } catch (const Error& error) {
        Error mapped = asImportError(error);
        throw Error(mapped.category(), file.string(), mapped.where(), mapped.message());
    }
    transaction.commit();
    return sessionId;
}

} // namespace kl::store
