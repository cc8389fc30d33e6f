// Export and import: a session with iterations, findings, decisions, exchanges and cache
// entries survives the round trip into a fresh store; bad files are refused with a category
// and leave the store exactly as it was.
#include "core/model/hash.h"
#include "core/store/compile_columns.h"
#include "core/store/schema.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"
#include "version2_file.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <filesystem>

using namespace kl::store;
using kl::Exchange;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

SessionSummary expectedSummary(int seed)
{
    SessionSummary summary;
    summary.stopReason = "budget";
    summary.rounds = 2;
    summary.tokens = seed;
    summary.passAtK = 0.5;
    return summary;
}

struct Recorded {
    std::int64_t session = 0;
    std::vector<std::string> cacheKeys;
};

// Five iterations in rounds 0, 0, 1, 1, 2: passed and failed results, findings, every decision
// kind that points somewhere (a replacement candidate), LLM exchanges, cache entries, predicted
// speedups on the odd iterations, and a session summary.
Recorded recordSession(Store& store, int seed)
{
    Recorded recorded;
    SessionRecord session;
    session.problemHash = store.addProblem(fx::problem());
    session.label = "round trip " + std::to_string(seed);
    session.device = "NVIDIA H200 #0";
    session.deviceInfo = fx::passedResult(seed).device;
    session.deviceInfo->uuid = "GPU-1234";
    session.proposer = "llm:openai/gpt-4o";
    session.mode = "review";
    session.config = { { "budget", 5 }, { "target_speedup", 2.5 } };
    session.startedMs = 1700000000000 + seed;
    recorded.session = store.createSession(session);

    std::optional<std::int64_t> parent;
    for (int i = 0; i < 5; ++i) {
        auto record = fx::candidate(seed + i, parent);
        if (i % 2)
            record.predictedSpeedup = 1.0 + i * 0.25;
        const auto candidate = store.addCandidate(recorded.session, record);
        const auto ref = store.beginIteration(recorded.session, candidate, i / 2);
        store.recordExchange(ref, fx::exchange(seed + i));
        if (i == 2) {
            store.recordResult(ref, fx::failedResult(i));
            DecisionRecord reject;
            reject.kind = DecisionRecord::Kind::Reject;
            reject.reason = "wrong at 7x1000";
            store.recordDecision(ref, reject);
        } else {
            store.recordResult(ref, fx::passedResult(seed + i));
            store.recordFindings(ref, fx::findings(seed + i));
            DecisionRecord keep;
            keep.kind = i % 2 ? DecisionRecord::Kind::Steer : DecisionRecord::Kind::AutoKeep;
            keep.steering = i % 2 ? "fewer registers" : "";
            store.recordDecision(ref, keep);
        }
        const auto committed = store.finishIteration(ref);
        if (i != 2) {
            EvaluationKey key;
            key.source = fx::candidate(seed + i).source;
            key.tunables = fx::candidate(seed + i).tunables;
            key.problemHash = session.problemHash;
            key.device = "NVIDIA H200";
            key.toolkit = "13.0";
            key.options = std::to_string(seed);
            recorded.cacheKeys.push_back(evaluationCacheKey(key));
            store.cacheStore(recorded.cacheKeys.back(), *committed.resultId);
            parent = candidate;
        }
    }
    // An engineer's later edit replaces iteration 4's candidate.
    const auto edited = store.addCandidate(recorded.session, fx::candidate(seed + 9, parent));
    DecisionRecord replace;
    replace.kind = DecisionRecord::Kind::Replace;
    replace.reason = "hand-tuned epilogue";
    replace.replacementCandidateId = edited;
    store.recordDecision({ recorded.session, 4 }, replace);
    store.recordSessionSummary(recorded.session, expectedSummary(seed));
    store.finishSession(recorded.session, "finished", 1700000099000);
    return recorded;
}

void compareCandidates(const std::optional<CandidateRecord>& a, const std::optional<CandidateRecord>& b)
{
    QCOMPARE(a.has_value(), b.has_value());
    if (!a)
        return;
    KL_COMPARE_TEXT(a->source, b->source);
    KL_COMPARE_TEXT(a->sourceHash, b->sourceHash);
    KL_COMPARE_TEXT(a->fileName, b->fileName);
    QVERIFY(a->proposer == b->proposer);
    KL_COMPARE_TEXT(a->proposerDetail, b->proposerDetail);
    QCOMPARE(a->tunables, b->tunables);
    KL_COMPARE_TEXT(a->hypothesis, b->hypothesis);
    QCOMPARE(a->predictedSpeedup, b->predictedSpeedup);
    QCOMPARE(a->createdMs, b->createdMs);
    QCOMPARE(a->parentId.has_value(), b->parentId.has_value());
}

// What a session brought from a version-2 file: all of version 2's fields, and none of version 3's.
enum class Fields { All, Version2 };

void compareCandidates(const std::optional<CandidateRecord>& a, const std::optional<CandidateRecord>& b, Fields fields)
{
    if (fields == Fields::All)
        return compareCandidates(a, b);
    QVERIFY(!b || !b->predictedSpeedup);
    auto withoutPrediction = a;
    if (withoutPrediction)
        withoutPrediction->predictedSpeedup.reset();
    compareCandidates(withoutPrediction, b);
}

// Everything a reader can see of a session, compared field by field (ids aside). With
// Fields::Version2, `b` came through a version-2 file: version 3's fields must be empty there.
void compareSessions(Store& a, std::int64_t sa, Store& b, std::int64_t sb, Fields fields = Fields::All)
{
    const auto left = a.session(sa);
    const auto right = b.session(sb);
    QVERIFY(left && right);
    KL_COMPARE_TEXT(left->problemHash, right->problemHash);
    KL_COMPARE_TEXT(left->label, right->label);
    KL_COMPARE_TEXT(left->device, right->device);
    QVERIFY(left->deviceInfo && left->deviceInfo == right->deviceInfo);
    KL_COMPARE_TEXT(left->proposer, right->proposer);
    KL_COMPARE_TEXT(left->mode, right->mode);
    KL_COMPARE_JSON(left->config, right->config);
    QCOMPARE(left->startedMs, right->startedMs);
    QCOMPARE(left->endedMs, right->endedMs);
    KL_COMPARE_TEXT(left->status, right->status);
    if (fields == Fields::All)
        QVERIFY(left->summary == right->summary);
    else
        QVERIFY(!right->summary);
    KL_COMPARE_TEXT(a.problem(left->problemHash)->json, b.problem(right->problemHash)->json);

    const auto rowsA = a.listIterations(sa);
    const auto rowsB = b.listIterations(sb);
    QCOMPARE(rowsA.size(), rowsB.size());
    for (std::size_t i = 0; i < rowsA.size(); ++i) {
        const auto& x = rowsA[i];
        const auto& y = rowsB[i];
        QCOMPARE(x.index, y.index);
        QVERIFY(x.proposer == y.proposer);
        KL_COMPARE_TEXT(x.state, y.state);
        KL_COMPARE_TEXT(x.status, y.status);
        KL_COMPARE_TEXT(x.category, y.category);
        QCOMPARE(x.medianUs, y.medianUs);
        QCOMPARE(x.gbps, y.gbps);
        QCOMPARE(x.pctOfCopy, y.pctOfCopy);
        QCOMPARE(x.speedup, y.speedup);
        KL_COMPARE_TEXT(x.topFindingRule, y.topFindingRule);
        QVERIFY(x.lastDecision == y.lastDecision);
        QCOMPARE(x.startedMs, y.startedMs);
        QCOMPARE(x.endedMs, y.endedMs);
        KL_COMPARE_TEXT(x.hypothesis, y.hypothesis);
        if (fields == Fields::All) {
            QCOMPARE(x.round, y.round);
            QCOMPARE(x.predictedSpeedup, y.predictedSpeedup);
        } else {
            QVERIFY(!y.round);
            QVERIFY(!y.predictedSpeedup);
        }

        const auto dx = a.iteration(sa, x.index);
        const auto dy = b.iteration(sb, y.index);
        QVERIFY(dx && dy);
        compareCandidates(dx->candidate, dy->candidate, fields);
        compareCandidates(dx->parent, dy->parent, fields);
        QCOMPARE(dx->result.has_value(), dy->result.has_value());
        if (dx->result) {
            const auto& r = *dx->result;
            const auto& s = *dy->result;
            KL_COMPARE_TEXT(r.status, s.status);
            KL_COMPARE_TEXT(r.category, s.category);
            KL_COMPARE_TEXT(r.detail, s.detail);
            QCOMPARE(r.p20Us, s.p20Us);
            QCOMPARE(r.p80Us, s.p80Us);
            QCOMPARE(r.cv, s.cv);
            QCOMPARE(r.smClockMhz, s.smClockMhz);
            KL_COMPARE_TEXT(r.toolkit, s.toolkit);
            QVERIFY(r.verification == s.verification);
            QVERIFY(r.timing == s.timing);
            QVERIFY(r.device == s.device);
            KL_COMPARE_JSON(compileColumn(r.compile), compileColumn(s.compile));
            QVERIFY(r.profile == s.profile);
            QCOMPARE(r.metrics, s.metrics);
            QCOMPARE(r.recordedMs, s.recordedMs);
        }
        QCOMPARE(dx->findings.size(), dy->findings.size());
        for (std::size_t f = 0; f < dx->findings.size(); ++f) {
            KL_COMPARE_TEXT(dx->findings[f].ruleId, dy->findings[f].ruleId);
            KL_COMPARE_TEXT(dx->findings[f].severity, dy->findings[f].severity);
            KL_COMPARE_TEXT(dx->findings[f].message, dy->findings[f].message);
            KL_COMPARE_JSON(dx->findings[f].evidence, dy->findings[f].evidence);
            QCOMPARE(dx->findings[f].directions, dy->findings[f].directions);
        }
        QCOMPARE(dx->decisions.size(), dy->decisions.size());
        for (std::size_t d = 0; d < dx->decisions.size(); ++d) {
            QVERIFY(dx->decisions[d].kind == dy->decisions[d].kind);
            KL_COMPARE_TEXT(dx->decisions[d].reason, dy->decisions[d].reason);
            KL_COMPARE_TEXT(dx->decisions[d].steering, dy->decisions[d].steering);
            QCOMPARE(dx->decisions[d].decidedMs, dy->decisions[d].decidedMs);
            QCOMPARE(dx->decisions[d].replacementCandidateId.has_value(),
                dy->decisions[d].replacementCandidateId.has_value());
            if (dx->decisions[d].replacementCandidateId)
                compareCandidates(a.candidate(*dx->decisions[d].replacementCandidateId),
                    b.candidate(*dy->decisions[d].replacementCandidateId), fields);
        }
        QCOMPARE(dx->exchanges.size(), dy->exchanges.size());
        for (std::size_t e = 0; e < dx->exchanges.size(); ++e) {
            KL_COMPARE_TEXT(dx->exchanges[e].role, dy->exchanges[e].role);
            const Exchange& ex = dx->exchanges[e].exchange;
            const Exchange& ey = dy->exchanges[e].exchange;
            KL_COMPARE_TEXT(ex.model, ey.model);
            KL_COMPARE_TEXT(ex.requestBody, ey.requestBody);
            QVERIFY(ex.prompt == ey.prompt);
            KL_COMPARE_TEXT(replyText(ex), replyText(ey));
            QCOMPARE(ex.usage.completionTokens, ey.usage.completionTokens);
            QCOMPARE(ex.usage.reported, ey.usage.reported);
            QCOMPARE(ex.latencyMs, ey.latencyMs);
            QCOMPARE(dx->exchanges[e].startedMs, dy->exchanges[e].startedMs);
        }
    }
}

// Row counts of every table: an import that fails must leave them all as they were.
std::string tableCounts(const std::string& path)
{
    RawDb raw(path);
    std::string counts;
    for (const char* table : { "problems", "sessions", "sources", "candidates", "iterations", "results", "metrics",
             "findings", "decisions", "llm_exchanges", "evaluation_cache" })
        counts += std::string(table) + "=" + std::to_string(raw.integer(std::string("SELECT COUNT(*) FROM ") + table))
            + " ";
    return counts;
}

} // namespace

class TestStoreTransfer : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    fx::FreshPaths freshPath { m_dir };

    // A valid export of one recorded session, to damage in the tests below.
    std::string goodExport()
    {
        auto store = Store::open(freshPath());
        const auto recorded = recordSession(store, 100);
        const auto file = freshPath("export");
        store.exportSession(recorded.session, file);
        return file;
    }

    // A store with one session of its own, and its row counts, to import bad files into.
    std::pair<std::string, std::string> targetStore()
    {
        const auto path = freshPath();
        {
            auto store = Store::open(path);
            recordSession(store, 200);
        }
        return { path, tableCounts(path) };
    }

private slots:
    void roundTripIntoAFreshStore()
    {
        auto source = Store::open(freshPath());
        recordSession(source, 1); // another session that must not travel
        const auto recorded = recordSession(source, 10);
        const auto file = freshPath("export");
        source.exportSession(recorded.session, file);
        QVERIFY(std::filesystem::exists(file));
        QVERIFY(!std::filesystem::exists(file + "-wal")); // one self-contained file
        QVERIFY(!std::filesystem::exists(file + "-journal"));
        {
            RawDb raw(file);
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM sessions"), 1);
            QCOMPARE(raw.integer("PRAGMA user_version"), kSchemaVersion);
        }

        const auto targetPath = freshPath();
        auto target = Store::open(targetPath);
        const auto imported = target.importSession(file);
        compareSessions(source, recorded.session, target, imported);
        QVERIFY(target.checkIntegrity().empty());
        QCOMPARE(target.listSessions().size(), std::size_t(1));
        // Version 3's fields arrived with values (the comparison above would also pass on two nulls).
        QVERIFY(target.session(imported)->summary == expectedSummary(10));
        QVERIFY(target.listSessions().at(0).session.summary == expectedSummary(10));
        const auto rows = target.listIterations(imported);
        QCOMPARE(rows.size(), std::size_t(5));
        const std::vector<int> rounds { 0, 0, 1, 1, 2 };
        for (std::size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(*rows[i].round, rounds[i]);
            QCOMPARE(rows[i].predictedSpeedup.has_value(), i % 2 == 1);
            KL_COMPARE_TEXT(rows[i].hypothesis, fx::candidate(10 + static_cast<int>(i)).hypothesis);
        }
        QCOMPARE(*rows[3].predictedSpeedup, 1.75);
        QCOMPARE(*target.candidate(*rows[1].candidateId)->predictedSpeedup, 1.25);

        // The cache came along: a repeat costs nothing in the new store either.
        for (const auto& key : recorded.cacheKeys) {
            const auto hit = target.cacheLookup(key);
            QVERIFY(hit);
            KL_COMPARE_TEXT(hit->category, "passed");
        }

        // Importing again makes a second, equal session; shared rows stay single.
        const auto again = target.importSession(file);
        QVERIFY(again != imported);
        compareSessions(target, imported, target, again);
        RawDb raw(targetPath);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM problems"), 1);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sessions"), 2);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM evaluation_cache"), std::int64_t(recorded.cacheKeys.size()));

        // The imported session goes on like any other.
        const auto ref = target.beginIteration(again);
        QCOMPARE(ref.index, 6);
        target.abandonIteration(ref);
    }

    void exportOverwritesAtomicallyAndFailsCleanly()
    {
        auto store = Store::open(freshPath());
        const auto recorded = recordSession(store, 3);
        const auto file = freshPath("export");
        {
            QFile existing(QString::fromStdString(file));
            QVERIFY(existing.open(QIODevice::WriteOnly));
            existing.write("old contents");
        }
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.exportSession(recorded.session, file); }), "store.export-exists");
        store.exportSession(recorded.session, file, { .overwrite = true });
        auto check = Store::open(freshPath());
        QVERIFY(check.importSession(file) > 0);

        const auto nowhere = m_dir.filePath(QStringLiteral("no/such/folder/x.klsession")).toStdString();
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.exportSession(recorded.session, nowhere); }), "store.export-failed");
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.exportSession(9999, freshPath("export")); }), "store.unknown-session");
        const auto leftovers = QDir(m_dir.path()).entryList({ QStringLiteral("*.part-*") });
        QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(QLatin1Char(' '))));
    }

    void importsAnOlderVersionFileWithoutChangingIt()
    {
        // A version-1 export: made with the version-1 DDL, one session.
        const auto file = freshPath("v1export");
        const auto problem = fx::problem();
        const auto hash = kl::contentHash({ problem.json, problem.referenceSource, problem.baselineSource });
        {
            RawDb raw(file);
            raw.exec(std::string(kSchemaV1));
            raw.exec("PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = 1");
            auto insert = [&](const std::string& sql) { raw.exec(sql); };
            auto q = [](const std::string& text) {
                std::string out = "'";
                for (char c : text)
                    out += c == '\'' ? std::string("''") : std::string(1, c);
                return out + "'";
            };
            insert("INSERT INTO problems VALUES (" + q(hash) + ", 'p', " + q(problem.json) + ", "
                + q(problem.referenceSource) + ", " + q(problem.baselineSource) + ")");
            insert("INSERT INTO sessions VALUES (1, " + q(hash) + ", 'H200', 'tuner', 'auto', '{}', 5, 6, 'finished')");
            const auto source = fx::candidate(1).source;
            insert("INSERT INTO candidates VALUES (1, 1, " + q(kl::contentHash(source)) + ", " + q(source)
                + ", NULL, 'tuner', '{\"THREADS\":64}', 5)");
            insert("INSERT INTO iterations VALUES (1, 1, 1, 1, 'done', 5, 6)");
            insert("INSERT INTO results VALUES (1, 1, 'ok', 'passed', '', 50.0, 2000.0, NULL, NULL, "
                   "'{\"dram\":1.5}', NULL, 1980, '13.0')");
        }
        auto store = Store::open(freshPath());
        const auto imported = store.importSession(file);
        const auto detail = store.iteration(imported, 1);
        QVERIFY(detail);
        KL_COMPARE_TEXT(detail->candidate->source, fx::candidate(1).source);
        QCOMPARE(detail->result->metrics.at({ {}, {}, "dram" }), 1.5); // a bare name: no kernel, no size
        QCOMPARE(*detail->row.medianUs, 50.0);
        RawDb raw(file);
        QCOMPARE(raw.integer("PRAGMA user_version"), 1); // migrated in memory only
    }

    void importsAVersion2ExportWithoutChangingIt()
    {
        const auto sourcePath = freshPath();
        const auto v3export = freshPath("export");
        Recorded recorded;
        {
            auto source = Store::open(sourcePath);
            recorded = recordSession(source, 30);
            source.exportSession(recorded.session, v3export);
        }
        const auto session = recorded.session;
        const auto file = freshPath("v2export");
        kl::store::testing::writeVersion2Copy(v3export, file);
        std::string before;
        {
            RawDb raw(file);
            before = kl::store::testing::dumpRows(raw, kl::store::testing::tableColumns(raw));
        }

        auto source = Store::open(sourcePath);
        auto target = Store::open(freshPath());
        const auto imported = target.importSession(file);
        compareSessions(source, session, target, imported, Fields::Version2);
        QCOMPARE(target.listIterations(imported).size(), std::size_t(5));
        QVERIFY(target.checkIntegrity().empty());
        QCOMPARE(recorded.cacheKeys.size(), std::size_t(4));
        for (const auto& key : recorded.cacheKeys)
            QVERIFY(target.cacheLookup(key));

        // It goes on as a version-3 session, and exports as one.
        const auto ref = target.beginIteration(imported, std::nullopt, 3);
        QCOMPARE(ref.index, 6);
        target.finishIteration(ref, "proposer-error");
        SessionSummary resumed;
        resumed.stopReason = "resumed";
        target.recordSessionSummary(imported, resumed);
        const auto again = freshPath("export");
        target.exportSession(imported, again);
        auto third = Store::open(freshPath());
        const auto reimported = third.importSession(again);
        QCOMPARE(*third.listIterations(reimported).back().round, 3);
        QCOMPARE(third.session(reimported)->summary->stopReason, std::optional<std::string>("resumed"));

        RawDb raw(file);
        QCOMPARE(raw.integer("PRAGMA user_version"), 2); // migrated in memory only
        KL_COMPARE_TEXT(kl::store::testing::dumpRows(raw, kl::store::testing::tableColumns(raw)), before);
    }

    void badFilesAreRefusedAndNothingIsHalfImported_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("category");
        QTest::newRow("text file") << QStringLiteral("text") << QStringLiteral("store.import-not-a-database");
        QTest::newRow("missing file") << QStringLiteral("missing") << QStringLiteral("store.open-failed");
        QTest::newRow("truncated") << QStringLiteral("truncated") << QStringLiteral("store.import-corrupt");
        QTest::newRow("another application")
            << QStringLiteral("foreign") << QStringLiteral("store.import-not-kernelloop");
        QTest::newRow("empty database") << QStringLiteral("empty") << QStringLiteral("store.import-malformed");
        QTest::newRow("newer version") << QStringLiteral("newer") << QStringLiteral("store.import-newer-version");
        QTest::newRow("two sessions") << QStringLiteral("two-sessions") << QStringLiteral("store.import-malformed");
        // These fail late, after earlier tables were copied: the transaction must undo them.
        QTest::newRow("bad JSON in the last table")
            << QStringLiteral("bad-json") << QStringLiteral("store.import-malformed");
        QTest::newRow("source does not match its hash")
            << QStringLiteral("bad-hash") << QStringLiteral("store.import-malformed");
        QTest::newRow("dangling parent") << QStringLiteral("dangling") << QStringLiteral("store.import-malformed");
        // SQLite's integrity check sees a broken CHECK constraint before any row is copied.
        QTest::newRow("unknown decision kind") << QStringLiteral("bad-kind") << QStringLiteral("store.import-corrupt");
    }

    void badFilesAreRefusedAndNothingIsHalfImported()
    {
        QFETCH(QString, damage);
        QFETCH(QString, category);
        std::string file = goodExport();
        auto write = [&](const QByteArray& bytes) {
            QFile out(QString::fromStdString(file));
            QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
            out.write(bytes);
        };
        if (damage == QStringLiteral("text")) {
            write("{\"sessions\": []}\n");
        } else if (damage == QStringLiteral("missing")) {
            file += ".gone";
        } else if (damage == QStringLiteral("truncated")) {
            std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
        } else if (damage == QStringLiteral("foreign")) {
            file = freshPath("foreign");
            RawDb raw(file);
            raw.exec("CREATE TABLE notes (text TEXT)");
        } else if (damage == QStringLiteral("empty")) {
            file = freshPath("empty");
            RawDb raw(file);
            raw.exec("PRAGMA application_id = " + std::to_string(kApplicationId)
                + "; PRAGMA user_version = " + std::to_string(kSchemaVersion));
        } else {
            RawDb raw(file);
            raw.exec("PRAGMA foreign_keys = OFF");
            if (damage == QStringLiteral("newer"))
                raw.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
            else if (damage == QStringLiteral("two-sessions"))
                raw.exec("INSERT INTO sessions (problem_hash, device, proposer, mode, config_json, started_ms, status) "
                         "SELECT problem_hash, device, proposer, mode, config_json, started_ms, status FROM sessions");
            else if (damage == QStringLiteral("bad-json"))
                raw.exec("UPDATE llm_exchanges SET request_json = '{\"model\": ' WHERE id = (SELECT MAX(id) FROM "
                         "llm_exchanges)");
            else if (damage == QStringLiteral("bad-hash"))
                raw.exec(
                    "UPDATE sources SET text = text || '// tampered' WHERE rowid = (SELECT MAX(rowid) FROM sources)");
            else if (damage == QStringLiteral("dangling"))
                raw.exec("UPDATE candidates SET parent_id = 4242 WHERE id = (SELECT MAX(id) FROM candidates)");
            else if (damage == QStringLiteral("bad-kind"))
                raw.exec("PRAGMA ignore_check_constraints = ON; UPDATE decisions SET kind = 'shrug' WHERE id = "
                         "(SELECT MAX(id) FROM decisions)");
        }

        const auto [path, before] = targetStore();
        {
            auto store = Store::open(path);
            KL_COMPARE_TEXT(fx::errorCategory([&] { store.importSession(file); }), category.toStdString());
            QVERIFY(store.checkIntegrity().empty());
            QCOMPARE(store.listSessions().size(), std::size_t(1));
        }
        KL_COMPARE_TEXT(tableCounts(path), before);
    }
};

QTEST_GUILESS_MAIN(TestStoreTransfer)
#include "test_store_transfer.moc"
