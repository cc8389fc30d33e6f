// kernelloop-cli llm-check, the real binary, against the loopback replay server: a readable
// message and a distinct exit code for each kind of failure, and the key never printed.
#include "llm_check_cli.h"
#include "replay_server.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <QTemporaryDir>

#include <fstream>
#include <sys/stat.h>

using namespace kl::test;

namespace {

const QString kKey = QStringLiteral("sk-kltest-CLI-PLANTED-0a9b8c7d6e5f");

} // namespace

class TestLlmCheck : public QObject {
    Q_OBJECT

    std::unique_ptr<ReplayServer> m_server;

    QString base(const std::string& scenario, bool openAi = true) const
    {
        return QString::fromStdString(m_server->url("/" + scenario + (openAi ? "/v1" : "")));
    }

    CliRun check(const QStringList& arguments) { return cli(QStringList { QStringLiteral("llm-check") } + arguments); }
    CliRun cli(const QStringList& arguments) { return runCli(QStringLiteral(KL_CLI_PATH), arguments, kKey); }

private slots:
    void initTestCase()
    {
        QVERIFY(QFile::exists(QStringLiteral(KL_CLI_PATH)));
        m_server = std::make_unique<ReplayServer>();
        auto& s = *m_server;
        const auto wantsStream
            = [](const SeenRequest& r) { return nlohmann::json::parse(r.body).value("stream", false); };
        s.route("/ok/v1/chat/completions",
            [](const SeenRequest&, int) { return jsonReply(fixture("openai/chat_completion.json")); });
        s.route("/ok/v1/messages", [wantsStream](const SeenRequest& r, int) {
            if (!wantsStream(r))
                return jsonReply(fixture("anthropic/message.json"));
            Reply reply;
            reply.contentType = "text/event-stream";
            reply.chunked = true;
            reply.body = fixture("anthropic/message_stream.sse");
            return reply;
        });
        s.route("/unauthorised/v1/chat/completions", [](const SeenRequest& r, int) {
            // Echoes the key, as some servers do.
            return jsonReply(
                nlohmann::json({ { "error",
                                   { { "message", "Incorrect API key provided: " + r.header("authorization") },
                                       { "type", "invalid_request_error" }, { "code", "invalid_api_key" } } } })
                    .dump(),
                401);
        });
        s.route("/forbidden/v1/chat/completions", [](const SeenRequest&, int) {
            return jsonReply(
                R"({"error":{"message":"You are not allowed to sample from this model","type":"invalid_request_error","code":"model_not_allowed"}})",
                403);
        });
        s.route("/nomodel/v1/chat/completions",
            [](const SeenRequest&, int) { return jsonReply(fixture("openai/error_404_model.json"), 404); });
        s.route("/busy/v1/chat/completions", [](const SeenRequest&, int) {
            auto r = jsonReply(fixture("openai/error_429.json"), 429);
            r.headers = { { "Retry-After", "20" } };
            return r;
        });
        s.route("/broken/v1/chat/completions",
            [](const SeenRequest&, int) { return jsonReply(fixture("openai/error_500.json"), 500); });
        s.route("/notjson/v1/chat/completions",
            [](const SeenRequest&, int) { return jsonReply("<html><body>It works!</body></html>"); });
        s.route("/slow/v1/chat/completions", [](const SeenRequest&, int) {
            auto r = jsonReply(fixture("openai/chat_completion.json"));
            r.holdAfter = 0;
            return r;
        });
    }

    void cleanup() { m_server->releaseHeld(); }
    void cleanupTestCase() { m_server.reset(); }

    void okReportsModelLatencyAndUsage()
    {
        const auto run = check(openAiOptions(base("ok")));
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("ok: openai at http://127.0.0.1:")), qPrintable(run.out));
        QVERIFY(run.out.contains(QStringLiteral("model     gpt-4o-2024-08-06 (asked for gpt-4o)")));
        QVERIFY(run.out.contains(QStringLiteral("latency   ")));
        QVERIFY(run.out.contains(QStringLiteral("1 attempt")));
        QVERIFY(run.out.contains(QStringLiteral("usage     3120 prompt + 1450 completion tokens")));
        QVERIFY(run.out.contains(QStringLiteral("reply     \"## Plan")));
        QVERIFY(!run.out.contains(kKey) && !run.err.contains(kKey));
        const auto seen = m_server->requests().back();
        QCOMPARE(seen.header("authorization"), "Bearer " + kKey.toStdString());
        const auto body = nlohmann::json::parse(seen.body);
        QVERIFY(body["max_tokens"] == 16);
    }

    void okStreamingFromAnthropic()
    {
        const auto run
            = check({ QStringLiteral("--provider"), QStringLiteral("anthropic"), QStringLiteral("--base-url"),
                base("ok", false), QStringLiteral("--model"), QStringLiteral("claude-sonnet-4-20250514"),
                QStringLiteral("--key-env"), QStringLiteral("KL_TEST_KEY"), QStringLiteral("--stream") });
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("first text after")), qPrintable(run.out));
        QVERIFY(run.out.contains(QStringLiteral("usage     3050 prompt + 1390 completion tokens")));
        QVERIFY(run.out.contains(QStringLiteral("(stop)")));
        QCOMPARE(m_server->requests().back().header("x-api-key"), kKey.toStdString());
    }

    void eachFailureHasItsMessageAndExitCode_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("explanation");
        QTest::newRow("dns") << QStringLiteral("http://llm.kernelloop-test.invalid/v1") << QStringList {} << 10 << "dns"
                             << "cannot resolve the host";
        QTest::newRow("refused") << QStringLiteral("http://127.0.0.1:%1/v1").arg(closedPort()) << QStringList {} << 11
                                 << "connection-refused"
                                 << "nothing listens at";
        QTest::newRow("tls") << QStringLiteral("https://127.0.0.1:%1/ok/v1").arg(m_server->port()) << QStringList {}
                             << 12 << "tls"
                             << "does the server speak https";
        QTest::newRow("timeout") << base("slow") << QStringList { QStringLiteral("--timeout"), QStringLiteral("1") }
                                 << 13 << "timeout"
                                 << "within the timeout (--timeout 1 s)";
        QTest::newRow("401") << base("unauthorised") << QStringList {} << 14 << "http-401"
                             << "rejected the API key";
        QTest::newRow("403") << base("forbidden") << QStringList {} << 15 << "http-403"
                             << "not allowed to use model";
        QTest::newRow("404 model") << base("nomodel") << QStringList {} << 16 << "http-404"
                                   << "the server has no model \"gpt-4o\", or --base-url is wrong";
        QTest::newRow("429") << base("busy") << QStringList {} << 17 << "http-429"
                             << "rate-limited";
        QTest::newRow("500") << base("broken") << QStringList {} << 18 << "http-5xx"
                             << "the server failed (HTTP 500)";
        QTest::newRow("not json") << base("notjson") << QStringList {} << 19 << "bad-json"
                                  << "not a valid openai response";
    }

    void eachFailureHasItsMessageAndExitCode()
    {
        QFETCH(QString, url);
        QFETCH(QStringList, extra);
        QFETCH(int, exitCode);
        QFETCH(QString, category);
        QFETCH(QString, explanation);
        QElapsedTimer timer;
        timer.start();
        const auto run = check(openAiOptions(url) + extra);
        QVERIFY2(run.exitCode == exitCode, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(
            run.err.startsWith(QStringLiteral("llm-check: ") + category + QStringLiteral(": ")), qPrintable(run.err));
        QVERIFY2(run.err.contains(explanation), qPrintable(run.err));
        QVERIFY2(!run.err.contains(kKey) && !run.out.contains(kKey), "the key was printed");
        QVERIFY(timer.elapsed() < 10000); // one attempt by default: no waiting on Retry-After
    }

    void jsonOutputHoldsTheExchangeWithoutTheKey()
    {
        const auto run = check(openAiOptions(base("unauthorised")) + QStringList { QStringLiteral("--json") });
        QCOMPARE(run.exitCode, 14);
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QVERIFY(json["category"] == "http-401");
        QVERIFY(json["exit_code"] == 14);
        QVERIFY(json["http_status"] == 401);
        QVERIFY(json["response"].get<std::string>().find("[redacted]") != std::string::npos);
        QVERIFY(!run.out.contains(kKey));
    }

    // `tune --proposer llm` checks the endpoint options, the key and the prompt folder before it
    // starts a runner: each mistake is a categorised bad-input error (exit 2), GPU or not.
    void tuneChecksItsLlmOptionsFirst()
    {
        const QString problem = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");
        const QStringList tune { QStringLiteral("tune"), problem, QStringLiteral("--proposer"), QStringLiteral("llm") };
        const int sentBefore = m_server->requestCount("/ok/v1/chat/completions");
        auto run = cli(tune);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(
            run.err.contains(QStringLiteral("cli.missing-option")) && run.err.contains(QStringLiteral("--base-url")),
            qPrintable(run.err));

        const QStringList endpoint { QStringLiteral("--base-url"), base("ok"), QStringLiteral("--model"),
            QStringLiteral("gpt-4o") };
        run = cli(
            tune + endpoint + QStringList { QStringLiteral("--key-env"), QStringLiteral("KL_TEST_NO_SUCH_VARIABLE") });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("llm.key-missing")), qPrintable(run.err));

        QTemporaryDir prompts;
        std::ofstream(prompts.filePath(QStringLiteral("planer.user.md")).toStdString()) << "{{state}}\n";
        run = cli(tune + endpoint + QStringList { QStringLiteral("--prompts"), prompts.path() });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("prompt.unknown-template")), qPrintable(run.err));
        QCOMPARE(m_server->requestCount("/ok/v1/chat/completions"), sentBefore); // nothing was sent
    }

    void keyProblemsAreBadInput()
    {
        QTemporaryDir dir;
        const auto keyFile = dir.filePath(QStringLiteral("key"));
        std::ofstream(keyFile.toStdString()) << kKey.toStdString() << "\n";
        ::chmod(keyFile.toLocal8Bit().constData(), 0644);
        const QStringList fileArgs { QStringLiteral("--provider"), QStringLiteral("openai"),
            QStringLiteral("--base-url"), base("ok"), QStringLiteral("--model"), QStringLiteral("gpt-4o"),
            QStringLiteral("--key-file"), keyFile };
        auto run = check(fileArgs);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("llm.key-file-permissions")), qPrintable(run.err));
        QVERIFY(run.err.contains(QStringLiteral("chmod 600")));
        QVERIFY(!run.err.contains(kKey));
        ::chmod(keyFile.toLocal8Bit().constData(), 0600);
        QCOMPARE(check(fileArgs).exitCode, 0);

        run = check({ QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("--base-url"), base("ok"),
            QStringLiteral("--model"), QStringLiteral("gpt-4o"), QStringLiteral("--key-env"),
            QStringLiteral("KL_TEST_NO_SUCH_VARIABLE") });
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains(QStringLiteral("llm.key-missing")));
        QCOMPARE(check({ QStringLiteral("--provider"), QStringLiteral("mistral"), QStringLiteral("--base-url"),
                           base("ok"), QStringLiteral("--model"), QStringLiteral("m") })
                     .exitCode,
            2);
    }
};

QTEST_GUILESS_MAIN(TestLlmCheck)
#include "test_llm_check.moc"
