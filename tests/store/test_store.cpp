// The store's API on real SQLite files: problems, sessions, candidates, recording iterations,
// listing and detail, the evaluation cache, and what is (and is not) written when.
#include "core/model/problem.h"
#include "core/store/compile_columns.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <cmath>

using namespace kl::store;
using kl::Exchange;
using kl::ExchangeCategory;
using kl::PromptMessage;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

class TestStore : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    fx::FreshPaths freshPath { m_dir };

    static SessionRecord sessionFor(const std::string& problemHash)
    {
        SessionRecord session;
        session.problemHash = problemHash;
        session.device = "NVIDIA H200 #0";
        session.deviceInfo = fx::passedResult(0).device;
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
            QCOMPARE(Store::schemaVersion(), 8);
            QVERIFY(store.checkIntegrity().empty());
        }
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.text("PRAGMA journal_mode"), "wal");
        QCOMPARE(raw.integer("PRAGMA user_version"), 8);
        QCOMPARE(raw.integer("PRAGMA application_id"), 0x4b4c4f50);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"), 14);
        QCOMPARE(
            raw.integer("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'results_verified'"), 1);
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
        QCOMPARE(rows[1].session.deviceInfo.value().smCount, 132);

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
        QVERIFY(!back->predictedSpeedup); // the proposer predicted nothing

        auto predicted = fx::candidate(3, child);
        predicted.predictedSpeedup = 1.5;
        const auto withPrediction = store.addCandidate(s1, predicted);
        QCOMPARE(*store.candidate(withPrediction)->predictedSpeedup, 1.5);

        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.addCandidate(s2, fx::candidate(1, parent)); }), "store.bad-parent");
        KL_COMPARE_TEXT(
            fx::errorCategory([&] { store.addCandidate(s1, fx::candidate(1, 12345)); }), "store.bad-parent");
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.addCandidate(777, fx::candidate(1)); }), "store.unknown-session");
        RawDb raw(path);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM sources"), 2);
        QCOMPARE(raw.integer("SELECT COUNT(*) FROM candidates"), 3);
        KL_COMPARE_TEXT(raw.text("SELECT quote(predicted_speedup) FROM candidates ORDER BY id"), "NULL"); // not 0
        KL_COMPARE_TEXT(
            raw.text("SELECT predicted_speedup FROM candidates WHERE id = " + std::to_string(withPrediction)), "1.5");
    }

    void iterationsListTheirRoundAndTheHypothesisLog()
    {
        const auto path = freshPath();
        auto store = Store::open(path);
        const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
        const auto baseline = store.addCandidate(session, fx::candidate(0));
        auto first = fx::candidate(1, baseline);
        first.predictedSpeedup = 1.5;
        auto second = fx::candidate(2, baseline);
        second.hypothesis = "";
        const auto a = store.addCandidate(session, first);
        const auto b = store.addCandidate(session, second);

        store.finishIteration(store.beginIteration(session, baseline, 0));
        // Two candidates of round 1, finished out of order; a proposer error in round 2; no round at all.
        const auto refA = store.beginIteration(session, a, 1);
        const auto refB = store.beginIteration(session, b, 1);
        store.recordResult(refB, fx::passedResult(2));
        store.finishIteration(refB);
        store.recordResult(refA, fx::passedResult(1));
        store.finishIteration(refA);
        store.finishIteration(store.beginIteration(session, std::nullopt, 2), "proposer-error");
        const auto late = store.beginIteration(session);
        store.setCandidate(late, a);
        store.finishIteration(late);

        const auto rows = store.listIterations(session);
        QCOMPARE(rows.size(), std::size_t(5));
        QCOMPARE(*rows[0].round, 0);
        QCOMPARE(*rows[1].round, 1);
        QCOMPARE(*rows[2].round, 1);
        QCOMPARE(*rows[3].round, 2);
        QVERIFY(!rows[4].round);
        KL_COMPARE_TEXT(rows[0].hypothesis, fx::candidate(0).hypothesis);
        QVERIFY(!rows[0].predictedSpeedup);
        QCOMPARE(*rows[1].candidateId, a);
        KL_COMPARE_TEXT(rows[1].hypothesis, first.hypothesis);
        QCOMPARE(*rows[1].predictedSpeedup, 1.5);
        QCOMPARE(*rows[1].speedup, *fx::passedResult(1).speedup); // measured, beside predicted
        QCOMPARE(*rows[2].candidateId, b);
        KL_COMPARE_TEXT(rows[2].hypothesis, "");
        QVERIFY(!rows[2].predictedSpeedup);
        KL_COMPARE_TEXT(rows[3].hypothesis, ""); // no candidate
        QVERIFY(!rows[3].predictedSpeedup);
        KL_COMPARE_TEXT(rows[3].state, "proposer-error");
        QCOMPARE(*rows[4].predictedSpeedup, 1.5); // set after beginIteration

        const auto detail = store.iteration(session, 2);
        QCOMPARE(*detail->row.round, 1);
        QCOMPARE(*detail->row.predictedSpeedup, 1.5);
        QCOMPARE(*detail->candidate->predictedSpeedup, 1.5);
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.text("SELECT quote(round) FROM iterations WHERE idx = 5"), "NULL");
    }

    // Readers outside the store (the session list, the transcript) read typed fields, never keys; the
    // columns hold the text the loop always wrote.
    void summaryAndExchangeColumnsReadAsValues()
    {
        const auto path = freshPath();
        std::int64_t session = 0;
        {
            auto store = Store::open(path);
            session = store.createSession(sessionFor(store.addProblem(fx::problem())));
            QVERIFY(!summaryBestPctOfCopy(*store.session(session)));
            SessionSummary summary;
            summary.bestPctOfCopy = 81.5;
            summary.bestSpeedup = 2.0;
            store.recordSessionSummary(session, summary);
            const auto ref = store.beginIteration(session);
            ExchangeRecord anthropic = fx::exchange(3); // the system prompt beside the messages
            anthropic.exchange.requestBody = R"({"max_tokens":16,"messages":[{"content":"iteration 3","role":"user"}],)"
                                             R"("model":"claude","system":"You write CUDA kernels."})";
            store.recordExchange(ref, anthropic);
            ExchangeRecord failed = fx::exchange(4); // nothing sent, no choices: the body is the response
            failed.exchange.requestBody.clear();
            failed.exchange.choices.clear();
            failed.exchange.response = R"({"error":"overloaded"})";
            failed.exchange.usage = {};
            failed.exchange.category = ExchangeCategory::Http5xx;
            failed.exchange.message = "HTTP 503";
            store.recordExchange(ref, failed);
            ExchangeRecord three = fx::exchange(5); // n = 3
            three.exchange.choices = { { "first", "stop" }, { "second", "length" }, { "third", "stop" } };
            store.recordExchange(ref, three);
            store.finishIteration(ref);
        }
        const auto reader = Store::open(path);
        QCOMPARE(summaryBestPctOfCopy(*reader.session(session)), std::optional<double>(81.5));
        QCOMPARE(summaryBestPctOfCopy(reader.listSessions().at(0).session), std::optional<double>(81.5));
        const auto detail = reader.iteration(session, 1);
        QVERIFY(detail);
        QCOMPARE(detail->exchanges.size(), std::size_t { 3 });
        const Exchange& first = detail->exchanges[0].exchange;
        KL_COMPARE_TEXT(detail->exchanges[0].role, "coder");
        const std::vector<PromptMessage> expected
            = { { "system", "You write CUDA kernels." }, { "user", "iteration 3" } };
        QVERIFY(first.prompt == expected);
        QCOMPARE(first.usage.promptTokens, 1200LL);
        QCOMPARE(first.usage.completionTokens, 303LL);
        QVERIFY(first.usage.reported);
        QCOMPARE(first.choices.size(), std::size_t { 1 });
        KL_COMPARE_TEXT(first.choices[0].finishReason, "stop");
        QCOMPARE(first.httpStatus, 200);
        QCOMPARE(first.latencyMs, 2503.0);

        const Exchange& failed = detail->exchanges[1].exchange;
        QVERIFY(failed.prompt.empty() && failed.requestBody.empty() && failed.choices.empty());
        QVERIFY(!failed.usage.reported); // tokens the provider did not report are not shown
        QCOMPARE(failed.category, ExchangeCategory::Http5xx);
        KL_COMPARE_TEXT(failed.response, R"({"error":"overloaded"})");
        KL_COMPARE_TEXT(failed.message, "HTTP 503");

        const Exchange& three = detail->exchanges[2].exchange;
        QCOMPARE(three.choices.size(), std::size_t { 3 });
        KL_COMPARE_TEXT(three.choices[1].text, "second");
        KL_COMPARE_TEXT(three.choices[0].finishReason, "stop");
        KL_COMPARE_TEXT(three.choices[1].finishReason, ""); // only the first choice's is kept
        KL_COMPARE_TEXT(
            replyText(three), "--- choice 1 ---\nfirst\n\n--- choice 2 ---\nsecond\n\n--- choice 3 ---\nthird");

        RawDb raw(path);
        KL_COMPARE_TEXT(
            raw.text("SELECT summary_json FROM sessions"), R"({"best_pct_of_copy":81.5,"best_speedup":2.0})");
        KL_COMPARE_TEXT(raw.text("SELECT request_json FROM llm_exchanges ORDER BY id LIMIT 1 OFFSET 1"), "null");
        KL_COMPARE_TEXT(raw.text("SELECT category FROM llm_exchanges ORDER BY id LIMIT 1 OFFSET 1"), "http-5xx");
        KL_COMPARE_TEXT(raw.text("SELECT usage_json FROM llm_exchanges ORDER BY id LIMIT 1"),
            R"({"attempts":1,"completion_tokens":303,"finish_reason":"stop","first_token_ms":-1.0,"http_status":200,)"
            R"("message":"","prompt_tokens":1200,"reported":true,"retry_wait_ms":0.0,"served_model":"",)"
            R"("started_at":"","streamed":false,"url":""})");
        // An unknown category (a newer build's) reads as bad-json and says so; the rest of the row reads.
        raw.exec("UPDATE llm_exchanges SET category = 'from-the-future'");
        const auto unknown = Store::open(path).iteration(session, 1);
        QCOMPARE(unknown->exchanges[0].exchange.category, ExchangeCategory::BadJson);
        QCOMPARE(unknown->exchanges[0].unreadable.size(), std::size_t { 1 });
        KL_COMPARE_TEXT(unknown->exchanges[0].unreadable[0].where(), "llm_exchanges.category");
        KL_COMPARE_TEXT(unknown->exchanges[0].exchange.choices.at(0).text, fx::exchange(3).exchange.text());
    }

    void sessionSummaryIsWrittenAndRead()
    {
        auto store = Store::open(freshPath());
        const auto hash = store.addProblem(fx::problem());
        const auto session = store.createSession(sessionFor(hash));
        QVERIFY(!store.session(session)->summary);
        QVERIFY(!store.listSessions().at(0).session.summary);

        SessionSummary summary;
        summary.stopReason = "target";
        summary.rounds = 4;
        summary.bestSpeedup = 2.75;
        summary.passAtK = 0.75;
        summary.compiledAhead = SessionSummary::CompiledAhead { 3, 1 };
        store.recordSessionSummary(session, summary);
        QVERIFY(store.session(session)->summary == summary);
        QVERIFY(store.listSessions().at(0).session.summary == summary);
        KL_COMPARE_JSON(store.listSessions().at(0).session.config, sessionFor(hash).config); // columns still line up
        QCOMPARE(store.listSessions().at(0).iterations, 0);

        SessionSummary cancelled;
        cancelled.stopReason = "cancelled";
        store.recordSessionSummary(session, cancelled); // replaced, not merged
        QVERIFY(store.session(session)->summary == cancelled);
        QVERIFY(!store.session(session)->summary->rounds);
        store.recordSessionSummary(session, std::nullopt);
        QVERIFY(!store.session(session)->summary);

        auto withSummary = sessionFor(hash);
        withSummary.summary = SessionSummary {};
        withSummary.summary->cancelled = true;
        const auto other = store.createSession(withSummary);
        QCOMPARE(store.session(other)->summary->cancelled, std::optional<bool>(true));
        KL_COMPARE_TEXT(fx::errorCategory([&] { store.recordSessionSummary(999, summary); }), "store.unknown-session");
    }

    void bestVerifiedCandidatesAreTheExamples()
    {
        auto store = Store::open(freshPath());
        const auto layernorm = store.addProblem(fx::problem("layernorm_gelu"));
        auto edited = fx::problem("layernorm_gelu"); // the same problem, its file edited since
        edited.json += " ";
        const auto layernormEdited = store.addProblem(edited);
        QVERIFY(layernormEdited != layernorm);
        const auto softmax = store.addProblem(fx::problem("softmax"));

        std::int64_t started = 1000;
        auto newSession = [&](const std::string& hash) {
            auto record = sessionFor(hash);
            record.startedMs = started += 1000;
            return store.createSession(record);
        };
        int seed = 0;
        // One iteration; returns its candidate (none when `withCandidate` is false).
        auto evaluate = [&](std::int64_t session, const std::string& status, const std::string& category,
                            std::optional<double> speedup, bool withCandidate = true) {
            std::optional<std::int64_t> candidate;
            if (withCandidate)
                candidate = store.addCandidate(session, fx::candidate(++seed));
            const auto ref = store.beginIteration(session, candidate, 1);
            auto result = fx::passedResult(seed);
            result.status = status;
            result.category = category;
            result.speedup = speedup;
            result.medianUs = 100.0 / speedup.value_or(1.0);
            result.pctOfCopy = 10.0 * speedup.value_or(0.0);
            store.recordResult(ref, result);
            store.finishIteration(ref);
            return candidate.value_or(0);
        };

        const auto s1 = newSession(layernorm);
        evaluate(s1, "ok", "passed", 1.5);
        const auto s1Best = evaluate(s1, "ok", "passed", 2.0);
        evaluate(s1, "ok", "passed", 2.0); // a tie: the earlier iteration is the example
        evaluate(s1, "failed", "passed", 9.0); // not ok
        evaluate(s1, "ok", "wrong-result", 9.0); // not passed
        evaluate(s1, "error", "runner.crashed", 9.0);
        evaluate(s1, "ok", "passed", std::nullopt); // not timed

        const auto s2 = newSession(layernormEdited);
        const auto s2Best = evaluate(s2, "ok", "passed", 1.2);
        evaluate(s2, "ok", "passed", 5.0, false); // no candidate to show

        const auto s3 = newSession(softmax);
        const auto s3Best = evaluate(s3, "ok", "passed", 3.0);
        const auto s4 = newSession(softmax);
        const auto s4Best = evaluate(s4, "ok", "passed", 1.1);

        const auto s5 = newSession(layernorm); // nothing faster than the baseline
        evaluate(s5, "ok", "passed", 1.0);
        evaluate(s5, "ok", "passed", 0.7);
        evaluate(s5, "failed", "wrong-result", std::nullopt);

        const auto s6 = newSession(layernorm); // the best of all, but excluded below
        const auto s6Best = evaluate(s6, "ok", "passed", 2.5);

        auto sessionsOf = [](const std::vector<ExampleRow>& rows) {
            std::vector<std::int64_t> ids;
            for (const auto& row : rows)
                ids.push_back(row.sessionId);
            return ids;
        };
        using Ids = std::vector<std::int64_t>;

        const auto rows = store.bestVerifiedCandidates("layernorm_gelu", { s6 }, 10);
        QCOMPARE(sessionsOf(rows), (Ids { s1, s2, s3, s4 })); // same name first, even below softmax's 3.0
        const auto& best = rows[0];
        KL_COMPARE_TEXT(best.problemName, "layernorm_gelu");
        KL_COMPARE_TEXT(best.problemHash, layernorm);
        QCOMPARE(best.candidateId, s1Best);
        KL_COMPARE_TEXT(best.source, fx::candidate(2).source);
        QCOMPARE(best.tunables, fx::candidate(2).tunables);
        QCOMPARE(best.speedup, 2.0);
        QCOMPARE(*best.medianUs, 50.0);
        QCOMPARE(*best.pctOfCopy, 20.0);
        KL_COMPARE_TEXT(rows[1].problemHash, layernormEdited);
        QCOMPARE(rows[1].candidateId, s2Best);
        QCOMPARE(rows[1].speedup, 1.2);
        KL_COMPARE_TEXT(rows[2].problemName, "softmax");
        QCOMPARE(rows[2].candidateId, s3Best);
        QCOMPARE(rows[2].speedup, 3.0);
        QCOMPARE(rows[3].candidateId, s4Best);

        const auto all = store.bestVerifiedCandidates("layernorm_gelu", {}, 10);
        QCOMPARE(sessionsOf(all), (Ids { s6, s1, s2, s3, s4 }));
        QCOMPARE(all[0].candidateId, s6Best);
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("softmax", {}, 10)), (Ids { s3, s4, s6, s1, s2 }));
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("transpose", {}, 10)), (Ids { s3, s6, s1, s2, s4 }));
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("layernorm_gelu", { s6, s1, s4 }, 10)), (Ids { s2, s3 }));
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("layernorm_gelu", { s6 }, 3)), (Ids { s1, s2, s3 }));
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("layernorm_gelu", { s6 }, 1)), (Ids { s1 }));
        QVERIFY(store.bestVerifiedCandidates("layernorm_gelu", {}, 0).empty());
        QVERIFY(store.bestVerifiedCandidates("layernorm_gelu", {}, -1).empty());
        QVERIFY(store.bestVerifiedCandidates("layernorm_gelu", { s1, s2, s3, s4, s5, s6 }, 10).empty());

        // Equal speedups across sessions: the newer session first.
        const auto s7 = newSession(softmax);
        evaluate(s7, "ok", "passed", 1.1);
        QCOMPARE(sessionsOf(store.bestVerifiedCandidates("softmax", {}, 10)), (Ids { s3, s7, s4, s6, s1, s2 }));
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
        QVERIFY(detail->result->timing == expected.timing);
        QVERIFY(detail->result->verification == expected.verification);
        KL_COMPARE_JSON(compileColumn(detail->result->compile), compileColumn(expected.compile));
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
        KL_COMPARE_TEXT(detail->exchanges[0].exchange.text(), fx::exchange(2).exchange.text());
        QCOMPARE(detail->exchanges[0].exchange.latencyMs, 2502.0);
        QCOMPARE(detail->exchanges[0].exchange.usage.completionTokens, fx::exchange(2).exchange.usage.completionTokens);

        // The typed parts are kept as the text they always were: a metric as "KERNEL/CASE/METRIC", read
        // back as its fields; a part the protocol cannot read is absent, the row's figures intact.
        {
            RawDb raw(path);
            KL_COMPARE_TEXT(raw.text("SELECT name FROM metrics ORDER BY name LIMIT 1"), "ln_gelu/8192x4096/metric_0");
            raw.exec(R"(UPDATE results SET timing_json = '{"cases":[{"label":7}]}')");
        }
        const auto damaged = reader.iteration(session, 1);
        QVERIFY(damaged && damaged->result && !damaged->result->timing && damaged->result->medianUs);
        QCOMPARE(damaged->result->unreadable.size(), std::size_t(1)); // said, not dropped in silence
        QVERIFY2(
            damaged->result->unreadable[0].where().starts_with("timing_json."), damaged->result->unreadable[0].what());
        KL_COMPARE_TEXT(damaged->result->metrics.begin()->first.caseLabel, "8192x4096");
    }

    void exchangesNeverStoreKeys()
    {
        const auto path = freshPath();
        {
            auto store = Store::open(path);
            const auto session = store.createSession(sessionFor(store.addProblem(fx::problem())));
            const auto ref = store.beginIteration(session);
            auto exchange = fx::exchange(1);
            auto body = nlohmann::json::parse(exchange.exchange.requestBody);
            body["api_key"] = "sk-live-123";
            body["auth"] = { { "access_token", "tok-456" } };
            exchange.exchange.requestBody = body.dump();
            store.recordExchange(ref, exchange);
            store.finishIteration(ref, "proposer-error");
            const auto detail = store.iteration(session, 1);
            const auto request = nlohmann::json::parse(detail->exchanges[0].exchange.requestBody);
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
        QVERIFY(hit->timing == fx::passedResult(7).timing);
        QVERIFY(!later.cacheLookup(evaluationCacheKey(changed)));
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
