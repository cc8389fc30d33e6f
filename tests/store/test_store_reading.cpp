// Viewing never writes: a read-only store reads a WAL store, an exported .klsession, a file of an
// older schema, a read-only file and a store in a read-only folder, and leaves every byte (and the
// mtime) as it was.
#include "core/model/hash.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"
#include "version3_file.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

struct FileState {
    std::string hash;
    std::filesystem::file_time_type mtime;
    bool operator==(const FileState&) const = default;
};

FileState stateOf(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return { kl::contentHash(file.readAll().toStdString()), std::filesystem::last_write_time(path) };
}

// Two sessions, three iterations each, the second with two main sizes.
void recordStore(const std::string& path)
{
    auto store = Store::open(path);
    fx::recordTunerSessions(
        store, { .sessions = 2, .iterations = 3, .findings = true, .adjust = [](int s, int i, ResultRecord& result) {
                    if (s == 1) {
                        kl::protocol::CaseTiming second;
                        second.label = "4096x4096";
                        second.candidate.medianUs = 20.0 + i;
                        second.candidate.p20Us = 19.0;
                        second.candidate.p80Us = 30.0;
                        second.candidate.minUs = 20.0 + i;
                        second.candidate.meanUs = 20.0 + i;
                        second.speedupVsBaseline = 2.5;
                        result.timing->cases.push_back(second);
                    }
                } });
}

// Everything a viewer reads (history, show, export).
void readEverything(Store& store, std::size_t sessions)
{
    const auto rows = store.listSessions();
    QCOMPARE(rows.size(), sessions);
    for (const auto& row : rows) {
        const auto iterations = store.listIterations(row.session.id);
        QCOMPARE(iterations.size(), std::size_t(3));
        for (const auto& iteration : iterations)
            QVERIFY(store.iteration(row.session.id, iteration.index));
        QVERIFY(!store.sizeResults(row.session.id).empty());
    }
}

} // namespace

class TestStoreReading : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    fx::FreshPaths freshPath { m_dir };
    static Store openReadOnly(const std::string& path) { return Store::open(path, { .readOnly = true }); }

private slots:
    void viewingLeavesTheFilesAsTheyWere()
    {
        const auto path = freshPath();
        recordStore(path);
        const auto exported = freshPath("export");
        Store::open(path).exportSession(1, exported);
        const auto storeBefore = stateOf(path);
        const auto exportBefore = stateOf(exported);
        QVERIFY(!storeBefore.hash.empty() && !exportBefore.hash.empty());
        {
            auto store = openReadOnly(path);
            readEverything(store, 2);
            store.exportSession(2, freshPath("again"));
            auto session = openReadOnly(exported);
            readEverything(session, 1);
            session.exportSession(session.listSessions().at(0).session.id, freshPath("again"));
            KL_COMPARE_TEXT(fx::errorCategory([&] { session.finishSession(1, "finished"); }), "store.read-only");
        }
        QVERIFY(stateOf(path) == storeBefore);
        QVERIFY(stateOf(exported) == exportBefore);
        QVERIFY(!std::filesystem::exists(exported + "-wal")); // the export stays one file
        RawDb raw(exported);
        KL_COMPARE_TEXT(raw.text("PRAGMA journal_mode"), "delete");
    }

    void anOlderSchemaIsReadWithoutMigratingTheFile()
    {
        const auto path = freshPath();
        recordStore(path);
        kl::store::testing::downgradeToVersion3(path);
        const auto before = stateOf(path);
        {
            auto store = openReadOnly(path); // refused before: "needs migrating"
            readEverything(store, 2);
            // The sizes come from the timing JSON, migrated in memory.
            const auto sizes = store.sizeResults(2, 1);
            QCOMPARE(sizes.size(), std::size_t(2));
            QCOMPARE(*sizes[1].p80Us, 30.0);
            KL_COMPARE_TEXT(store.path().string(), path);
        }
        QVERIFY(stateOf(path) == before);
        RawDb raw(path);
        QCOMPARE(raw.integer("PRAGMA user_version"), 3);
    }

    void aReadOnlyFileAndAReadOnlyFolderCanBeRead()
    {
        // The folder and the file are made read-only; as root (who ignores permissions) the
        // reading runs in a child process that drops to an unprivileged user.
        QTemporaryDir outer;
        QVERIFY(::chmod(outer.path().toLocal8Bit().constData(), 0755) == 0);
        const auto folder = outer.filePath(QStringLiteral("readonly")).toStdString();
        std::filesystem::create_directory(folder);
        const auto path = folder + "/store.db";
        recordStore(path);
        const auto exported = folder + "/one.klsession";
        Store::open(path).exportSession(1, exported);
        QVERIFY(!std::filesystem::exists(path + "-wal")); // closed cleanly: a reader needs its own -shm
        QVERIFY(::chmod(path.c_str(), 0444) == 0);
        QVERIFY(::chmod(exported.c_str(), 0444) == 0);
        QVERIFY(::chmod(folder.c_str(), 0555) == 0);
        const auto before = stateOf(path);

        const auto readAll = [&]() -> int {
            try {
                auto store = openReadOnly(path);
                if (store.listSessions().size() != 2 || store.listIterations(1).size() != 3)
                    return 1;
                auto session = openReadOnly(exported);
                if (session.listSessions().size() != 1 || !session.iteration(1, 3))
                    return 1;
                return 0;
            } catch (const kl::Error& error) {
                std::fprintf(stderr, "%s: %s\n", error.category().c_str(), error.message().c_str());
                return 2;
            }
        };
        int outcome = 0;
        if (::geteuid() == 0) {
            const pid_t child = ::fork();
            QVERIFY(child >= 0);
            if (child == 0) {
                if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                    ::_exit(3);
                ::_exit(::access(folder.c_str(), W_OK) == 0 ? 4 : readAll());
            }
            int status = 0;
            QCOMPARE(::waitpid(child, &status, 0), child);
            QVERIFY(WIFEXITED(status));
            outcome = WEXITSTATUS(status);
        } else {
            outcome = readAll();
        }
        ::chmod(folder.c_str(), 0755);
        QCOMPARE(outcome, 0);
        QVERIFY(stateOf(path) == before);
    }
};

QTEST_GUILESS_MAIN(TestStoreReading)
#include "test_store_reading.moc"
