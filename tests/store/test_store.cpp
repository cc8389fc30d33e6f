// The store's API on real SQLite files: problems, sessions, candidates, recording iterations,
// listing and detail, the evaluation cache, and what is (and is not) written when.
#include "core/model/problem.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>

using namespace kl::store;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

class TestStore : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_files = 0;
    std::string freshPath() { return m_dir.filePath(QStringLiteral("store-%1.db").arg(++m_files)).toStdString(); }

    static SessionRecord sessionFor(const std::string& problemHash)
    {
        SessionRecord session;
        session.problemHash = problemHash;
        session.device = "NVIDIA H200 #0";
        session.deviceInfo = { { "name", "NVIDIA H200" }, { "sm_count", 132 } };
        session.proposer = "tuner";
        session.mode = "review";
        session.config = { { "budget", 40 }, { "target_speedup", 2.5 } };
        return session;
    }

private slots:
    void newFileIsWalWithVersionAndForeignKeys()
    {
        const auto path = freshPath();
        {
            auto store = Store::open(path);
            QCOMPARE(Store::schemaVersion(), 2);
            QVERIFY(store.checkIntegrity().empty());
        }
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.text("PRAGMA journal_mode"), "wal");
        QCOMPARE(raw.integer("PRAGMA user_version"), 2);
        QCOMPARE(raw.integer("PRAGMA application_id"), 0x4b4c4f50);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"), 11);
    }

    void problemsAreContentAddressedLikeProblemContentHash()
    {
        const auto problem
            = kl::loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json");
        const auto record = problemRecord(problem);
        KL_COMPARE_TEXT(record.hash, problem.contentHash);

        auto store = Store::open(freshPath());
        KL_COMPARE_TEXT(store.addProblem(record), problem.contentHash);
        KL_COMPARE_TEXT(store.addProblem(record), problem.contentHash); // again: the same row
        const auto back = store.problem(problem.contentHash);
        QVERIFY(back);
        KL_COMPARE_TEXT(back->json, record.json);
        KL_COMPARE_TEXT(back->baselineSource, problem.baseline.source);
        KL_COMPARE_TEXT(back->name, "layernorm_gelu");
        QVERIFY(!store.problem("0000000000000000"));
    }

    void sessionsListNewestFirstWithBest()
    {
        auto store = Store::open(freshPath());
        const auto hash = store.addProblem(fx::problem());
        auto first = sessionFor(hash);
        first.startedMs = 1000;
        auto second = sessionFor(hash);
        second.startedMs = 2000;
        second.label = "second";
        const auto a = store.createSession(first);
        const auto b = store.createSession(second);

        const auto iteration = store.beginIteration(a, store.addCandidate(a, fx::candidate(1)));
        store.recordResult(iteration, fx::passedResult(1));
        store.finishIteration(iteration);
        const auto failing = store.beginIteration(a, store.addCandidate(a, fx::candidate(2)));
        auto failed = fx::failedResult(2);
        failed.speedup = 99.0; // a failed result never counts as the best
        store.recordResult(failing, failed);
        store.finishIteration(failing);
        store.finishSession(a, "finished", 5000);

        const auto rows = store.listSessions();
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(rows[0].session.id, b);
        KL_COMPARE_TEXT(rows[0].session.label, "second");
        QCOMPARE(rows[0].iterations, 0);
        QVERIFY(!rows[0].bestSpeedup);
        QCOMPARE(rows[1].session.id, a);
        QCOMPARE(rows[1].iterations, 2);
        QCOMPARE(*rows[1].bestSpeedup, *fx::passedResult(1).speedup);
        QCOMPARE(*rows[1].bestMedianUs, *fx::passedResult(1).medianUs);
        KL_COMPARE_TEXT(rows[1].session.status, "finished");
        QCOMPARE(*rows[1].session.endedMs, std::int64_t(5000));
        KL_COMPARE_TEXT(rows[1].session.problemName, "layernorm_gelu");
        QCOMPARE(rows[1].session.config["budget"].get<int>(), 40);
        QCOMPARE(rows[1].session.deviceInfo["sm_count"].get<int>(), 132);

        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.createSession(sessionFor("ffffffffffffffff")); }), "store.unknown-problem");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.finishSession(999, "finished"); }), "store.unknown-session");
    }

    void candidatesShareSourcesAndKeepParentsInTheirSession()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto hash = store.addProblem(fx::problem());
        const auto s1 = store.createSession(sessionFor(hash));
        const auto s2 = store.createSession(sessionFor(hash));
        const auto parent = store.addCandidate(s1, fx::candidate(0));
        const auto child = store.addCandidate(s1, fx::candidate(5, parent)); // same source as 0 (seed % 5)
        const auto back = store.candidate(child);
        QVERIFY(back);
        QCOMPARE(*back->parentId, parent);
        QCOMPARE(back->sessionId, s1);
        KL_COMPARE_TEXT(back->source, fx::candidate(5).source);
        QCOMPARE(back->tunables, fx::candidate(5).tunables);
        QVERIFY(back->proposer == fx::candidate(5).proposer);
        KL_COMPARE_TEXT(back->hypothesis, fx::candidate(5).hypothesis);

        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.addCandidate(s2, fx::candidate(1, parent)); }), "store.bad-parent");
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.addCandidate(s1, fx::candidate(1, 12345)); }), "store.bad-parent");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.addCandidate(777, fx::candidate(1)); }), "store.unknown-session");
        RawDb raw(path);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sources"), 1);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM candidates"), 2);
    }

    void anIterationIsInvisibleUntilFinishedThenComplete()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
        const auto parent = store.addCandidate(session, fx::candidate(1));
        const auto candidate = store.addCandidate(session, fx::candidate(2, parent));

        const auto ref = store.beginIteration(session);
        QCOMPARE(ref.index, 1);
        store.recordExchange(ref, fx::exchange(2));
        store.setCandidate(ref, candidate);
        store.recordResult(ref, fx::passedResult(2));
        store.recordFindings(ref, fx::findings(2));
        DecisionRecord steer;
        steer.kind = DecisionRecord::Kind::Steer;
        steer.steering = "try warp-per-row";
        store.recordDecision(ref, steer);

        // Another reader of the same file sees nothing of it yet.
        auto reader = Store::open(path);
        QVERIFY(reader.listIterations(session).empty());
        QVERIFY(store.listIterations(session).empty());
        QVERIFY(!store.iteration(session, 1));

        const auto committed = store.finishIteration(ref);
        QCOMPARE(committed.index, 1);
        QVERIFY(committed.resultId);
        QCOMPARE(*committed.candidateId, candidate);

        const auto rows = reader.listIterations(session);
        QCOMPARE(rows.size(), std::size_t(1));
        const auto& row = rows[0];
        QCOMPARE(row.index, 1);
        QVERIFY(row.proposer == fx::candidate(2).proposer);
        KL_COMPARE_TEXT(row.state, "done");
        KL_COMPARE_TEXT(row.status, "ok");
        KL_COMPARE_TEXT(row.category, "passed");
        QCOMPARE(*row.medianUs, *fx::passedResult(2).medianUs);
        QCOMPARE(*row.gbps, *fx::passedResult(2).gbps);
        QCOMPARE(*row.pctOfCopy, *fx::passedResult(2).pctOfCopy);
        QCOMPARE(*row.speedup, *fx::passedResult(2).speedup);
        KL_COMPARE_TEXT(row.topFindingRule, "bandwidth.under-ceiling");
        KL_COMPARE_TEXT(row.topFindingMessage, "DRAM at 41% of the copy ceiling");
        QVERIFY(row.lastDecision == DecisionRecord::Kind::Steer);
        QVERIFY(row.endedMs >= row.startedMs);

        const auto detail = reader.iteration(session, 1);
        QVERIFY(detail);
        KL_COMPARE_TEXT(detail->candidate->source, fx::candidate(2).source);
        KL_COMPARE_TEXT(detail->parent->source, fx::candidate(1).source); // for the diff
        const auto expected = fx::passedResult(2);
        KL_COMPARE_JSON(detail->result->timing, expected.timing);
        KL_COMPARE_JSON(detail->result->verification, expected.verification);
        KL_COMPARE_JSON(detail->result->compile, expected.compile);
        QCOMPARE(detail->result->metrics, expected.metrics);
        QCOMPARE(*detail->result->p20Us, *expected.p20Us);
        QCOMPARE(*detail->result->smClockMhz, 1980.0);
        QCOMPARE(detail->findings.size(), std::size_t(3));
        KL_COMPARE_TEXT(detail->findings[1].ruleId, "occupancy.register-limited");
        QCOMPARE(detail->findings[1].directions, fx::findings(2)[1].directions);
        KL_COMPARE_JSON(detail->findings[0].evidence, fx::findings(2)[0].evidence);
        QCOMPARE(detail->decisions.size(), std::size_t(1));
        KL_COMPARE_TEXT(detail->decisions[0].steering, "try warp-per-row");
        QCOMPARE(detail->exchanges.size(), std::size_t(1));
        KL_COMPARE_TEXT(detail->exchanges[0].response, fx::exchange(2).response);
        QCOMPARE(*detail->exchanges[0].latencyMs, 2502.0);
        KL_COMPARE_JSON(detail->exchanges[0].usage, fx::exchange(2).usage);
    }

    void exchangesNeverStoreKeys()
    {
        const auto path = freshPath();
        {
            auto store = Store::open(path);
            const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
            const auto ref = store.beginIteration(session);
            auto exchange = fx::exchange(1);
            exchange.request["api_key"] = "sk-live-123";
            exchange.request["auth"] = { { "access_token", "tok-456" } };
            store.recordExchange(ref, exchange);
            store.finishIteration(ref, "proposer-error");
            const auto detail = store.iteration(session, 1);
            const auto& request = detail->exchanges[0].request;
            KL_COMPARE_TEXT(request["headers"]["Authorization"].get<std::string>(), "[redacted]");
            KL_COMPARE_TEXT(request["auth"]["access_token"].get<std::string>(), "[redacted]");
            QCOMPARE(request["max_tokens"].get<int>(), 4096); // not a credential
            KL_COMPARE_TEXT(detail->row.state, "proposer-error");
            QVERIFY(!detail->result);
        }
        RawDb raw(path);
        raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM llm_exchanges WHERE request_json LIKE '%sk-%' "
                             "OR request_json LIKE '%tok-456%'"),
            0);
        QFile file(QString::fromStdString(path));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(!file.readAll().contains("sk-live-123"));
    }

    void iterationErrorsAndAbandon()
    {
        auto store = Store::open(freshPath());
        const auto hash = store.addProblem(fx::problem());
        const auto session = store.createSession(sessionFor(hash));
        const auto other = store.createSession(sessionFor(hash));
        const auto foreign = store.addCandidate(other, fx::candidate(1));

        KL_COMPARE_TEXT(fx::errorCategory([&] { store.beginIteration(999); }), "store.unknown-session");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.beginIteration(session, foreign); }), "store.unknown-candidate");
        const auto a = store.beginIteration(session);
        const auto b = store.beginIteration(session);
        QCOMPARE(b.index, a.index + 1); // pending indices are reserved
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.recordFindings(a, fx::findings(1)); }), "store.findings-without-result");
        store.abandonIteration(a);
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.recordResult(a, fx::passedResult(1)); }), "store.no-such-iteration");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.finishIteration(a); }), "store.no-such-iteration");
        store.finishIteration(b);
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.finishIteration(b); }), "store.no-such-iteration");
        QCOMPARE(store.listIterations(session).size(), std::size_t(1));
        QCOMPARE(store.listIterations(session)[0].index, 2);
        QCOMPARE(store.beginIteration(session).index, 3);
    }

    void decisionsOnFinishedIterationsAreWrittenAtOnce()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
        const auto candidate = store.addCandidate(session, fx::candidate(1));
        const auto ref = store.beginIteration(session, candidate);
        store.recordResult(ref, fx::passedResult(1));
        DecisionRecord keep;
        keep.kind = DecisionRecord::Kind::AutoKeep;
        store.recordDecision(ref, keep);
        store.finishIteration(ref);

        const auto edited = store.addCandidate(session, fx::candidate(2, candidate));
        DecisionRecord replace;
        replace.kind = DecisionRecord::Kind::Replace;
        replace.reason = "hand-edited the epilogue";
        replace.replacementCandidateId = edited;
        store.recordDecision(ref, replace);

        auto reader = Store::open(path);
        const auto detail = reader.iteration(session, 1);
        QCOMPARE(detail->decisions.size(), std::size_t(2));
        QVERIFY(detail->decisions[1].kind == DecisionRecord::Kind::Replace);
        QCOMPARE(*detail->decisions[1].replacementCandidateId, edited);
        QVERIFY(detail->row.lastDecision == DecisionRecord::Kind::Replace);
        KL_COMPARE_TEXT(fx::errorCategory([&] {
            store.recordDecision({ session, 42 }, keep);
        }),
            "store.no-such-iteration");
    }

    void evaluationCacheAcrossSessionsAndStores()
    {
        EvaluationKey key;
        key.source = fx::candidate(1).source;
        key.tunables = { { "THREADS", 256 }, { "VEC", 4 } };
        key.problemHash = "0123456789abcdef";
        key.device = "NVIDIA H200";
        key.toolkit = "13.0";
        const auto k = evaluationCacheKey(key);
        QCOMPARE(evaluationCacheKey(key), k);
        auto changed = key;
        changed.tunables["VEC"] = 8;
        QVERIFY(evaluationCacheKey(changed) != k);
        changed = key;
        changed.toolkit = "13.1";
        QVERIFY(evaluationCacheKey(changed) != k);
        changed = key;
        changed.device = "NVIDIA H100";
        QVERIFY(evaluationCacheKey(changed) != k);

        const auto path = freshPath();
        std::int64_t resultId = 0;
        {
            auto store = Store::open(path);
            QVERIFY(!store.cacheLookup(k));
            const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
            const auto ref = store.beginIteration(session, store.addCandidate(session, fx::candidate(1)));
            store.recordResult(ref, fx::passedResult(7));
            resultId = *store.finishIteration(ref).resultId;
            store.cacheStore(k, resultId);
            KL_COMPARE_TEXT(fx::errorCategory([&] { store.cacheStore("x", 4242); }), "store.unknown-result");
        }
        auto later = Store::open(path); // another process, another day
        const auto hit = later.cacheLookup(k);
        QVERIFY(hit);
        QCOMPARE(hit->id, resultId);
        QCOMPARE(*hit->medianUs, *fx::passedResult(7).medianUs);
        QCOMPARE(hit->metrics, fx::passedResult(7).metrics);
        KL_COMPARE_JSON(hit->timing, fx::passedResult(7).timing);
        QVERIFY(!later.cacheLookup(evaluationCacheKey(changed)));
    }

    void runnerReplyBecomesAResult()
    {
        // As docs/runner-protocol.md shows it, with a second main size.
        const auto reply = nlohmann::json::parse(R"({"v":1,"id":"8","type":"result","status":"ok","category":"passed",
          "detail":"all cases passed","device":{"name":"NVIDIA H200","sm_clock_mhz":1980,"runtime_toolkit":"13.0"},
          "verification":{"passed":true,"cases":[]},
          "timing":{"sm_clock_mhz":1755,"cases":[
            {"label":"8192x4096","candidate":{"median_us":48.0,"p20_us":47.0,"p80_us":49.0,"cv":0.01,"samples_us":[48.0]},
             "gbps":2700.0,"pct_of_copy":72.0,"speedup_vs_baseline":2.0},
            {"label":"4096x4096","candidate":{"median_us":27.0,"p20_us":26.5,"p80_us":27.5,"cv":0.03},
             "gbps":2400.0,"pct_of_copy":50.0,"speedup_vs_baseline":4.5}]},
          "profile":{"status":"ok","kernels":[{"kernel":"ln_gelu","case":"8192x4096",
             "metrics":{"gpu__time_duration.sum":47900.0,"dram__throughput.avg.pct_of_peak_sustained_elapsed":41.5}}]}})");
        const auto result = resultFromRunnerReply(reply);
        KL_COMPARE_TEXT(result.status, "ok");
        KL_COMPARE_TEXT(result.category, "passed");
        KL_COMPARE_TEXT(result.detail, "all cases passed");
        KL_COMPARE_TEXT(result.toolkit, "13.0");
        QCOMPARE(*result.smClockMhz, 1755.0); // the clock while timing, not at describe time
        QCOMPARE(*result.medianUs, 36.0); // geometric mean of 48 and 27
        QCOMPARE(*result.speedup, 3.0); // of 2 and 4.5
        QCOMPARE(*result.pctOfCopy, 60.0); // of 72 and 50
        QCOMPARE(*result.cv, 0.03); // the worst case
        QVERIFY(std::abs(*result.gbps - std::sqrt(2700.0 * 2400.0)) < 1e-9);
        QCOMPARE(result.metrics.size(), std::size_t(2));
        QCOMPARE(result.metrics.at("ln_gelu/8192x4096/dram__throughput.avg.pct_of_peak_sustained_elapsed"), 41.5);
        QCOMPARE(result.timing["cases"][0]["candidate"]["samples_us"][0].get<double>(), 48.0);

        const auto failed = resultFromRunnerReply(
            nlohmann::json::parse(
                R"({"status":"failed","category":"wrong-result","timing":null,"verification":{"passed":false}})"),
            "13.0");
        KL_COMPARE_TEXT(failed.category, "wrong-result");
        QVERIFY(!failed.medianUs && !failed.speedup && failed.timing.is_null());
        KL_COMPARE_TEXT(failed.toolkit, "13.0");
    }

    void readOnlyStoreReadsAndRefusesWrites()
    {
        const auto path = freshPath();
        std::int64_t session = 0;
        {
            auto store = Store::open(path);
            session = store.createSession(sessionFor(store.addProblem(fx::problem())));
        }
        Store::Options options;
        options.readOnly = true;
        auto store = Store::open(path, options);
        QCOMPARE(store.listSessions().size(), std::size_t(1));
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.addCandidate(session, fx::candidate(1)); }), "store.read-only");
        KL_COMPARE_TEXT(fx::errorCategory(
                            [&] { Store::open(m_dir.filePath(QStringLiteral("missing.db")).toStdString(), options); }),
            "store.open-failed");
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "test_store.moc"
