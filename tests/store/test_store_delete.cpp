// Deleting a session removes it and everything under it, and nothing of the other sessions;
// a session whose process is still recording it is refused.
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

class TestStoreDelete : public QObject {
    Q_OBJECT

private slots:
    void aSessionGoesWithEverythingUnderIt()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(QStringLiteral("delete.db")).toStdString();
        auto store = Store::open(path);
        std::vector<std::int64_t> sessions;
        for (int s = 0; s < 2; ++s) {
            SessionRecord record;
            record.problemHash = store.addProblem(fx::problem());
            record.device = "NVIDIA H200 #0";
            record.proposer = "llm";
            sessions.push_back(store.createSession(record));
            std::optional<std::int64_t> parent;
            for (int i = 0; i < 3; ++i) {
                parent = store.addCandidate(sessions.back(), fx::candidate(s * 10 + i, parent));
                const auto ref = store.beginIteration(sessions.back(), parent);
                store.recordResult(ref, fx::passedResult(i));
                store.recordFindings(ref, fx::findings(i));
                store.recordExchange(ref, fx::exchange(i));
                DecisionRecord replace;
                replace.kind = DecisionRecord::Kind::Replace;
                replace.replacementCandidateId = parent;
                store.recordDecision(ref, replace);
                store.cacheStore(
                    "key-" + std::to_string(s) + "-" + std::to_string(i), *store.finishIteration(ref).resultId);
            }
        }
        // This process records both: still running, so refused.
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.deleteSession(sessions[0]); }), "store.session-running");
        store.finishSession(sessions[0], "finished");

        RawDb raw(path);
        const auto count = [&](const char* table) { return raw.integer(std::string("SELECT COUNT(*) FROM ") + table); };
        const auto sourcesBefore = count("sources");
        store.deleteSession(sessions[0]);
        QVERIFY(!store.session(sessions[0]));
        QCOMPARE(store.listSessions().size(), std::size_t(1));
        QCOMPARE(store.listIterations(sessions[1]).size(), std::size_t(3));
        QVERIFY(store.iteration(sessions[1], 3)->result);
        for (const char* table : { "candidates", "iterations", "results", "size_results", "findings", "decisions",
                 "llm_exchanges", "evaluation_cache" })
            QVERIFY2(count(table) > 0 && count(table) % 3 == 0, table); // the other session's three rows each
        QCOMPARE(count("iterations"), 3);
        QVERIFY(count("sources") <= sourcesBefore);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sources WHERE hash NOT IN (SELECT source_hash FROM candidates)"), 0);
        QVERIFY(store.checkIntegrity().empty());
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.deleteSession(sessions[0]); }), "store.unknown-session");
    }
};

QTEST_GUILESS_MAIN(TestStoreDelete)
#include "test_store_delete.moc"
