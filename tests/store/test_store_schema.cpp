// Schema versions and damaged files: real version-1 and version-2 files migrate with their data
// intact and end up with exactly a new file's schema; newer, foreign, non-SQLite and corrupt files
// give categorised errors and are never changed or crashed on.
#include "core/model/hash.h"
#include "core/store/schema.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"
#include "version2_file.h"
#include "version3_file.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <random>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

std::string quoted(const std::string& text)
{
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// A version-1 store as the first release wrote it: made with the version-1 DDL, rows inserted
// the way version 1 laid them out (sources inline, metrics as JSON).
void writeVersion1(const std::string& path)
{
    RawDb raw(path);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec(std::string(kSchemaV1));
    raw.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    raw.exec("PRAGMA user_version = 1");
    const auto problem = fx::problem();
    const auto hash = kl::contentHash({ problem.json, problem.referenceSource, problem.baselineSource });
    raw.exec("INSERT INTO problems VALUES (" + quoted(hash) + ", 'layernorm_gelu', " + quoted(problem.json) + ", "
        + quoted(problem.referenceSource) + ", " + quoted(problem.baselineSource) + ")");
    raw.exec("INSERT INTO sessions VALUES (7, " + quoted(hash)
        + ", 'NVIDIA H200 #0', 'tuner', 'auto', '{\"budget\":40}', 1000, 9000, 'finished')");
    const auto a = fx::candidate(1).source;
    const auto b = fx::candidate(2).source;
    raw.exec("INSERT INTO candidates VALUES (3, 7, " + quoted(kl::contentHash(a)) + ", " + quoted(a)
        + ", NULL, 'tuner', '{\"THREADS\":128}', 1100)");
    raw.exec("INSERT INTO candidates VALUES (4, 7, " + quoted(kl::contentHash(b)) + ", " + quoted(b)
        + ", 3, 'llm', '{\"THREADS\":256,\"VEC\":4}', 1200)");
    raw.exec("INSERT INTO candidates VALUES (5, 7, " + quoted(kl::contentHash(a)) + ", " + quoted(a)
        + ", 4, 'human', '{}', 1300)"); // the same source again
    raw.exec("INSERT INTO iterations VALUES (10, 7, 1, 3, 'done', 1100, 2000)");
    raw.exec("INSERT INTO iterations VALUES (11, 7, 2, 4, 'done', 2100, 3000)");
    raw.exec("INSERT INTO iterations VALUES (12, 7, 3, 5, 'cancelled', 3100, 3200)");
    const std::string timing
        = R"({"cases":[{"label":"8192x4096","candidate":{"median_us":48.7,"p20_us":48.5,"p80_us":49.0,"cv":0.01},"pct_of_copy":73.5,"speedup_vs_baseline":2.77}]})";
    raw.exec("INSERT INTO results VALUES (20, 10, 'ok', 'passed', 'fine', 48.7, 2756.0, '{\"passed\":true}', "
        + quoted(timing)
        + ", '{\"dram__throughput\":41.5,\"sm__warps_active\":55,\"note\":\"text is dropped\"}', "
          "'{\"name\":\"NVIDIA H200\"}', 1980, '13.0')");
    raw.exec("INSERT INTO results VALUES (21, 11, 'failed', 'wrong-result', '12 off', NULL, NULL, "
             "'{\"passed\":false}', NULL, NULL, NULL, NULL, '13.0')");
    raw.exec("INSERT INTO findings VALUES (30, 20, 'bandwidth.under-ceiling', 'warning', 'DRAM at 41%', "
             "'{\"dram_pct\":41.5}')");
    raw.exec("INSERT INTO findings VALUES (31, 20, 'tail.effect', 'info', 'last wave 12% full', '{}')");
    raw.exec("INSERT INTO findings VALUES (29, 21, 'verify.wrong', 'error', 'wrong', '{}')");
    raw.exec("INSERT INTO decisions VALUES (40, 10, 'auto-keep', '', '', 2000)");
    raw.exec("INSERT INTO decisions VALUES (41, 11, 'reject', 'wrong at 7x1000', 'keep the two-pass variance', 3000)");
}

// A session recorded by this build, every table used, and the values version 3 added set (a
// version-2 copy of it must lose them): rounds, predictions, a summary.
std::int64_t recordCurrentSession(const std::string& path)
{
    auto store = Store::open(path);
    SessionRecord record;
    record.problemHash = store.addProblem(fx::problem());
    record.device = "NVIDIA H200 #0";
    record.proposer = "llm:openai/gpt-4o";
    record.startedMs = 1700000000000;
    const auto session = store.createSession(record);
    std::optional<std::int64_t> parent;
    for (int i = 0; i < 3; ++i) {
        auto candidate = fx::candidate(i, parent);
        candidate.predictedSpeedup = 1.25 + i;
        parent = store.addCandidate(session, candidate);
        const auto ref = store.beginIteration(session, parent, i);
        store.recordExchange(ref, fx::exchange(i));
        store.recordResult(ref, fx::passedResult(i));
        store.recordFindings(ref, fx::findings(i));
        DecisionRecord keep;
        keep.kind = DecisionRecord::Kind::AutoKeep;
        store.recordDecision(ref, keep);
        const auto committed = store.finishIteration(ref);
        store.cacheStore("key-" + std::to_string(i), *committed.resultId);
    }
    SessionSummary budget;
    budget.stopReason = "budget";
    store.recordSessionSummary(session, budget);
    store.finishSession(session, "finished", 1700000099000);
    return session;
}

std::string schemaOf(const std::string& path)
{
    RawDb raw(path);
    return raw.rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name");
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(bytes);
}

} // namespace

class TestStoreSchema : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_files = 0;
    QString freshPath() { return m_dir.filePath(QStringLiteral("schema-%1.db").arg(++m_files)); }

private slots:
    void migratesVersion1WithDataIntact()
    {
        const auto path = freshPath().toStdString();
        writeVersion1(path);
        auto store = Store::open(path);
        QVERIFY(store.checkIntegrity().empty());

        const auto sessions = store.listSessions();
        QCOMPARE(sessions.size(), std::size_t(1));
        const auto& session = sessions[0].session;
        QCOMPARE(session.id, std::int64_t(7));
        KL_COMPARE_TEXT(session.device, "NVIDIA H200 #0");
        KL_COMPARE_TEXT(session.status, "finished");
        QCOMPARE(*session.endedMs, std::int64_t(9000));
        QCOMPARE(session.config["budget"].get<int>(), 40); // budget_json became config_json
        QCOMPARE(sessions[0].iterations, 3);
        QCOMPARE(*sessions[0].bestSpeedup, 2.77);

        const auto rows = store.listIterations(7);
        QCOMPARE(rows.size(), std::size_t(3));
        KL_COMPARE_TEXT(rows[0].category, "passed");
        QCOMPARE(*rows[0].medianUs, 48.7);
        QCOMPARE(*rows[0].gbps, 2756.0);
        QCOMPARE(*rows[0].pctOfCopy, 73.5); // lifted out of the version-1 timing JSON
        QCOMPARE(*rows[0].speedup, 2.77);
        KL_COMPARE_TEXT(rows[0].topFindingRule, "bandwidth.under-ceiling");
        QVERIFY(rows[0].lastDecision == DecisionRecord::Kind::AutoKeep);
        QVERIFY(rows[1].proposer == CandidateRecord::Proposer::Llm);
        KL_COMPARE_TEXT(rows[1].category, "wrong-result");
        QVERIFY(!rows[1].medianUs);
        KL_COMPARE_TEXT(rows[1].topFindingRule, "verify.wrong");
        QVERIFY(rows[1].lastDecision == DecisionRecord::Kind::Reject);
        KL_COMPARE_TEXT(rows[2].state, "cancelled");
        KL_COMPARE_TEXT(rows[2].status, "");
        QVERIFY(!rows[0].round); // version 1 knew no rounds
        QVERIFY(!rows[1].predictedSpeedup);
        KL_COMPARE_TEXT(rows[1].hypothesis, "");
        QVERIFY(!session.summary);

        const auto first = store.iteration(7, 1);
        QVERIFY(first);
        KL_COMPARE_TEXT(first->candidate->source, fx::candidate(1).source);
        QCOMPARE(first->candidate->tunables.at("THREADS"), std::int64_t(128));
        QCOMPARE(*first->result->p20Us, 48.5);
        QCOMPARE(*first->result->p80Us, 49.0);
        QCOMPARE(*first->result->cv, 0.01);
        QCOMPARE(*first->result->smClockMhz, 1980.0);
        QCOMPARE(first->result->recordedMs, std::int64_t(2000));
        QCOMPARE(first->result->metrics.size(), std::size_t(2)); // the text value was not a metric
        QCOMPARE(first->result->metrics.at({ {}, {}, "dram__throughput" }), 41.5);
        QCOMPARE(first->result->metrics.at({ {}, {}, "sm__warps_active" }), 55.0);
        QVERIFY(!first->result->device); // {"name": ...} alone is not a device description: left out
        QCOMPARE(first->findings.size(), std::size_t(2));
        KL_COMPARE_TEXT(first->findings[1].ruleId, "tail.effect");
        QVERIFY(first->findings[1].directions.empty());
        QCOMPARE(first->findings[0].evidence["dram_pct"].get<double>(), 41.5);

        const auto second = store.iteration(7, 2);
        KL_COMPARE_TEXT(second->parent->source, fx::candidate(1).source);
        KL_COMPARE_TEXT(second->candidate->source, fx::candidate(2).source);
        KL_COMPARE_TEXT(second->decisions[0].reason, "wrong at 7x1000");
        KL_COMPARE_TEXT(second->decisions[0].steering, "keep the two-pass variance");
        const auto third = store.iteration(7, 3);
        KL_COMPARE_TEXT(third->candidate->source, fx::candidate(1).source);
        QVERIFY(third->candidate->proposer == CandidateRecord::Proposer::Human);

        // The migrated file works like a new one: new rows go on after the old ids.
        const auto ref = store.beginIteration(7, store.addCandidate(7, fx::candidate(3, 5)));
        QCOMPARE(ref.index, 4);
        store.recordResult(ref, fx::passedResult(3));
        store.recordFindings(ref, fx::findings(3));
        store.finishIteration(ref);
        QCOMPARE(store.listIterations(7).size(), std::size_t(4));

        RawDb raw(path);
        QCOMPARE(raw.integer("PRAGMA user_version"), kSchemaVersion);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sources"), 3); // two from version 1, one new
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'v1_%'"), 0);
    }

    void migratesVersion2KeepingEveryRow()
    {
        const auto current = freshPath().toStdString();
        const auto session = recordCurrentSession(current);
        const auto path = freshPath().toStdString();
        kl::store::testing::writeVersion2Copy(current, path);
        std::vector<std::pair<std::string, std::string>> columns;
        std::string before;
        {
            RawDb raw(path);
            QCOMPARE(raw.integer("PRAGMA user_version"), 2);
            QVERIFY(
                raw.text("SELECT sql FROM sqlite_master WHERE name = 'iterations'").find("round") == std::string::npos);
            columns = kl::store::testing::tableColumns(raw);
            QCOMPARE(columns.size(), std::size_t(11));
            for (const auto& [table, list] : columns) // every table holds rows, so every table is checked
                QVERIFY2(raw.integer("SELECT COUNT(*) FROM " + table) > 0, table.c_str());
            before = kl::store::testing::dumpRows(raw, columns);
        }
        Store::open(path); // migrates
        {
            RawDb raw(path);
            QCOMPARE(raw.integer("PRAGMA user_version"), kSchemaVersion);
            KL_COMPARE_TEXT(kl::store::testing::dumpRows(raw, columns), before);
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM candidates WHERE predicted_speedup IS NOT NULL"), 0);
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM iterations WHERE round IS NOT NULL"), 0);
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM sessions WHERE summary_json IS NOT NULL"), 0);
        }

        auto store = Store::open(path);
        QVERIFY(store.checkIntegrity().empty());
        const auto rows = store.listIterations(session);
        QCOMPARE(rows.size(), std::size_t(3));
        for (int i = 0; i < 3; ++i) {
            const auto& row = rows[static_cast<std::size_t>(i)];
            QVERIFY(!row.round);
            QVERIFY(!row.predictedSpeedup);
            KL_COMPARE_TEXT(row.hypothesis, fx::candidate(i).hypothesis); // a version-2 column
            QCOMPARE(*row.medianUs, *fx::passedResult(i).medianUs);
            QVERIFY(!store.candidate(*row.candidateId)->predictedSpeedup);
        }
        QVERIFY(!store.session(session)->summary);
        QVERIFY(!store.listSessions().at(0).session.summary);
        QCOMPARE(store.bestVerifiedCandidates("layernorm_gelu", {}, 5).size(), std::size_t(1)); // the new index works

        // It goes on as a version-3 file.
        auto candidate = fx::candidate(3, rows.back().candidateId);
        candidate.predictedSpeedup = 1.1;
        const auto ref = store.beginIteration(session, store.addCandidate(session, candidate), 4);
        store.finishIteration(ref);
        SessionSummary rounds;
        rounds.rounds = 4;
        store.recordSessionSummary(session, rounds);
        QCOMPARE(*store.listIterations(session).back().round, 4);
        QCOMPARE(*store.listIterations(session).back().predictedSpeedup, 1.1);
        QCOMPARE(store.session(session)->summary->rounds, std::optional<int>(4));
    }

    void migratesVersion3ToPerSizeResultsAndOwners()
    {
        // A version-3 file as its loop wrote a two-size result: the first size's median beside
        // percentiles averaged over both sizes (p20 above the median).
        const auto path = freshPath().toStdString();
        std::int64_t running = 0;
        {
            auto store = Store::open(path);
            SessionRecord record;
            record.problemHash = store.addProblem(fx::problem());
            record.device = "NVIDIA H200 #0";
            record.proposer = "tuner";
            running = store.createSession(record);
            const auto ref = store.beginIteration(running, store.addCandidate(running, fx::candidate(1)));
            auto result = fx::passedResult(1);
            result.timing = nlohmann::json::parse(R"({"cases":[
                {"label":"8192x4096","candidate":{"median_us":72.13,"p20_us":71.9,"p80_us":72.4,"cv":0.004},
                 "gbps":1860.0,"pct_of_copy":44.0,"speedup_vs_baseline":1.5},
                {"label":"1024x1024","candidate":{"median_us":98.0,"p20_us":97.5,"p80_us":101.0,"cv":0.02},
                 "gbps":80.0,"pct_of_copy":12.0,"speedup_vs_baseline":2.0}]})")
                                .get<kl::protocol::Timing>();
            result.medianUs = 72.13;
            result.p20Us = 84.12;
            result.p80Us = 85.49;
            store.recordResult(ref, result);
            store.finishIteration(ref);
        }
        kl::store::testing::downgradeToVersion3(path);
        {
            RawDb raw(path);
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'size_results'"), 0);
            raw.exec("UPDATE results SET p20_us = 84.12, p80_us = 85.49"); // as version 3 stored it
        }

        auto store = Store::open(path); // migrates
        RawDb raw(path);
        QCOMPARE(raw.integer("PRAGMA user_version"), kSchemaVersion);
        // The headline row becomes one size's; every size keeps its own figures.
        KL_COMPARE_TEXT(raw.rows("SELECT median_us, p20_us, p80_us, cv FROM results"), "72.13|71.9|72.4|0.004\n");
        KL_COMPARE_TEXT(raw.rows("SELECT position, label, values_json, median_us, p20_us, p80_us, gbps, pct_of_copy, "
                                 "speedup FROM size_results ORDER BY position"),
            "0|8192x4096|{\"M\":8192,\"N\":4096}|72.13|71.9|72.4|1860.0|44.0|1.5\n"
            "1|1024x1024|NULL|98.0|97.5|101.0|80.0|12.0|2.0\n"); // not a main size of the problem: no values
        const auto sizes = store.sizeResults(running, 1);
        QCOMPARE(sizes.size(), std::size_t(2));
        QCOMPARE(sizes[0].values.at("N"), std::int64_t(4096));
        QVERIFY(sizes[1].values.empty());
        // Its owner is unknown: a version-3 session that says running stays running.
        KL_COMPARE_TEXT(
            raw.rows("SELECT owner_pid, owner_host, owner_start, status FROM sessions"), "NULL|NULL|NULL|running\n");
        KL_COMPARE_TEXT(Store::open(path).session(running)->status, "running");
        QVERIFY(store.checkIntegrity().empty());
    }

    void migratedSchemaIsExactlyANewFilesSchema()
    {
        const auto fresh = freshPath().toStdString();
        Store::open(fresh);
        const auto expected = schemaOf(fresh);
        QVERIFY(expected.find("CREATE TABLE llm_exchanges") != std::string::npos);
        QVERIFY(expected.find("predicted_speedup REAL") != std::string::npos);
        QVERIFY(expected.find("round INTEGER") != std::string::npos);
        QVERIFY(expected.find("summary_json TEXT") != std::string::npos);
        QVERIFY(expected.find("results_verified") != std::string::npos);

        const auto fromVersion1 = freshPath().toStdString();
        writeVersion1(fromVersion1);
        Store::open(fromVersion1);
        KL_COMPARE_TEXT(schemaOf(fromVersion1), expected);

        const auto current = freshPath().toStdString();
        recordCurrentSession(current);
        const auto fromVersion2 = freshPath().toStdString();
        kl::store::testing::writeVersion2Copy(current, fromVersion2);
        Store::open(fromVersion2);
        KL_COMPARE_TEXT(schemaOf(fromVersion2), expected);
    }

    void newerVersionIsRefusedAndLeftAlone()
    {
        const auto path = freshPath().toStdString();
        {
            RawDb raw(path);
            raw.exec(std::string(kSchemaV2));
            raw.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
            raw.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
        }
        std::string message;
        try {
            Store::open(path);
        } catch (const kl::Error& error) {
            KL_COMPARE_TEXT(error.category(), "store.newer-version");
            message = error.message();
        }
        QVERIFY(message.find("newer KernelLoop") != std::string::npos);
        RawDb raw(path);
        QCOMPARE(raw.integer("PRAGMA user_version"), kSchemaVersion + 1);
        KL_COMPARE_TEXT(raw.text("PRAGMA journal_mode"), "delete"); // not even switched to WAL
    }

    void anotherApplicationsDatabaseIsRefusedAndLeftAlone()
    {
        const auto path = freshPath().toStdString();
        {
            RawDb raw(path);
            raw.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada')");
        }
        KL_COMPARE_TEXT(fx::errorCategory([&] { Store::open(path); }), "store.not-kernelloop");
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.text("PRAGMA journal_mode"), "delete");
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sqlite_master"), 1);
        QCOMPARE(raw.integer("PRAGMA user_version"), 0);
    }

    void filesThatAreNotDatabases_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("category");
        QTest::newRow("text") << QByteArray("{\"this is\": \"a problem file, not a store\"}\n")
                              << QStringLiteral("store.not-a-database");
        QByteArray noise(64 * 1024, '\0');
        std::mt19937 random(7);
        for (auto& byte : noise)
            byte = static_cast<char>(random());
        QTest::newRow("noise") << noise << QStringLiteral("store.not-a-database");
        QTest::newRow("empty file is a new store") << QByteArray() << QStringLiteral("no error");
    }

    void filesThatAreNotDatabases()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, category);
        const auto path = freshPath();
        writeFile(path, bytes);
        KL_COMPARE_TEXT(fx::errorCategory([&] { Store::open(path.toStdString()); }), category.toStdString());
    }

    void missingFolderIsAnOpenError()
    {
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { Store::open(m_dir.filePath(QStringLiteral("no/such/dir/x.db")).toStdString()); }),
            "store.open-failed");
    }

    // Damage a real store in different ways; every access either works or throws a store.*
    // kl::Error, and the damage is noticed somewhere (an error or the integrity check).
    void damagedStores_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::newRow("header") << QStringLiteral("header");
        QTest::newRow("truncated") << QStringLiteral("truncated");
        QTest::newRow("page overwritten") << QStringLiteral("page");
        QTest::newRow("page zeroed") << QStringLiteral("zero");
        QTest::newRow("schema page") << QStringLiteral("schema");
    }

    void damagedStores()
    {
        QFETCH(QString, damage);
        const auto path = freshPath();
        std::int64_t session = 0;
        {
            auto store = Store::open(path.toStdString());
            SessionRecord record;
            record.problemHash = store.addProblem(fx::problem());
            record.proposer = "tuner";
            session = store.createSession(record);
            std::optional<std::int64_t> parent;
            for (int i = 0; i < 40; ++i) {
                parent = store.addCandidate(session, fx::candidate(i, parent));
                const auto ref = store.beginIteration(session, parent);
                store.recordResult(ref, fx::passedResult(i));
                store.recordFindings(ref, fx::findings(i));
                store.recordExchange(ref, fx::exchange(i));
                store.finishIteration(ref);
            }
        } // closing the last connection checkpoints the WAL into the file
        QVERIFY(!QFile::exists(path + QStringLiteral("-wal")));

        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        const qint64 size = file.size();
        const qint64 page = 4096;
        QVERIFY(size > 40 * page);
        if (damage == QStringLiteral("header")) {
            file.write(QByteArray("not sqlite anymore!"));
        } else if (damage == QStringLiteral("truncated")) {
            file.resize(size / 3);
        } else if (damage == QStringLiteral("schema")) {
            file.seek(100); // page 1 after the file header: sqlite_master's b-tree
            file.write(QByteArray(static_cast<int>(page - 100), '\x5a'));
        } else {
            std::mt19937 random(11);
            for (qint64 p = 3; p < size / page; p += 7) {
                file.seek(p * page);
                QByteArray bytes(static_cast<int>(page), '\0');
                if (damage == QStringLiteral("page")) {
                    for (auto& byte : bytes)
                        byte = static_cast<char>(random());
                }
                file.write(bytes);
            }
        }
        file.close();

        bool noticed = false;
        try {
            auto store = Store::open(path.toStdString());
            noticed = !store.checkIntegrity().empty();
            for (const auto& row : store.listIterations(session))
                store.iteration(session, row.index);
            store.listSessions();
        } catch (const kl::Error& error) {
            QVERIFY2(error.category().starts_with("store."), error.category().c_str());
            noticed = true;
        }
        QVERIFY(noticed);
    }
};

QTEST_GUILESS_MAIN(TestStoreSchema)
#include "test_store_schema.moc"
