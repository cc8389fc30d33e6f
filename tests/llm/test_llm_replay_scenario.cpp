// kl-llm-replay, the real program, serving the recorded layernorm_gelu scenario to the real chat
// clients of both protocols, whole and streamed: requests whose system prompts come from the
// built-in templates reach their role's route and get its replies in order, the replies parse
// (plans as plans, the rest as one candidate each), a used-up route answers without code, and
// every candidate of the scenario compiles with NVRTC, so a GPU run cannot fail on a typo.
#include "core/compile/compiler.h"
#include "core/llm/chat_client.h"
#include "core/llm/prompt_library.h"
#include "core/llm/reply_parser.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <QDeadlineTimer>
#include <QProcess>
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kl;
using namespace std::chrono_literals;

namespace {

const std::string kSourceDir = KL_SOURCE_DIR;
const std::string kScenarioDir = kSourceDir + "/tests/fixtures/llm/scenarios/layernorm_gelu";
const std::string kScenario = kScenarioDir + "/scenario.json";

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string reply(const std::string& name) { return readFile(kScenarioDir + "/" + name); }

const Problem& layerNorm()
{
    static const Problem problem = loadProblem(kSourceDir + "/resources/examples/layernorm_gelu/problem.json");
    return problem;
}

struct Route {
    std::string when;
    std::vector<std::string> replies;
    std::string exhausted;
};

std::vector<Route> scenarioRoutes()
{
    std::vector<Route> routes;
    const auto scenario = nlohmann::json::parse(readFile(kScenario));
    for (const auto& r : scenario.at("routes"))
        routes.push_back({ r.at("when").get<std::string>(), r.at("replies").get<std::vector<std::string>>(),
            r.value("exhausted", std::string()) });
    return routes;
}

// What the proposer would send in the first round, rendered by the built-in templates.
Prompt prompt(PromptRole role, const std::string& plan = {})
{
    PromptPayload p;
    p.problem = describeProblem(layerNorm());
    p.best = describeCandidate(layerNorm().baseline, layerNorm().baseline.defaults());
    p.state.iteration = 1;
    p.state.currentMicros = 72.6;
    p.state.baselineMicros = 72.6;
    p.state.speedup = 1.0;
    p.state.correctness = "verified on 1 main and 7 fuzz size sets";
    p.plan = plan;
    if (role == PromptRole::Debugger)
        p.failure = FailureFacts { "verify.mismatch", "max abs error nan at index (0, 4096) of 13x4097",
            "// the failing source\n" };
    return PromptLibrary::builtIn().render(role, p);
}

ChatRequest request(PromptRole role, bool stream, int n = 1, const std::string& plan = {})
{
    const auto p = prompt(role, plan);
    ChatRequest r;
    r.system = p.system;
    r.messages.push_back({ "user", p.user });
    r.maxTokens = 8192;
    r.stream = stream;
    r.n = n;
    return r;
}

ParsedReply candidateReply(const std::string& text, const std::string& plan = {})
{
    auto expect = ReplyExpectations::forProblem(layerNorm(), &layerNorm().baseline);
    expect.plan = plan;
    return parseCandidateReply(text, "stop", expect);
}

const PromptRole kRoles[] = { PromptRole::Planner, PromptRole::Coder, PromptRole::Debugger, PromptRole::Single };

// The program under test, started on the scenario with a free port.
class ReplayProcess {
public:
    explicit ReplayProcess(const QStringList& extra = {})
    {
        m_process.setProgram(QStringLiteral(KL_REPLAY_PATH));
        m_process.setArguments(QStringList { QStringLiteral("--scenario"), QString::fromStdString(kScenario),
                                   QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--port-file"),
                                   m_dir.filePath(QStringLiteral("port")), QStringLiteral("--log"), logPath() }
            + extra);
        m_process.start();
    }

    ~ReplayProcess()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    // The port from "listening on http://127.0.0.1:PORT", or 0 if the line did not come.
    int waitForPort()
    {
        const QByteArray prefix = "listening on http://127.0.0.1:";
        QByteArray out;
        QDeadlineTimer deadline(10000);
        while (!deadline.hasExpired()) {
            out += m_process.readAllStandardOutput();
            const auto at = out.indexOf(prefix);
            const auto end = out.indexOf('\n', at);
            if (at >= 0 && end > at)
                return out.mid(at + prefix.size(), end - at - prefix.size()).toInt();
            if (!m_process.waitForReadyRead(int(deadline.remainingTime())))
                break;
        }
        return 0;
    }

    // SIGTERM, then the exit code (-1 if it did not end by itself).
    int stop()
    {
        m_process.terminate();
        if (!m_process.waitForFinished(5000) || m_process.exitStatus() != QProcess::NormalExit)
            return -1;
        return m_process.exitCode();
    }

    QString portFileText() const
    {
        QFile f(m_dir.filePath(QStringLiteral("port")));
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
    }
    QString logPath() const { return m_dir.filePath(QStringLiteral("replay.log")); }
    QString errors() { return QString::fromUtf8(m_process.readAllStandardError()); }
    QProcess& process() { return m_process; }

private:
    QTemporaryDir m_dir;
    QProcess m_process;
};

EndpointConfig endpoint(Provider provider, int port, const std::string& path = {})
{
    EndpointConfig c;
    c.provider = provider;
    c.baseUrl = "http://127.0.0.1:" + std::to_string(port) + path + (provider == Provider::OpenAi ? "/v1" : "");
    c.model = "replay";
    c.apiKey = "replay-key";
    c.retry.maxAttempts = 1;
    c.timeouts.connect = 2s;
    c.timeouts.total = 20s;
    c.timeouts.stall = 5s;
    return c;
}

} // namespace

class TestLlmReplayScenario : public QObject {
    Q_OBJECT

    // One exchange with the checks every exchange must pass; returns its text.
    static Exchange send(ChatClient& client, const ChatRequest& r)
    {
        int pieces = 0;
        SendControl control;
        control.onText = [&](int, std::string_view) { ++pieces; };
        auto e = client.send(r, control);
        if (e.ok()) {
            // Shown a line at a time (redacted before it is shown: core/llm/redaction.h), so at least
            // one piece per few lines of the reply; a reply that came in one piece was not streamed.
            if (r.stream && pieces < 10)
                e.message = "only " + std::to_string(pieces) + " streamed pieces";
            if (e.servedModel != "replay")
                e.message = "the served model is " + e.servedModel;
        }
        return e;
    }

private slots:
    void initTestCase()
    {
        // Everything stays on 127.0.0.1: no proxy may see these requests.
        for (const char* name : { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" })
            ::unsetenv(name);
        QVERIFY2(QFileInfo::exists(QStringLiteral(KL_REPLAY_PATH)), KL_REPLAY_PATH);
    }

    void eachWhenStringPicksExactlyItsRole()
    {
        const auto routes = scenarioRoutes();
        QCOMPARE(routes.size(), std::size_t(4));
        for (std::size_t i = 0; i < routes.size(); ++i) {
            QVERIFY(!routes[i].when.empty());
            std::vector<std::string> matching;
            for (auto role : kRoles)
                if (prompt(role, "a plan").system.find(routes[i].when) != std::string::npos)
                    matching.emplace_back(promptRoleName(role));
            QCOMPARE(matching, std::vector<std::string> { std::string(promptRoleName(kRoles[i])) });
        }
    }

    void aPlannerAndCoderRound_data()
    {
        QTest::addColumn<int>("provider");
        QTest::addColumn<bool>("stream");
        QTest::newRow("openai, whole") << 0 << false;
        QTest::newRow("openai, streamed") << 0 << true;
        QTest::newRow("anthropic, whole") << 1 << false;
        QTest::newRow("anthropic, streamed") << 1 << true;
    }

    void aPlannerAndCoderRound()
    {
        QFETCH(int, provider);
        QFETCH(bool, stream);
        ReplayProcess server;
        const int port = server.waitForPort();
        QVERIFY2(port > 0, qPrintable(server.errors()));
        QCOMPARE(server.portFileText(), QString::number(port));
        auto client = makeChatClient(endpoint(provider == 0 ? Provider::OpenAi : Provider::Anthropic, port));

        const auto planner = send(*client, request(PromptRole::Planner, stream));
        QVERIFY2(planner.ok() && planner.message.empty(), planner.message.c_str());
        QCOMPARE(planner.streamed, stream);
        QCOMPARE(planner.text(), reply("planner_1.md"));
        QCOMPARE(planner.choices.front().finishReason, std::string("stop"));
        const auto plan = parsePlanReply(planner.text(), planner.choices.front().finishReason);
        QVERIFY2(plan.ok(), plan.message.c_str());
        QVERIFY(plan.hypothesis.predictedSpeedup.has_value());
        // Usage: about 4 bytes per token each way.
        QVERIFY(planner.usage.reported);
        const auto sent = static_cast<long long>(planner.requestBody.size() / 4);
        QVERIFY2(planner.usage.promptTokens > sent * 9 / 10 && planner.usage.promptTokens < sent * 11 / 10,
            qPrintable(QString::number(planner.usage.promptTokens)));
        QCOMPARE(planner.usage.completionTokens, static_cast<long long>(planner.text().size() / 4));

        const auto coder = send(*client, request(PromptRole::Coder, stream, 1, plan.hypothesis.plan));
        QVERIFY2(coder.ok() && coder.message.empty(), coder.message.c_str());
        QCOMPARE(coder.text(), reply("coder_1.md"));
        const auto candidate = candidateReply(coder.text(), plan.hypothesis.plan);
        QVERIFY2(candidate.ok(), candidate.message.c_str());
        QVERIFY(coder.usage.reported && coder.usage.completionTokens > 1000);

        // The next round's planner gets the route's second reply.
        const auto second = send(*client, request(PromptRole::Planner, stream));
        QVERIFY2(second.ok(), second.message.c_str());
        QCOMPARE(second.text(), reply("planner_2.md"));

        QCOMPARE(server.stop(), 0);
        QVERIFY(server.errors().contains(QStringLiteral("stopped by SIGTERM after 3 requests")));
        QFile log(server.logPath());
        QVERIFY(log.open(QIODevice::ReadOnly));
        const auto lines = QString::fromUtf8(log.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[0].contains(QStringLiteral("-> planner_1.md")), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains(QStringLiteral("-> coder_1.md")), qPrintable(lines[1]));
    }

    void everyRouteServesItsRepliesThenNoCode_data()
    {
        QTest::addColumn<int>("provider");
        QTest::addColumn<bool>("stream");
        QTest::newRow("openai, streamed") << 0 << true;
        QTest::newRow("anthropic, whole") << 1 << false;
    }

    void everyRouteServesItsRepliesThenNoCode()
    {
        QFETCH(int, provider);
        QFETCH(bool, stream);
        ReplayProcess server;
        const int port = server.waitForPort();
        QVERIFY2(port > 0, qPrintable(server.errors()));
        auto client = makeChatClient(endpoint(provider == 0 ? Provider::OpenAi : Provider::Anthropic, port));
        const auto routes = scenarioRoutes();
        for (std::size_t i = 0; i < routes.size(); ++i) {
            const auto role = kRoles[i];
            for (const auto& name : routes[i].replies) {
                const auto e = send(*client, request(role, stream));
                QVERIFY2(e.ok() && e.message.empty(), e.message.c_str());
                QCOMPARE(e.text(), reply(name));
                const auto parsed
                    = role == PromptRole::Planner ? parsePlanReply(e.text(), "stop") : candidateReply(e.text());
                QVERIFY2(parsed.ok(), qPrintable(QString::fromStdString(name + ": " + parsed.message)));
                QVERIFY2(parsed.hypothesis.predictedSpeedup, name.c_str());
            }
            // Used up: the route's own no-code text, as often as asked.
            for (int again = 0; again < 2; ++again) {
                const auto e = send(*client, request(role, stream));
                QVERIFY2(e.ok(), e.message.c_str());
                QCOMPARE(e.text(), routes[i].exhausted);
                QCOMPARE(candidateReply(e.text()).category, ReplyCategory::NoCode);
            }
        }
        QCOMPARE(server.stop(), 0);
    }

    void severalChoicesTakeTheNextReplies()
    {
        ReplayProcess server;
        const int port = server.waitForPort();
        QVERIFY2(port > 0, qPrintable(server.errors()));
        auto client = makeChatClient(endpoint(Provider::OpenAi, port));
        const auto first = send(*client, request(PromptRole::Coder, false, 2));
        QVERIFY2(first.ok(), first.message.c_str());
        QCOMPARE(first.choices.size(), std::size_t(2));
        QCOMPARE(first.choices[0].text, reply("coder_1.md"));
        QCOMPARE(first.choices[1].text, reply("coder_2.md"));
        // Streamed, the two choices' deltas interleave; the route runs out after the third reply.
        const auto second = send(*client, request(PromptRole::Coder, true, 2));
        QVERIFY2(second.ok(), second.message.c_str());
        QCOMPARE(second.choices.size(), std::size_t(2));
        QCOMPARE(second.choices[0].text, reply("coder_4.md"));
        const auto exhausted = scenarioRoutes()[1].exhausted;
        QCOMPARE(second.choices[1].text, exhausted);
        QCOMPARE(second.choices[1].finishReason, std::string("stop"));
        QCOMPARE(second.usage.completionTokens,
            static_cast<long long>((second.choices[0].text.size() + second.choices[1].text.size()) / 4));
        QCOMPARE(server.stop(), 0);
    }

    void everyCandidateCompilesWithNvrtc_data()
    {
        QTest::addColumn<QString>("file");
        for (const auto& route : scenarioRoutes())
            for (const auto& name : route.replies)
                if (name.rfind("planner", 0) != 0)
                    QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    void everyCandidateCompilesWithNvrtc()
    {
        QFETCH(QString, file);
        const auto parsed = candidateReply(reply(file.toStdString()));
        QVERIFY2(parsed.ok(), parsed.message.c_str());
        QCOMPARE(parsed.candidate->launches.size(), std::size_t(1));
        QCOMPARE(parsed.candidate->launches[0].kernel, std::string("layernorm_gelu"));
        CompileOptions options;
        options.arch = layerNorm().arch;
        options.tunables = parsed.candidate->defaults();
        options.includeDir = layerNorm().dir;
        const auto result = compileCandidate(*parsed.candidate, options);
        QVERIFY2(result.ok, result.log.c_str());
        for (const auto& d : result.diagnostics)
            QVERIFY2(d.severity != "error", d.message.c_str());
        const auto* kernel = result.kernel("layernorm_gelu");
        QVERIFY(kernel);
        QCOMPARE(kernel->spillStoreBytes, std::int64_t(0));
    }

    void unknownPathsAndPromptsAreRefused()
    {
        ReplayProcess server;
        const int port = server.waitForPort();
        QVERIFY2(port > 0, qPrintable(server.errors()));
        const auto lost
            = makeChatClient(endpoint(Provider::OpenAi, port, "/elsewhere"))->send(request(PromptRole::Planner, false));
        QCOMPARE(lost.category, ExchangeCategory::Http404);
        for (auto provider : { Provider::OpenAi, Provider::Anthropic }) {
            auto r = request(PromptRole::Planner, false);
            r.system = "You are a helpful assistant.";
            const auto e = makeChatClient(endpoint(provider, port))->send(r);
            QCOMPARE(e.category, ExchangeCategory::Http4xx);
            QCOMPARE(e.httpStatus, 400);
            QVERIFY2(
                e.message.find("no scenario route matches the system prompt") != std::string::npos, e.message.c_str());
        }
        QCOMPARE(server.stop(), 0);
    }

    // --fail-first N: the first N requests are faults (HTTP 500, then a body that is not JSON, in
    // turn) and the replay starts untouched after them: its first reply is the planner's first.
    void theFirstRequestsCanBeFaulted()
    {
        ReplayProcess server({ QStringLiteral("--fail-first"), QStringLiteral("3") });
        const int port = server.waitForPort();
        QVERIFY2(port > 0, qPrintable(server.errors()));
        auto client = makeChatClient(endpoint(Provider::OpenAi, port));
        const ExchangeCategory expected[]
            = { ExchangeCategory::Http5xx, ExchangeCategory::BadJson, ExchangeCategory::Http5xx };
        for (auto category : expected) {
            const auto e = client->send(request(PromptRole::Planner, false));
            QCOMPARE(int(e.category), int(category));
        }
        const auto e = send(*client, request(PromptRole::Planner, false));
        QVERIFY2(e.ok(), e.message.c_str());
        std::ifstream first(std::filesystem::path(kScenario).parent_path() / "planner_1.md");
        const std::string planner1((std::istreambuf_iterator<char>(first)), std::istreambuf_iterator<char>());
        QVERIFY(!planner1.empty());
        QCOMPARE(e.text(), planner1);
        QCOMPARE(server.stop(), 0);
        QFile log(server.logPath());
        QVERIFY(log.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(log.readAll()).count(QStringLiteral("fault ")), 3);
    }

    void aBrokenScenarioStopsAtOnce()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath(QStringLiteral("scenario.json"));
        {
            std::ofstream(path.toStdString()) << R"({"routes": [{"when": "", "replies": ["missing.md"]}]})";
        }
        QProcess p;
        p.start(QStringLiteral(KL_REPLAY_PATH), { QStringLiteral("--scenario"), path });
        QVERIFY(p.waitForFinished(5000));
        QCOMPARE(p.exitCode(), 1);
        const auto errors = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(errors.contains(QStringLiteral("missing.md")), qPrintable(errors));
    }
};

QTEST_APPLESS_MAIN(TestLlmReplayScenario)
#include "test_llm_replay_scenario.moc"
