// The session recipe: rendered as the `kernelloop-cli tune` line and parsed back (round trip), user
// lines with quoting, "=" and durations, the runner as a command line, refusals by category, no key in it,
// and what core makes of it.
#include "core/model/error.h"
#include "core/pool/runner_endpoint.h"
#include "core/session/session_recipe.h"
#include "core/tuner/tuner.h"

#include <QtTest/QTest>

using namespace kl;
using namespace kl::session;

namespace {

std::string categoryOf(const std::string& line)
{
    try {
        parseCommandLine(line);
    } catch (const Error& e) {
        return e.category();
    }
    return "no error";
}

SessionRecipe everything()
{
    SessionRecipe r;
    r.problem = "/tmp/my problems/problem.json"; // a space: quoted
    r.proposer = ProposerChoice::LlmAndTuner;
    r.strategy = "evolutionary";
    r.budget = 7;
    r.wallSeconds = 600;
    r.targetSpeedup = 1.5;
    r.patience = 0;
    r.minGain = 0.02;
    r.maxFailedRounds = 5;
    r.candidatesPerRound = 4;
    r.metrics = "stalls";
    r.mode = LoopMode::Review;
    r.label = "it's a test"; // a quote inside
    r.runner = "/opt/kl/kernelloop-runner";
    r.device = 1;
    r.runners = { "local:all", "ssh:me@gpu-box:1", "slurm:-p gpu --time=30" };
    r.runnersFile = "/etc/kl/runners";
    r.remoteRunner = "/srv/kl/kernelloop-runner";
    r.sshOptions = { "Port=2222", "IdentityFile=/home/me/.ssh/kl key" };
    r.slurmGres = "none";
    r.seed = 99;
    r.timingInterval = 0.002;
    r.profileCandidates = "promising";
    r.compileAhead = 3;
    r.noCache = true;
    r.llm.provider = "anthropic";
    r.llm.baseUrl = "http://127.0.0.1:8080/v1";
    r.llm.model = "claude";
    r.llm.keyEnv = "MY_KEY";
    r.llm.roles = "single";
    r.llm.temperature = 0.7;
    r.llm.tokenBudget = 50000;
    r.llm.tunerRounds = 3;
    return r;
}

} // namespace

class TestSessionRecipe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip()
    {
        const auto r = everything();
        const auto line = commandLine(r);
        QVERIFY2(parseCommandLine(line) == r, line.c_str());
        QVERIFY2(line.rfind("kernelloop-cli tune '/tmp/my problems/problem.json' --proposer llm+tuner", 0) == 0,
            line.c_str());
        QVERIFY2(line.find("--label 'it'\\''s a test'") != std::string::npos, line.c_str());
        QVERIFY2(line.find("--key-env MY_KEY") != std::string::npos, line.c_str());
        // Endpoints repeat --runner; the executable keeps its own --runner.
        QVERIFY2(line.find("--runner /opt/kl/kernelloop-runner") != std::string::npos, line.c_str());
        QVERIFY2(line.find("--runner 'slurm:-p gpu --time=30'") != std::string::npos, line.c_str());
        QVERIFY2(line.find("--ssh-option 'IdentityFile=/home/me/.ssh/kl key'") != std::string::npos, line.c_str());
        // Defaults are left out.
        SessionRecipe plain;
        plain.problem = "p.json";
        QCOMPARE(QString::fromStdString(commandLine(plain)), u"kernelloop-cli tune p.json"_qs);
        QVERIFY(parseCommandLine(commandLine(plain)) == plain);
    }

    void userLines()
    {
        const auto r = parseCommandLine(
            "./build/kernelloop-cli tune p.json --time 10m -k 3 --budget=5 --label \"a \\\"b\\\"\" --mode review");
        QCOMPARE(r.wallSeconds, 600.0);
        QCOMPARE(r.candidatesPerRound, 3);
        QCOMPARE(r.budget, 5);
        QCOMPARE(QString::fromStdString(r.label), u"a \"b\""_qs);
        QVERIFY(r.mode == LoopMode::Review);
        QCOMPARE(parseCommandLine("tune p.json --time 90s").wallSeconds, 90.0);
        QCOMPARE(parseCommandLine("tune p.json --time 1h").wallSeconds, 3600.0);
    }

    // The runner as a command line: one quoted --runner word that reads back as the local runner (not
    // an endpoint), and cmd: endpoints that take the recipe's --device.
    void runnerCommands()
    {
        SessionRecipe r;
        r.problem = "p.json";
        r.runner = "ssh gpuhost kernelloop-runner";
        r.device = 2;
        const auto line = commandLine(r);
        QVERIFY2(line.find("--runner 'ssh gpuhost kernelloop-runner'") != std::string::npos, line.c_str());
        QVERIFY2(line.find("--device 2") != std::string::npos, line.c_str());
        const auto back = parseCommandLine(line);
        QVERIFY(back == r);
        QVERIFY(back.runners.empty());
        const auto local = runnerEndpoints(back);
        QCOMPARE(int(local.size()), 1);
        QCOMPARE(QString::fromStdString(local[0].text()), u"local:2"_qs);
        // ... and the local endpoint starts such a line with --device 2 after it (env: a wrapper every machine has).
        const auto config
            = pool::runnerConfigFor(local[0], poolOptions(back, "env KL_A=1 kernelloop-runner").endpoints);
        QCOMPARE(config.deviceIndex, 2);
        QVERIFY(QString::fromStdString(config.launcher.front()).endsWith(u"/env"_qs));
        QCOMPARE(QString::fromStdString(config.path.string()), u"kernelloop-runner"_qs);

        SessionRecipe pool;
        pool.problem = "p.json";
        pool.device = 3;
        pool.runners = { "cmd:env KL_A=1 /opt/kl/kernelloop-runner", "local:0" };
        const auto poolLine = commandLine(pool);
        QVERIFY2(poolLine.find("--runner 'cmd:env KL_A=1 /opt/kl/kernelloop-runner'") != std::string::npos,
            poolLine.c_str());
        QVERIFY(parseCommandLine(poolLine) == pool);
        const auto endpoints = runnerEndpoints(pool);
        QCOMPARE(int(endpoints.size()), 2);
        QVERIFY(endpoints[0].kind == pool::EndpointKind::Command);
        QCOMPARE(endpoints[0].gpu, 3); // the recipe's --device: a command names no GPU of its own
        QCOMPARE(endpoints[1].gpu, 0);
    }

    void refusals()
    {
        for (const auto* line : { "check p.json", "tune", "tune p.json --budget", "tune p.json --budget x",
                 "tune p.json --proposer gpt", "tune p.json --header 'Authorization: Bearer k'", "tune p.json q.json",
                 "tune 'p.json", "tune p.json --mode manual" })
            QVERIFY2(categoryOf(line) == "session.bad-command-line", line);
    }

    void configurationAndProposer()
    {
        auto r = everything();
        const auto c = loopConfig(r);
        QCOMPARE(c.stop.maxIterations, 7);
        QCOMPARE(c.stop.maxWallSeconds, 600.0);
        QCOMPARE(c.stop.maxFailedRounds, 5);
        QCOMPARE(c.candidatesPerIteration, 4);
        QVERIFY(c.mode == LoopMode::Review);
        QVERIFY(c.evaluate.profile == protocol::MetricSet::Stalls);
        QVERIFY(!c.useCache);
        QCOMPARE(c.evaluate.intervalHalfWidth, 0.002); // --timing-interval reaches the runner's request
        QCOMPARE(c.profileWithin, 0.05); // --profile-candidates promising
        QCOMPARE(loopConfig(SessionRecipe {}).profileWithin, 0.0); // the default profiles every candidate
        QCOMPARE(c.compileAhead, 3); // --compile-ahead 3
        QCOMPARE(loopConfig(SessionRecipe {}).compileAhead, -1); // the host's choice
        {
            auto wrong = r;
            wrong.compileAhead = -2;
            QVERIFY_THROWS_EXCEPTION(Error, loopConfig(wrong));
        }
        {
            auto wrong = r;
            wrong.profileCandidates = "some";
            try {
                loopConfig(wrong);
                QFAIL("no error");
            } catch (const Error& e) {
                QCOMPARE(QString::fromStdString(e.category()), u"session.bad-recipe"_qs);
            }
        }
        QCOMPARE(QString::fromStdString(c.proposerDetail), u"llm+tuner:anthropic/claude"_qs);
        for (const double bad : { 0.0, -0.01, 0.5 }) {
            auto wrong = r;
            wrong.timingInterval = bad;
            try {
                loopConfig(wrong);
                QFAIL("no error");
            } catch (const Error& e) {
                QCOMPARE(QString::fromStdString(e.category()), u"session.bad-recipe"_qs);
            }
        }
        // An LLM proposer without an endpoint is refused; the tuner needs none.
        try {
            makeProposer(r, nullptr, nullptr);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), u"session.no-endpoint"_qs);
        }
        r.proposer = ProposerChoice::Tuner;
        const auto tuner = makeProposer(r, nullptr, nullptr);
        QCOMPARE(QString::fromStdString(tuner->kind()), u"tuner"_qs);
        QCOMPARE(QString::fromStdString(loopConfig(r).proposerDetail), u"tuner:evolutionary"_qs);
        EndpointConfig endpoint;
        endpoint.baseUrl = "http://127.0.0.1:9/v1";
        endpoint.model = "m";
        r.proposer = ProposerChoice::LlmAndTuner;
        QCOMPARE(QString::fromStdString(makeProposer(r, &endpoint, nullptr)->kind()), u"llm+tuner"_qs);
    }
};

QTEST_GUILESS_MAIN(TestSessionRecipe)
#include "test_session_recipe.moc"
