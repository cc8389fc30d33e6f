// A crash loses no committed iteration: a real writer process is SIGKILLed at random moments,
// twenty times over the same file. After each kill the file opens, passes SQLite's integrity
// check, holds every iteration the writer reported as committed with all of its rows, and
// holds no half iteration.
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <chrono>
#include <random>
#include <set>
#include <thread>

using namespace kl::store;
namespace fx = kl::store::fixtures;

class TestStoreCrash : public QObject {
    Q_OBJECT

private:
    // Every row the writer writes for iteration `index`, exactly.
    static void verifyComplete(Store& store, std::int64_t session, int index)
    {
        const auto detail = store.iteration(session, index);
        QVERIFY2(detail, qPrintable(QStringLiteral("iteration %1 missing").arg(index)));
        QVERIFY(detail->candidate);
        KL_COMPARE_TEXT(detail->candidate->source, fx::candidate(index).source);
        if (index > 1)
            QVERIFY(detail->parent);
        QVERIFY(detail->result);
        const auto expected = fx::passedResult(index);
        QCOMPARE(*detail->result->medianUs, *expected.medianUs);
        QCOMPARE(detail->result->metrics, expected.metrics);
        QVERIFY(detail->result->timing == expected.timing);
        QCOMPARE(detail->findings.size(), std::size_t(3));
        KL_COMPARE_TEXT(detail->findings[2].ruleId, "tail.effect");
        QCOMPARE(detail->decisions.size(), std::size_t(1));
        KL_COMPARE_TEXT(detail->decisions[0].reason, "iteration " + std::to_string(index));
        QCOMPARE(detail->exchanges.size(), std::size_t(1));
        KL_COMPARE_TEXT(detail->row.state, "done");
    }

private slots:
    void sigkillNeverLosesACommittedIteration()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("crash.db"));
        const auto seed = QRandomGenerator::global()->generate();
        qInfo("random seed %u", seed);
        std::mt19937 random(seed);

        std::optional<std::int64_t> session;
        std::set<int> reported;
        int killsMidIteration = 0;
        for (int run = 0; run < 20; ++run) {
            QProcess writer;
            writer.setProcessChannelMode(QProcess::SeparateChannels);
            writer.start(QStringLiteral(KL_STORE_CRASH_WRITER), { db });
            QVERIFY2(writer.waitForStarted(10000), qPrintable(writer.errorString()));

            // Some runs die before the session line (while the file is being created or
            // opened), the rest after a random number of committed iterations.
            const int choice = static_cast<int>(random() % 8);
            if (choice > 0) {
                const int lines = choice; // the session line, then 0..6 iterations
                for (int line = 0; line < lines; ++line) {
                    while (!writer.canReadLine())
                        QVERIFY2(writer.waitForReadyRead(20000),
                            qPrintable(QString::fromLocal8Bit(writer.readAllStandardError())));
                    const auto text = QString::fromLatin1(writer.readLine()).trimmed();
                    if (text.startsWith(QStringLiteral("session "))) {
                        const auto id = text.mid(8).toLongLong();
                        if (session)
                            QCOMPARE(id, *session);
                        session = id;
                    } else {
                        reported.insert(text.toInt());
                    }
                }
                // A random moment inside the next iteration, not a wait for anything.
                std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
                ++killsMidIteration;
            }
            writer.kill(); // SIGKILL
            QVERIFY(writer.waitForFinished(10000));
            QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
            // Lines printed before the kill are commits too; a line cut short (no newline) is not.
            auto lines = writer.readAllStandardOutput().split('\n');
            lines.removeLast();
            for (const auto& line : lines) {
                if (!line.isEmpty() && !line.startsWith("session"))
                    reported.insert(line.toInt());
            }

            auto store = Store::open(db.toStdString());
            const auto problems = store.checkIntegrity();
            QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
            if (!session) {
                QVERIFY(reported.empty());
                continue;
            }
            const auto rows = store.listIterations(*session);
            std::set<int> present;
            for (std::size_t i = 0; i < rows.size(); ++i) {
                QCOMPARE(rows[i].index, static_cast<int>(i) + 1); // no gaps, no duplicates
                present.insert(rows[i].index);
                verifyComplete(store, *session, rows[i].index); // no half iteration
                if (QTest::currentTestFailed())
                    return;
            }
            for (int index : reported)
                QVERIFY2(present.count(index), qPrintable(QStringLiteral("committed iteration %1 lost").arg(index)));
        }
        QVERIFY(killsMidIteration > 0);
        QVERIFY(!reported.empty());
        qInfo("%zu iterations reported committed over 20 kills (%d while writing)", reported.size(), killsMidIteration);
    }

    void aKilledWritersSessionIsInterrupted()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("killed.db")).toStdString();
        QProcess writer;
        writer.start(QStringLiteral(KL_STORE_CRASH_WRITER), { QString::fromStdString(db) });
        QVERIFY2(writer.waitForStarted(10000), qPrintable(writer.errorString()));
        const auto writerPid = static_cast<std::int64_t>(writer.processId());
        // The session line, then two committed iterations.
        for (int line = 0; line < 3; ++line) {
            while (!writer.canReadLine())
                QVERIFY2(
                    writer.waitForReadyRead(20000), qPrintable(QString::fromLocal8Bit(writer.readAllStandardError())));
            writer.readLine();
        }
        writer.kill(); // SIGKILL: no finishSession
        QVERIFY(writer.waitForFinished(10000));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);

        {
            // A viewer (read-only, writes nothing) already tells it apart from a running session.
            auto viewer = Store::open(db, { .readOnly = true });
            const auto sessions = viewer.listSessions();
            QCOMPARE(sessions.size(), std::size_t(1));
            KL_COMPARE_TEXT(sessions[0].session.status, "interrupted");
            const auto rows = viewer.listIterations(sessions[0].session.id);
            QVERIFY(rows.size() >= 2);
            QCOMPARE(*sessions[0].session.endedMs, rows.back().endedMs); // the time of its last iteration
            QVERIFY(sessions[0].session.ownerPid);
            QCOMPARE(*sessions[0].session.ownerPid, writerPid);
        }

        // A session of this (live) process, and one of a process on another host, stay running.
        std::int64_t mine = 0;
        std::int64_t elsewhere = 0;
        {
            auto store = Store::open(db);
            SessionRecord record;
            record.problemHash = store.addProblem(fx::problem());
            record.device = "NVIDIA H200 #0";
            record.proposer = "tuner";
            mine = store.createSession(record);
            elsewhere = store.createSession(record);
        }
        kl::store::testing::RawDb(db).exec(
            "UPDATE sessions SET owner_host = 'another-host', owner_pid = 1 WHERE id = " + std::to_string(elsewhere));

        // The next writable open records it.
        auto store = Store::open(db);
        kl::store::testing::RawDb raw(db);
        KL_COMPARE_TEXT(raw.rows("SELECT id, status FROM sessions ORDER BY id"),
            "1|interrupted\n" + std::to_string(mine) + "|running\n" + std::to_string(elsewhere) + "|running\n");
        QCOMPARE(raw.integer("SELECT ended_ms FROM sessions WHERE id = 1"),
            raw.integer("SELECT MAX(ended_ms) FROM iterations WHERE session_id = 1"));
        KL_COMPARE_TEXT(store.session(1)->status, "interrupted");
        KL_COMPARE_TEXT(store.session(mine)->status, "running");
    }
};

QTEST_GUILESS_MAIN(TestStoreCrash)
#include "test_store_crash.moc"
