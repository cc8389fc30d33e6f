// The store commands of kernelloop-cli as a user runs them (a real process on real files):
// history, show and export read without writing (an exported .klsession keeps its bytes and
// mtime); --db '' and --session 0 / -1 are errors, not a fallback; export never replaces the
// store it reads, a device or an existing file without --force. A store that fails SQLite's
// integrity check takes no import and gives no export; a folder given to import is categorised.
#include "core/model/hash.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

using namespace kl::store;
namespace fx = kl::store::fixtures;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run cli(const QStringList& arguments, const QString& environmentDb = {}, bool unprivileged = false)
{
    QProcess process;
    // Root ignores file permissions: to meet a read-only folder the child drops to "nobody".
    if (unprivileged && ::geteuid() == 0)
        process.setChildProcessModifier([] {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                ::_exit(97);
        });
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("KERNELLOOP_DB"));
    if (!environmentDb.isEmpty())
        environment.insert(QStringLiteral("KERNELLOOP_DB"), environmentDb);
    process.setProcessEnvironment(environment);
    process.start(QStringLiteral(KL_CLI_PATH), arguments);
    Run run;
    if (!process.waitForFinished(20000)) {
        process.kill();
        process.waitForFinished();
        run.err = QStringLiteral("timed out");
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

std::string fingerprint(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return "(unreadable)";
    const auto mtime = std::filesystem::last_write_time(path.toStdString()).time_since_epoch().count();
    return kl::contentHash(file.readAll().toStdString()) + "@" + std::to_string(mtime);
}

} // namespace

class TestStoreCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_store;
    QString m_export;

    static void expectRefusal(const Run& run, const char* category)
    {
        QVERIFY2(run.exitCode == 2, qPrintable(run.out + run.err));
        QVERIFY2(run.err.contains(QStringLiteral("[%1]").arg(QLatin1String(category))), qPrintable(run.err));
    }

    int sessionsIn(const QString& path)
    {
        return static_cast<int>(Store::open(path.toStdString()).listSessions().size());
    }

private slots:
    void initTestCase()
    {
        m_store = m_dir.filePath(QStringLiteral("store.db"));
        auto store = Store::open(m_store.toStdString());
        fx::recordTunerSessions(store, { .sessions = 2, .iterations = 2 });
        m_export = m_dir.filePath(QStringLiteral("one.klsession"));
        store.exportSession(1, m_export.toStdString());
    }

    void viewingAnExportLeavesItAsItWas()
    {
        const auto before = fingerprint(m_export);
        const QString out = m_dir.filePath(QStringLiteral("copy.klsession"));
        for (const auto& arguments : QList<QStringList> {
                 { QStringLiteral("history"), QStringLiteral("--db"), m_export },
                 { QStringLiteral("history"), QStringLiteral("--sessions"), QStringLiteral("--db"), m_export },
                 { QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--db"), m_export },
                 { QStringLiteral("export"), out, QStringLiteral("--db"), m_export },
                 { QStringLiteral("export-kernel"), QStringLiteral("--iteration"), QStringLiteral("2"),
                     QStringLiteral("--db"), m_export },
             }) {
            const auto run = cli(arguments);
            QVERIFY2(run.exitCode == 0, qPrintable(arguments.join(QLatin1Char(' ')) + QLatin1Char('\n') + run.err));
            QCOMPARE(fingerprint(m_export), before); // was switched to WAL and rewritten
        }
        QVERIFY(!QFile::exists(m_export + QStringLiteral("-wal")));
    }

    void aReadOnlyFolderCanBeViewed()
    {
        QTemporaryDir outer;
        QVERIFY(::chmod(outer.path().toLocal8Bit().constData(), 0755) == 0);
        const auto folder = outer.filePath(QStringLiteral("readonly"));
        QVERIFY(QDir().mkdir(folder));
        const auto exported = folder + QStringLiteral("/one.klsession");
        const auto store = folder + QStringLiteral("/store.db");
        QVERIFY(QFile::copy(m_export, exported));
        QVERIFY(QFile::copy(m_store, store));
        for (const auto& file : { exported, store })
            QVERIFY(::chmod(file.toLocal8Bit().constData(), 0444) == 0);
        QVERIFY(::chmod(folder.toLocal8Bit().constData(), 0555) == 0);
        const auto before = fingerprint(exported);
        const auto sessions
            = cli({ QStringLiteral("history"), QStringLiteral("--sessions"), QStringLiteral("--db"), store }, {}, true);
        const auto show
            = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--db"), exported }, {}, true);
        ::chmod(folder.toLocal8Bit().constData(), 0755);
        QVERIFY2(sessions.exitCode == 0 && sessions.out.count(QStringLiteral("finished")) == 2,
            qPrintable(sessions.out + sessions.err));
        QVERIFY2(show.exitCode == 0 && show.out.startsWith(QStringLiteral("session 1, iteration 2")),
            qPrintable(show.out + show.err));
        QCOMPARE(fingerprint(exported), before);
    }

    void anEmptyDbOrANonPositiveSessionIsAnError()
    {
        // With $KERNELLOOP_DB naming a real store, --db '' must not quietly read it.
        expectRefusal(
            cli({ QStringLiteral("history"), QStringLiteral("--sessions"), QStringLiteral("--db"), QString() },
                m_store),
            "cli.bad-db");
        expectRefusal(
            cli({ QStringLiteral("import"), m_export, QStringLiteral("--db"), QString() }, m_store), "cli.bad-db");
        QCOMPARE(sessionsIn(m_store), 2);
        for (const auto& id : { QStringLiteral("0"), QStringLiteral("-1"), QStringLiteral("x") }) {
            expectRefusal(
                cli({ QStringLiteral("history"), QStringLiteral("--session"), id, QStringLiteral("--db"), m_store }),
                "cli.bad-session");
            expectRefusal(cli({ QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--session"), id,
                              QStringLiteral("--db"), m_store }),
                "cli.bad-session");
        }
        const auto newest = cli({ QStringLiteral("history"), QStringLiteral("--session"), QStringLiteral("1"),
            QStringLiteral("--db"), m_store });
        QVERIFY2(newest.exitCode == 0 && newest.out.startsWith(QStringLiteral("session 1:")), qPrintable(newest.out));
    }

    void aDamagedStoreTakesNothingInAndGivesNothingAway()
    {
        const QString damaged = m_dir.filePath(QStringLiteral("damaged.db"));
        {
            auto store = Store::open(damaged.toStdString());
            fx::recordTunerSessions(store, { .sessions = 1, .iterations = 2 });
        }
        {
            kl::store::testing::RawDb raw(damaged.toStdString());
            // An index whose definition no longer matches its entries: readable, but not sound.
            raw.exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX candidates_session ON "
                     "candidates(parent_id)' WHERE name = 'candidates_session'");
        }
        QVERIFY(kl::store::testing::RawDb(damaged.toStdString()).text("PRAGMA integrity_check") != "ok");
        const auto sessionsBefore = Store::open(damaged.toStdString(), { .readOnly = true }).listSessions().size();
        expectRefusal(cli({ QStringLiteral("import"), m_export, QStringLiteral("--db"), damaged }), "store.corrupt");
        QCOMPARE(Store::open(damaged.toStdString(), { .readOnly = true }).listSessions().size(), sessionsBefore);

        const QString out = m_dir.filePath(QStringLiteral("from-damaged.klsession"));
        expectRefusal(cli({ QStringLiteral("export"), out, QStringLiteral("--db"), damaged }), "store.corrupt");
        QVERIFY(!QFile::exists(out));
    }

    void importingAFolderIsCategorised()
    {
        const QString target = m_dir.filePath(QStringLiteral("folder-target.db"));
        expectRefusal(
            cli({ QStringLiteral("import"), m_dir.path(), QStringLiteral("--db"), target }), "store.import-not-a-file");
    }

    void anExportNeverReplacesTheStoreADeviceOrAnotherFile()
    {
        const auto store = fingerprint(m_store);
        expectRefusal(cli({ QStringLiteral("export"), m_store, QStringLiteral("--session"), QStringLiteral("1"),
                          QStringLiteral("--db"), m_store }),
            "store.export-onto-source");
        expectRefusal(
            cli({ QStringLiteral("export"), m_store, QStringLiteral("--force"), QStringLiteral("--db"), m_store }),
            "store.export-onto-source");
        expectRefusal(
            cli({ QStringLiteral("export-kernel"), QStringLiteral("-o"), m_store, QStringLiteral("--db"), m_store }),
            "store.export-onto-source");
        QCOMPARE(fingerprint(m_store), store);
        QCOMPARE(sessionsIn(m_store), 2); // "export S.db --session 1 --db S.db" left one

        if (std::filesystem::is_character_file("/dev/full")) {
            expectRefusal(cli({ QStringLiteral("export"), QStringLiteral("/dev/full"), QStringLiteral("--force"),
                              QStringLiteral("--db"), m_store }),
                "store.export-not-a-file");
            QVERIFY(std::filesystem::is_character_file("/dev/full"));
        }
        const auto fifo = m_dir.filePath(QStringLiteral("fifo"));
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        expectRefusal(
            cli({ QStringLiteral("export"), fifo, QStringLiteral("--db"), m_store }), "store.export-not-a-file");
        expectRefusal(cli({ QStringLiteral("history"), QStringLiteral("--db"), fifo }), "store.not-a-file");

        const auto notes = m_dir.filePath(QStringLiteral("notes.txt"));
        {
            QFile file(notes);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("keep me");
        }
        expectRefusal(cli({ QStringLiteral("export"), notes, QStringLiteral("--db"), m_store }), "store.export-exists");
        QFile kept(notes);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("keep me"));
        kept.close();
        const auto forced
            = cli({ QStringLiteral("export"), notes, QStringLiteral("--force"), QStringLiteral("--db"), m_store });
        QVERIFY2(forced.exitCode == 0, qPrintable(forced.err));
    }
};

QTEST_GUILESS_MAIN(TestStoreCli)
#include "test_store_cli.moc"
