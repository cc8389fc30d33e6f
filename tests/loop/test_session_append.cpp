// Adding to a session that exists, read back through the store: the engineer's candidate into a
// stored session (TuningSession::evaluateInto, the GUI's "Evaluate" and `evaluate --session N`), and
// "continue from here" in a running loop (TuningSession::continueFrom: the chosen iteration is the
// next proposal's stored parent and the base the proposer is handed). Real NVRTC, a real SQLite file,
// the runner double.
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

using kl::test::layernormProblem;
using kl::test::modelRunner;

// Proposes the baseline with the THREADS of each round from a list; at round `forkRound` it asks the
// loop to continue, from the next round on, from an iteration that is not the current best.
class ScriptedProposer : public kl::Proposer {
public:
    ScriptedProposer(const kl::Problem& problem, std::vector<int> threads)
        : m_problem(problem)
        , m_threads(std::move(threads))
    {
    }
    std::string kind() const override { return "tuner"; }
    std::vector<kl::Proposal> propose(const kl::ProposalContext& ctx, int, const std::atomic<bool>*) override
    {
        bases.push_back(ctx.bestTunables);
        const auto round = std::size_t(ctx.iteration);
        if (round > m_threads.size())
            return {};
        if (session && int(round) == forkRound) {
            forkTo = bestIndex == 1 ? 2 : 1; // round 1's candidate, or the baseline: whichever is not the best
            session->continueFrom(forkTo);
        }
        auto tunables = m_problem.baseline.defaults();
        tunables["THREADS"] = m_threads[round - 1];
        return { kl::Proposal { m_problem.baseline, tunables, "tuner", "scripted", {}, {}, {}, {} } };
    }

    kl::TuningSession* session = nullptr;
    int forkRound = 0;
    int forkTo = 0;
    int bestIndex = 1; // kept up to date from the loop's IncumbentChanged events
    std::vector<kl::TunableValues> bases; // ctx.bestTunables at each round

private:
    const kl::Problem& m_problem;
    std::vector<int> m_threads;
};

std::int64_t tunedSession(kl::store::Store& store, const kl::Problem& problem, kl::RunnerClient& runner)
{
    kl::TuningSession session(problem, store, runner, kl::test::loopConfig(2, 1, "tuner:evolutionary"));
    kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 5 });
    return session.run(tuner).sessionId;
}

QString categoryOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const kl::Error& e) {
        return QString::fromStdString(e.category());
    }
    return {};
}

// kernelloop-cli with the runner double; the exit code and what it printed.
std::pair<int, QString> cli(const QStringList& arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral(KL_CLI_PATH), arguments);
    if (!process.waitForFinished(60000))
        return { -1, QStringLiteral("timed out") };
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
        QString::fromUtf8(process.readAll()) };
}

} // namespace

class TestSessionAppend : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void evaluateIntoAppendsToTheStoredSession()
    {
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("a.db")).toStdString());
        const auto problem = layernormProblem();
        kl::RunnerClient runner(modelRunner());
        const auto id = tunedSession(store, problem, runner);
        const auto before = store.listIterations(id);
        QCOMPARE(before.size(), std::size_t(3));
        std::optional<kl::store::IterationRow> best;
        for (const auto& r : before)
            if (r.category == "passed" && (!best || *r.speedup > *best->speedup))
                best = r;
        QVERIFY(best && best->candidateId);

        auto tunables = problem.baseline.defaults();
        tunables["THREADS"] = 512;
        tunables["TANH"] = 1;
        kl::TuningSession append(problem, store, runner, kl::test::loopConfig(1, 1, "human"));
        std::vector<kl::IterationOutcome> finished;
        append.events().subscribe([&](const std::shared_ptr<const kl::LoopEvent>& e) {
            if (const auto* f = std::get_if<kl::IterationFinished>(e.get()))
                finished.push_back(f->outcome);
        });
        const auto summary = append.evaluateInto(id, problem.baseline, tunables);
        QCOMPARE(summary.sessionId, id);
        QCOMPARE(summary.evaluated, 1);
        QCOMPARE(finished.size(), std::size_t(1));

        // One more iteration in the same session, no second session, the status unchanged.
        QCOMPARE(store.listSessions().size(), std::size_t(1));
        const auto after = store.listIterations(id);
        QCOMPARE(after.size(), before.size() + 1);
        const auto& added = after.back();
        QCOMPARE(added.index, 4);
        QCOMPARE(added.round.value_or(-1), 3); // after the session's last round
        QVERIFY(added.proposer == kl::store::CandidateRecord::Proposer::Human);
        QCOMPARE(QString::fromStdString(added.category), QStringLiteral("passed"));
        QVERIFY(added.speedup.has_value()); // timed against the baseline in the same job
        const auto detail = store.iteration(id, added.index);
        QVERIFY(detail && detail->candidate && detail->parent);
        QCOMPARE(detail->parent->id, *best->candidateId); // built on the session's best
        QCOMPARE(detail->candidate->tunables.at("THREADS"), 512);
        const auto session = store.session(id);
        QCOMPARE(QString::fromStdString(session->status), QStringLiteral("finished"));
        QCOMPARE(session->summary->evaluated, std::optional<int>(4));

        // Refusals: no such session, another problem's session, a session still running.
        QCOMPARE(categoryOf([&] { append.evaluateInto(id + 100, problem.baseline, tunables); }),
            QStringLiteral("store.unknown-session"));
        kl::store::ProblemRecord other { {}, "other", R"({"name":"other"})", "ref", "base" };
        kl::store::SessionRecord foreign;
        foreign.problemHash = store.addProblem(other);
        foreign.status = "finished";
        const auto foreignId = store.createSession(foreign);
        store.finishSession(foreignId, "finished");
        QCOMPARE(categoryOf([&] { append.evaluateInto(foreignId, problem.baseline, tunables); }),
            QStringLiteral("session.other-problem"));
        kl::store::SessionRecord live;
        live.problemHash = problem.contentHash;
        const auto liveId = store.createSession(live); // this process owns it: running
        QCOMPARE(categoryOf([&] { append.evaluateInto(liveId, problem.baseline, tunables); }),
            QStringLiteral("session.running"));
        QCOMPARE(store.listIterations(id).size(), after.size()); // nothing more written
    }

    void cliEvaluateSessionAppends()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("cli.db"));
        const QString problem = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");
        const QString baseline = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/baseline.cu");
        const QStringList common { problem, QStringLiteral("--db"), db, QStringLiteral("--runner"),
            QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"), QStringLiteral("none") };
        auto tuned = cli(QStringList { QStringLiteral("tune") } + common
            + QStringList {
                QStringLiteral("--budget"), QStringLiteral("1"), QStringLiteral("--patience"), QStringLiteral("0") });
        QVERIFY2(tuned.first == 0, qPrintable(tuned.second));
        auto added = cli(QStringList { QStringLiteral("evaluate") } + common
            + QStringList { baseline, QStringLiteral("--set"), QStringLiteral("THREADS=256"),
                QStringLiteral("--session"), QStringLiteral("1") });
        QVERIFY2(added.first == 0, qPrintable(added.second));
        {
            const auto store = kl::store::Store::open(db.toStdString(), kl::store::Store::Options { .readOnly = true });
            QCOMPARE(store.listSessions().size(), std::size_t(1)); // no session of its own
            const auto rows = store.listIterations(1);
            QCOMPARE(rows.size(), std::size_t(3));
            QVERIFY(rows.back().proposer == kl::store::CandidateRecord::Proposer::Human);
        }
        auto missing = cli(QStringList { QStringLiteral("evaluate") } + common
            + QStringList { baseline, QStringLiteral("--session"), QStringLiteral("7") });
        QCOMPARE(missing.first, 2); // bad input, categorised
        QVERIFY2(missing.second.contains(QStringLiteral("[store.unknown-session]")), qPrintable(missing.second));
    }

    void continueFromMakesTheIterationTheParent()
    {
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("c.db")).toStdString());
        const auto problem = layernormProblem();
        kl::RunnerClient runner(modelRunner());
        kl::TuningSession session(problem, store, runner, kl::test::loopConfig(3, 1, "tuner:scripted"));
        ScriptedProposer proposer(problem, { 256, 64, 1024 });
        proposer.session = &session;
        proposer.forkRound = 2; // asked during round 2: round 3 starts from the chosen iteration
        std::vector<int> incumbents;
        session.events().subscribe([&](const std::shared_ptr<const kl::LoopEvent>& e) {
            if (const auto* b = std::get_if<kl::IncumbentChanged>(e.get())) {
                proposer.bestIndex = b->best.index;
                incumbents.push_back(b->best.index);
            }
        });
        const auto summary = session.run(proposer);
        QCOMPARE(summary.rounds, 3);
        QVERIFY(proposer.forkTo == 1 || proposer.forkTo == 2);

        const auto forked = store.iteration(summary.sessionId, proposer.forkTo);
        const auto next = store.iteration(summary.sessionId, 4); // round 3's candidate
        QVERIFY(forked && forked->candidate && next && next->candidate && next->parent);
        QCOMPARE(next->parent->id, forked->candidate->id); // the fork in the stored proposal tree
        QCOMPARE(next->candidate->tunables.at("THREADS"), 1024);
        // The proposer was handed the chosen iteration as its base, and the loop said so.
        QCOMPARE(proposer.bases.size(), std::size_t(3));
        QVERIFY(proposer.bases[2] == forked->candidate->tunables);
        QVERIFY(incumbents.size() >= 2); // the first is the baseline's, at the start
        QVERIFY(std::find(incumbents.begin() + 1, incumbents.end(), proposer.forkTo) != incumbents.end());
    }
};

QTEST_MAIN(TestSessionAppend)
#include "test_session_append.moc"
