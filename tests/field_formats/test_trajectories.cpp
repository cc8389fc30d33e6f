// Trajectories with the engineer's decisions: a review session recorded here (the LLM proposer over
// loopback to replies we wrote, real NVRTC, the runner double, a real SQLite file; the engineer
// scripted: accept, reject with a reason, steer, edit, accept) exports one record per iteration with
// those decisions, and preference pairs of accepted against refused proposals from the same parent.
// A key planted in the session (the request's key, a reply that echoes it, an engineer's note) appears
// in no exported byte of any format.
#include "core/field_formats/flashinfer_trace.h"
#include "core/field_formats/kernel_tuner_t4.h"
#include "core/field_formats/trajectories.h"
#include "core/llm/llm_proposer.h"
#include "core/loop/tuning_session.h"
#include "core/model/problem.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "tests/field_formats/field_formats_support.h"
#include "tests/loop/loop_support.h"
#include "tests/loop/scripted_model.h"

#include <QTemporaryDir>
#include <QTest>

using kl::fieldformats::Json;
namespace ff = kl::fieldformats;
namespace fs = std::filesystem;

namespace {

// A key no redactor was told of, in a form only its shape gives away.
const std::string kUnknownKey = "sk-kl-unknown-planted-9876543210zyx";

std::string reply(const std::string& name) { return kl::test::sourceText("tests/fixtures/llm/replies/" + name); }

// The vectorised reply with a comment of its own, so that each round's candidate is a distinct source.
std::string variant(int n)
{
    auto text = reply("ok_vectorised.md");
    text.insert(text.find("```cuda\n") + 8, "// variant " + std::to_string(n) + "\n");
    if (n == 2) // a reply that echoes the key back: the client redacts it before anything keeps it
        text = "Using Authorization: Bearer " + kl::test::kPlantedKey + " as told.\n\n" + text;
    return text;
}

struct ScriptedEngineer : kl::ReviewGate {
    int calls = 0;
    kl::Candidate edit;
    kl::ReviewDecision review(const kl::Proposal&, const kl::ProposalContext&) override
    {
        using K = kl::ReviewDecision::Kind;
        switch (++calls) {
        case 1:
            return { K::Accept, {}, {}, std::nullopt, {} };
        case 2:
            return { K::Reject, "the scalar tail path is wrong for N=4097 (Authorization: Bearer " + kUnknownKey + ")",
                {}, std::nullopt, {} };
        case 3:
            return { K::Steer, {}, "keep gamma and beta in shared memory; my key is " + kl::test::kPlantedKey,
                std::nullopt, {} };
        case 4:
            return { K::Replace, "hand-tuned: 256 threads", {}, edit, { { "THREADS", 256 } } };
        default:
            return { K::Accept, {}, {}, std::nullopt, {} };
        }
    }
};

std::vector<Json> lines(const std::string& text)
{
    std::vector<Json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.push_back(Json::parse(line));
    return out;
}

// "iteration 2 (parent 1): reject / -" per line: what a failure's message shows of the records.
std::string decisionsText(const std::vector<Json>& records)
{
    std::string text;
    for (const auto& r : records)
        if (r["type"] == "iteration")
            text += "\niteration " + r["iteration"].dump() + " (parent " + r["parent_iteration"].dump() + ", "
                + r["state"].get<std::string>() + "): " + r["engineer_decision"].dump() + " / "
                + r["loop_decision"].dump();
    return text;
}

} // namespace

class TestTrajectories : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    fs::path m_db;
    std::int64_t m_session = 0;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_db = fs::path(m_dir.path().toStdString()) / "review.db";
        kl::test::ReplayServer server;
        kl::test::ScriptedModel model(server,
            { { "planner", std::vector<std::string>(6, reply("plan_only.md")) },
                { "coder", { variant(1), variant(2), variant(3), variant(4), variant(5), variant(6) } } });
        const auto problem = kl::test::layernormProblem();
        auto store = kl::store::Store::open(m_db);
        kl::RunnerClient runner(kl::test::modelRunner());
        auto config = kl::test::loopConfig(5, 1, "llm:replay");
        config.mode = kl::LoopMode::Review;
        kl::TuningSession session(problem, store, runner, config);
        ScriptedEngineer engineer;
        auto edited = problem.baseline.source;
        edited.insert(0, "// edited by the engineer: more threads per row\n");
        engineer.edit = kl::parseCandidate(edited, "edited.cu");
        session.setReviewGate(&engineer);
        kl::LlmProposer proposer(kl::test::client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn(), {});
        m_session = session.run(proposer).sessionId;
        QCOMPARE(engineer.calls, 5);
        QVERIFY(server.requests().front().header("authorization").find(kl::test::kPlantedKey) != std::string::npos);
    }

    // One record per iteration; the engineer's accept, reject (with its reason), steer (with its text) and
    // edit are there, with the prompts and replies, the kernel and its diff, the verdict and timings.
    void theDecisionsAreInTheRecords()
    {
        const auto store = kl::store::Store::open(m_db, { .readOnly = true });
        ff::TrajectorySummary summary;
        const auto records = ff::trajectoryRecords(store, { m_session }, &summary);
        QCOMPARE(summary.sessions, 1);
        QCOMPARE(summary.iterations, int(store.listIterations(m_session).size()));
        QCOMPARE(QString::fromStdString(records.front()["type"].get<std::string>()), QStringLiteral("session"));
        QCOMPARE(QString::fromStdString(records.front()["mode"].get<std::string>()), QStringLiteral("review"));
        std::map<std::string, Json> byDecision;
        for (const auto& r : records) {
            QCOMPARE(QString::fromStdString(r["schema"].get<std::string>()), QStringLiteral("kernelloop-trajectories"));
            QCOMPARE(QString::fromStdString(r["version"].get<std::string>()), QStringLiteral("1.0.0"));
            if (r["type"] == "iteration" && r["engineer_decision"].is_string())
                byDecision.emplace(r["engineer_decision"].get<std::string>(), r);
        }
        for (const char* word : { "accept", "reject", "steer", "edit" })
            QVERIFY2(byDecision.count(word), word);

        const auto& rejected = byDecision["reject"];
        QVERIFY(rejected["decisions"][0]["reason"].get<std::string>().find("scalar tail path") != std::string::npos);
        QCOMPARE(QString::fromStdString(rejected["decisions"][0]["by"].get<std::string>()), QStringLiteral("engineer"));
        QVERIFY(rejected["kernel"]["source"].get<std::string>().find("// variant") != std::string::npos);
        QVERIFY(!rejected["exchanges"].empty());
        const auto& steered = byDecision["steer"];
        QVERIFY(steered["decisions"][0]["steering"].get<std::string>().find("shared memory") != std::string::npos);

        const auto& accepted = byDecision["accept"];
        QCOMPARE(QString::fromStdString(accepted["proposer"].get<std::string>()), QStringLiteral("llm"));
        QCOMPARE(QString::fromStdString(accepted["verdict"]["category"].get<std::string>()), QStringLiteral("passed"));
        QVERIFY(!accepted["timings"].empty());
        QCOMPARE(
            QString::fromStdString(accepted["timings"][0]["statistic"].get<std::string>()), QStringLiteral("median"));
        QVERIFY(accepted["timings"][0]["median_us"].get<double>() > 0.0);
        QVERIFY(accepted["diff_to_parent"].get<std::string>().find("@@") != std::string::npos);
        QCOMPARE(accepted["parent_iteration"].get<int>(), 1); // the baseline
        const auto& exchanges = accepted["exchanges"];
        QCOMPARE(exchanges.size(), std::size_t(2)); // planner, coder
        QCOMPARE(
            QString::fromStdString(exchanges[0]["messages"][0]["role"].get<std::string>()), QStringLiteral("system"));
        QVERIFY(exchanges[1]["reply"].get<std::string>().find("```cuda") != std::string::npos);
        QCOMPARE(QString::fromStdString(accepted["compile"]["category"].get<std::string>()), QStringLiteral("ok"));
        QVERIFY(accepted["compile"]["registers"].get<int>() > 0);

        const auto& edited = byDecision["edit"];
        QCOMPARE(QString::fromStdString(edited["proposer"].get<std::string>()), QStringLiteral("human"));
        QVERIFY(edited["kernel"]["source"].get<std::string>().find("edited by the engineer") != std::string::npos);
        QCOMPARE(edited["kernel"]["tunables"]["THREADS"].get<int>(), 256);
    }

    // Accepted (or edited) against rejected (or steered), children of one parent, decided by the engineer.
    void preferencePairsComeFromTheSameParent()
    {
        const auto store = kl::store::Store::open(m_db, { .readOnly = true });
        ff::TrajectorySummary summary;
        const auto records = ff::trajectoryRecords(store, { m_session }, &summary);
        QVERIFY2(summary.preferencePairs >= 1, decisionsText(records).c_str());
        std::map<int, Json> iterations;
        for (const auto& r : records)
            if (r["type"] == "iteration")
                iterations[r["iteration"].get<int>()] = r;
        int engineerPairs = 0;
        for (const auto& r : records) {
            if (r["type"] != "preference")
                continue;
            const auto chosen = iterations.at(r["chosen"]["iteration"].get<int>());
            const auto refused = iterations.at(r["rejected"]["iteration"].get<int>());
            QVERIFY(chosen["parent_iteration"].is_number());
            QVERIFY(chosen["parent_iteration"] == refused["parent_iteration"]);
            QVERIFY(chosen["parent_iteration"] == r["parent_iteration"]);
            QVERIFY(r["chosen"]["source"] != r["rejected"]["source"]);
            if (r["decided_by"] == "engineer") {
                ++engineerPairs;
                QVERIFY(r["rejected"]["decision"] == "reject" || r["rejected"]["decision"] == "steer");
                QVERIFY(r["chosen"]["decision"] == "accept" || r["chosen"]["decision"] == "edit");
            }
        }
        QVERIFY(engineerPairs >= 1);
    }

    // No format holds the key: not the request's (never stored), not the reply's echo (redacted by the
    // client), not the engineer's notes (plain in the store: redacted by the export, from the key variable
    // it is given), not an unknown key in a credential's shape.
    void noKeyInAnyExportedByte()
    {
        const fs::path out = fs::path(m_dir.path().toStdString()) / "out";
        fs::create_directories(out);
        const auto db = QString::fromStdString(m_db.string());
        const auto path = [&](const char* name) { return QString::fromStdString((out / name).string()); };
        const std::vector<std::pair<QString, QString>> env { { QStringLiteral("OPENAI_API_KEY"),
            QString::fromStdString(kl::test::kPlantedKey) } };
        for (const auto& args : { QStringList { QStringLiteral("export-trajectories"), path("t.jsonl") },
                 QStringList { QStringLiteral("export-trace"), path("trace"), QStringLiteral("--t4") },
                 QStringList { QStringLiteral("export-t4"), path("t4.json") } }) {
            auto a = args;
            a << QStringLiteral("--db") << db;
            const auto run = kl::test::runCli(a, env);
            QVERIFY2(run.exitCode == 0, (run.out + run.err).c_str());
        }
        // The store holds the engineer's note as written: the search can find the key where it is.
        QVERIFY(kl::test::readText(m_db.string()).find(kl::test::kPlantedKey) != std::string::npos
            || kl::test::readText(m_db.string() + "-wal").find(kl::test::kPlantedKey) != std::string::npos);
        const auto files = kl::test::filesUnder(out);
        QVERIFY(files.size() >= 5);
        bool steeringExported = false;
        for (const auto& [name, bytes] : files) {
            QVERIFY2(bytes.find(kl::test::kPlantedKey) == std::string::npos, name.c_str());
            QVERIFY2(bytes.find(kUnknownKey) == std::string::npos, name.c_str());
            QVERIFY2(bytes.find("Bearer sk-") == std::string::npos, name.c_str());
            steeringExported = steeringExported
                || bytes.find("keep gamma and beta in shared memory; my key is [redacted]") != std::string::npos;
        }
        QVERIFY2(steeringExported, "the engineer's note is exported, its key redacted");

        // In-process with no key named: the unknown key still goes by its shape; the engineer's
        // plain key is only known from the variable, as the CLI reads it.
        const auto store = kl::store::Store::open(m_db, { .readOnly = true });
        ff::exportTrajectories(store, { m_session }, out / "bare.jsonl", {}, false);
        const auto bare = kl::test::readText((out / "bare.jsonl").string());
        QVERIFY(bare.find(kUnknownKey) == std::string::npos);
        QVERIFY(bare.find("the scalar tail path is wrong for N=4097 (Authorization: Bearer [redacted])")
            != std::string::npos);
        QCOMPARE(lines(bare).size(), lines(kl::test::readText((out / "t.jsonl").string())).size());
    }
};

QTEST_GUILESS_MAIN(TestTrajectories)
#include "test_trajectories.moc"
