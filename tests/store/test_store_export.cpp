// Export and import safety: an export never replaces the store it reads (by filesystem identity:
// the same name, a symlink, a hard link, its -wal), nothing that is not a plain file, and no
// existing file unless asked; an import blames a fault of the target store on the target, and
// refuses a file whose number fields hold text, NaN or infinities, naming the field.
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <chrono>
#include <filesystem>
#include <sys/stat.h>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

std::int64_t recordSession(Store& store, int iterations)
{
    SessionRecord session;
    session.problemHash = store.addProblem(fx::problem());
    session.device = "NVIDIA H200 #0";
    session.proposer = "tuner";
    session.startedMs = 1700000000000;
    const auto id = store.createSession(session);
    for (int i = 0; i < iterations; ++i) {
        const auto ref = store.beginIteration(id, store.addCandidate(id, fx::candidate(i)));
        store.recordResult(ref, fx::passedResult(i));
        store.recordExchange(ref, fx::exchange(i));
        store.finishIteration(ref);
    }
    return id;
}

std::string contents(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    return file.open(QIODevice::ReadOnly) ? file.readAll().toStdString() : std::string("(unreadable)");
}

// The error `action` throws (category "no error" when it throws none).
template <typename Action> kl::Error errorOf(Action&& action)
{
    try {
        action();
    } catch (const kl::Error& error) {
        return error;
    }
    return kl::Error("no error", "", "", "");
}

} // namespace

class TestStoreExport : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    fx::FreshPaths freshPath { m_dir };

private slots:
    void anExportNeverReplacesTheStoreItReads()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto first = recordSession(store, 2);
        recordSession(store, 3);
        const auto link = freshPath("symlink");
        std::filesystem::create_symlink(path, link);
        const auto hard = freshPath("hardlink");
        std::filesystem::create_hard_link(path, hard);
        const auto relative = std::filesystem::path(path).parent_path() / "." / std::filesystem::path(path).filename();
        for (const auto& target : { path, relative.string(), link, hard, path + "-wal" }) {
            for (const bool overwrite : { false, true }) {
                KL_COMPARE_TEXT(
                    fx::errorCategory([&] { store.exportSession(first, target, { .overwrite = overwrite }); }),
                    "store.export-onto-source");
            }
        }
        QCOMPARE(store.listSessions().size(), std::size_t(2)); // was one after "export S --db S"
        QVERIFY(store.checkIntegrity().empty());
        auto reopened = Store::open(path);
        QCOMPARE(reopened.listSessions().size(), std::size_t(2));
        QCOMPARE(reopened.listIterations(first).size(), std::size_t(2));
    }

    void anExportWritesOnlyPlainFiles()
    {
        auto store = Store::open(freshPath());
        const auto session = recordSession(store, 1);
        const auto fifo = freshPath("fifo");
        QVERIFY(::mkfifo(fifo.c_str(), 0600) == 0);
        const auto folder = freshPath("folder");
        std::filesystem::create_directory(folder);
        std::vector<std::string> targets { fifo, folder };
        if (std::filesystem::is_character_file("/dev/full"))
            targets.push_back("/dev/full");
        const auto start = std::chrono::steady_clock::now();
        for (const auto& target : targets) {
            KL_COMPARE_TEXT(fx::errorCategory([&] { store.exportSession(session, target, { .overwrite = true }); }),
                "store.export-not-a-file");
        }
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(2)); // never blocks on the FIFO
        QVERIFY(std::filesystem::is_fifo(fifo));
        QVERIFY(std::filesystem::is_directory(folder));
        if (std::filesystem::exists("/dev/full"))
            QVERIFY(std::filesystem::is_character_file("/dev/full")); // not replaced by a regular file
        // A FIFO given as a store or an import file is refused at once too.
        KL_COMPARE_TEXT(fx::errorCategory([&] { Store::open(fifo, { .readOnly = true }); }), "store.not-a-file");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.importSession(fifo); }), "store.import-not-a-file");
    }

    void anExistingFileIsReplacedOnlyWhenAsked()
    {
        auto store = Store::open(freshPath());
        const auto session = recordSession(store, 1);
        const auto notes = freshPath("notes");
        {
            QFile file(QString::fromStdString(notes));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("an engineer's notes");
        }
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.exportSession(session, notes); }), "store.export-exists");
        KL_COMPARE_TEXT(contents(notes), "an engineer's notes");
        store.exportSession(session, notes, { .overwrite = true });
        auto check = Store::open(freshPath());
        QVERIFY(check.importSession(notes) > 0);
    }

    void aFaultOfTheTargetIsBlamedOnTheTarget()
    {
        auto source = Store::open(freshPath());
        const auto file = freshPath("export");
        source.exportSession(recordSession(source, 2), file);

        // A store opened read-only cannot take an import: the store says so, not the file.
        const auto readOnlyPath = freshPath();
        Store::open(readOnlyPath);
        auto readOnly = Store::open(readOnlyPath, { .readOnly = true });
        auto error = errorOf([&] { readOnly.importSession(file); });
        KL_COMPARE_TEXT(error.category(), "store.read-only");
        KL_COMPARE_TEXT(error.file(), readOnlyPath);

        // A damaged store (a table lost): its own error, naming the store.
        const auto damagedPath = freshPath();
        Store::open(damagedPath);
        RawDb(damagedPath).exec("DROP TABLE llm_exchanges");
        auto damaged = Store::open(damagedPath);
        error = errorOf([&] { damaged.importSession(file); });
        QVERIFY2(error.category().rfind("store.import-", 0) != 0, error.category().c_str());
        KL_COMPARE_TEXT(error.file(), damagedPath);
        QVERIFY(damaged.listSessions().empty()); // all or nothing
    }

    void numberFieldsThatAreNotNumbersAreRefused_data()
    {
        QTest::addColumn<QString>("update");
        QTest::addColumn<QString>("field");
        QTest::newRow("text date") << "UPDATE sessions SET started_ms = 'yesterday'"
                                   << "started_ms";
        QTest::newRow("fractional date") << "UPDATE sessions SET started_ms = 1.5"
                                         << "started_ms";
        QTest::newRow("negative date") << "UPDATE iterations SET ended_ms = -5 WHERE idx = 2"
                                       << "ended_ms";
        QTest::newRow("NaN median") << "UPDATE results SET median_us = 'NaN'"
                                    << "median_us";
        QTest::newRow("infinite speedup") << "UPDATE results SET speedup = 1e999"
                                          << "speedup";
        QTest::newRow("text metric") << "UPDATE metrics SET value = 'fast'"
                                     << "value";
        QTest::newRow("text size figure") << "UPDATE size_results SET p80_us = 'n/a'"
                                          << "p80_us";
        QTest::newRow("text latency") << "UPDATE llm_exchanges SET latency_ms = 'slow'"
                                      << "latency_ms";
    }

    void numberFieldsThatAreNotNumbersAreRefused()
    {
        QFETCH(QString, update);
        QFETCH(QString, field);
        auto source = Store::open(freshPath());
        const auto file = freshPath("export");
        source.exportSession(recordSession(source, 2), file);
        RawDb(file).exec(update.toStdString());

        auto target = Store::open(freshPath());
        const auto error = errorOf([&] { target.importSession(file); });
        KL_COMPARE_TEXT(error.category(), "store.import-bad-value");
        KL_COMPARE_TEXT(error.file(), file);
        QVERIFY2(error.where().find(field.toStdString()) != std::string::npos, error.where().c_str());
        QVERIFY2(error.message().find(field.toStdString()) != std::string::npos, error.message().c_str());
        QVERIFY(target.listSessions().empty());
    }
};

QTEST_GUILESS_MAIN(TestStoreExport)
#include "test_store_export.moc"
