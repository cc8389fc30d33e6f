// kernelloop-cli llm-check against hostile inputs and replies (the fuzzed classes of issue 12):
// numeric options out of range, control characters that would inject headers, base URLs that are
// not http(s), Retry-After values that would hold it for a day, a key echoed back or hidden in the
// URL, a null content, bytes that are not UTF-8. Bad input is exit 2 with a category and sends
// nothing; a bad reply has its own category; nothing hangs and the key never appears.
#include "llm_check_cli.h"
#include "replay_server.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace kl::test;

namespace {

const QString kKey = QStringLiteral("sk-kltest-INPUTS-PLANTED-1f2e3d4c5b6a");
const std::string kUserinfoKey = "sk-kltest-USERINFO-77aa88bb99cc";

std::string completion(const nlohmann::json& content)
{
    return nlohmann::json(
        { { "model", "gpt-4o" },
            { "choices",
                { { { "index", 0 }, { "message", { { "role", "assistant" }, { "content", content } } },
                    { "finish_reason", "stop" } } } } })
        .dump();
}

} // namespace

class TestLlmCheckInputs : public QObject {
    Q_OBJECT

    std::unique_ptr<ReplayServer> m_server;

    QString base(const std::string& scenario) const
    {
        return QString::fromStdString(m_server->url("/" + scenario + "/v1"));
    }

    CliRun check(const QStringList& arguments, const QString& key = kKey)
    {
        return runCli(QStringLiteral(KL_CLI_PATH), QStringList { QStringLiteral("llm-check") } + arguments, key);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(QFile::exists(QStringLiteral(KL_CLI_PATH)));
        m_server = std::make_unique<ReplayServer>();
        auto& s = *m_server;
        s.route("/ok/v1/chat/completions", [](const SeenRequest&, int) { return jsonReply(completion("ok")); });
        s.route("/echo/v1/chat/completions", [](const SeenRequest& r, int) {
            return jsonReply(completion("ok, your header was " + r.header("authorization")));
        });
        s.route("/null/v1/chat/completions", [](const SeenRequest&, int) { return jsonReply(completion(nullptr)); });
        s.route("/latin1/v1/chat/completions", [](const SeenRequest&, int) {
            return jsonReply(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"caf)"
                             "\xE9 \xFF\xFE"
                             R"("},"finish_reason":"stop"}]})");
        });
        const auto busyThenOk = [](const SeenRequest&, int count) {
            if (count == 2)
                return jsonReply(completion("ok"));
            auto r = jsonReply(R"({"error":{"message":"slow down","type":"rate_limit_error"}})", 429);
            r.headers = { { "Retry-After", "99999" } };
            return r;
        };
        s.route("/forever/v1/chat/completions", busyThenOk);
        s.route("/retried/v1/chat/completions", busyThenOk);
        s.route("/bigheader/v1/chat/completions", [](const SeenRequest&, int) {
            auto r = jsonReply(completion("ok"));
            r.headers = { { "X-Padding", std::string(1u << 20, 'p') } };
            return r;
        });
        s.route("/someday/v1/chat/completions", [](const SeenRequest&, int) {
            auto r = jsonReply(R"({"error":{"message":"overloaded","type":"server_error"}})", 503);
            r.headers = { { "Retry-After", "Sat, 01 Jan 2039 00:00:00 GMT" } };
            return r;
        });
    }

    void cleanupTestCase() { m_server.reset(); }

    void numericOptionsAreChecked_data()
    {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("value");
        for (const char* v : { "0", "-1", "nan", "inf", "1e9", "ten", "5s" })
            QTest::addRow("--timeout %s", v) << "--timeout" << v;
        for (const char* v : { "0", "-1", "nan", "1e6" })
            QTest::addRow("--connect-timeout %s", v) << "--connect-timeout" << v;
        for (const char* v : { "0", "-1", "1000000", "1e6", "2.5" })
            QTest::addRow("--attempts %s", v) << "--attempts" << v;
        for (const char* v : { "-1", "nan", "99999" })
            QTest::addRow("--max-retry-after %s", v) << "--max-retry-after" << v;
    }

    void numericOptionsAreChecked()
    {
        QFETCH(QString, option);
        QFETCH(QString, value);
        const int before = m_server->requestCount("/ok/v1/chat/completions");
        const auto run = check(openAiOptions(base("ok")) + QStringList { option + QLatin1Char('=') + value });
        QVERIFY2(run.exitCode == 2, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(run.err.contains(QStringLiteral("[cli.bad-number]")) && run.err.contains(option), qPrintable(run.err));
        QCOMPARE(m_server->requestCount("/ok/v1/chat/completions"), before); // nothing was sent
    }

    void controlCharactersCannotAddHeaders_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("category");
        QTest::newRow("header CRLF") << QStringList { QStringLiteral("--header"),
            QStringLiteral("X-Team: a\r\nX-Injected: 1") }
                                     << kKey << "[cli.bad-header]";
        QTest::newRow("header LF") << QStringList { QStringLiteral("--header"), QStringLiteral("X-Team: a\nb") } << kKey
                                   << "[cli.bad-header]";
        QTest::newRow("header tab") << QStringList { QStringLiteral("--header"), QStringLiteral("X-Team: a\tb") }
                                    << kKey << "[cli.bad-header]";
        QTest::newRow("key CRLF") << QStringList {} << kKey + QStringLiteral("\r\nX-Injected: 1")
                                  << "[llm.key-bad-characters]";
        QTest::newRow("anthropic-version LF")
            << QStringList { QStringLiteral("--anthropic-version"), QStringLiteral("2023-06-01\nX-Injected: 1") }
            << kKey << "[cli.bad-option]";
    }

    void controlCharactersCannotAddHeaders()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, key);
        QFETCH(QString, category);
        const int before = m_server->requestCount("/ok/v1/chat/completions");
        const auto run = check(openAiOptions(base("ok")) + extra, key);
        QVERIFY2(run.exitCode == 2, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(run.err.contains(category), qPrintable(run.err));
        QVERIFY(!run.err.contains(kKey));
        QCOMPARE(m_server->requestCount("/ok/v1/chat/completions"), before);
        for (const auto& seen : m_server->requests())
            QVERIFY(seen.header("x-injected").empty());
    }

    void onlyHttpAndHttpsBaseUrls_data()
    {
        QTest::addColumn<QString>("url");
        QTest::newRow("file") << "file:///etc/passwd";
        QTest::newRow("ftp") << "ftp://127.0.0.1/v1";
        QTest::newRow("gopher") << "gopher://127.0.0.1:70/_POST";
        QTest::newRow("no scheme") << "127.0.0.1:8000/v1";
        QTest::newRow("no host") << "http:///v1";
    }

    void onlyHttpAndHttpsBaseUrls()
    {
        QFETCH(QString, url);
        const auto run = check(openAiOptions(url));
        QVERIFY2(run.exitCode == 2, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(run.err.contains(QStringLiteral("[cli.bad-url]")), qPrintable(run.err));
    }

    // Retry-After: 99999 (or a date years ahead) is cut to the cap, and the message says so.
    void retryAfterIsCappedAndSaid()
    {
        auto run = check(openAiOptions(base("forever")));
        QCOMPARE(run.exitCode, 17);
        QVERIFY2(run.err.contains(QStringLiteral("Retry-After 99999 s, capped at 60 s")), qPrintable(run.err));

        run = check(openAiOptions(base("someday")));
        QCOMPARE(run.exitCode, 18);
        QVERIFY2(run.err.contains(QStringLiteral("capped at 60 s")), qPrintable(run.err));

        run = check(openAiOptions(base("retried"))
            + QStringList { QStringLiteral("--attempts"), QStringLiteral("2"), QStringLiteral("--max-retry-after"),
                QStringLiteral("1") });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.ms < 8000, qPrintable(QString::number(run.ms)));
        QVERIFY(run.out.contains(QStringLiteral("2 attempts")));
    }

    void theKeyIsRedactedEverywhere()
    {
        // A 200 reply that echoes the Authorization header back.
        auto run = check(openAiOptions(base("echo")));
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(!run.out.contains(kKey) && !run.err.contains(kKey), qPrintable(run.out));
        QVERIFY(run.out.contains(QStringLiteral("[redacted]")));
        run = check(openAiOptions(base("echo")) + QStringList { QStringLiteral("--json") });
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(!run.out.contains(kKey), qPrintable(run.out));

        // A key in the URL's userinfo, printed by --json and by the text report.
        const auto port = QString::number(m_server->port());
        const QString url
            = QStringLiteral("http://alice:%1@127.0.0.1:%2/ok/v1").arg(QString::fromStdString(kUserinfoKey), port);
        for (const auto& extra : { QStringList { QStringLiteral("--json") }, QStringList {} }) {
            run = check(openAiOptions(url) + extra);
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(!run.out.contains(QString::fromStdString(kUserinfoKey))
                    && !run.err.contains(QString::fromStdString(kUserinfoKey)),
                qPrintable(run.out));
        }
    }

    void nullContentIsAnError()
    {
        auto run = check(openAiOptions(base("null")));
        QVERIFY2(run.exitCode == 19, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
        QVERIFY2(run.err.startsWith(QStringLiteral("llm-check: empty-reply: ")), qPrintable(run.err));
        run = check(openAiOptions(base("null")) + QStringList { QStringLiteral("--json") });
        QCOMPARE(run.exitCode, 19);
        QVERIFY(nlohmann::json::parse(run.out.toStdString())["category"] == "empty-reply");
    }

    // Issue 23: a 1 MB response header is "oversized" with a sentence that says so, not "[Out of memory]".
    void aMegabyteHeaderIsOversized()
    {
        const auto run = check(openAiOptions(base("bigheader")) + QStringList { QStringLiteral("--json") });
        QVERIFY2(
            !run.err.contains(QStringLiteral("Out of memory")) && !run.out.contains(QStringLiteral("Out of memory")),
            qPrintable(run.out + run.err));
        const auto json = nlohmann::json::parse(run.out.toStdString());
        QVERIFY2(json["category"] == "oversized", run.out.left(400).toUtf8().constData());
        QVERIFY2(
            json["message"].get<std::string>().find("headers") != std::string::npos, json["message"].dump().c_str());
    }

    void bytesThatAreNotUtf8()
    {
        for (const auto& extra : { QStringList { QStringLiteral("--json") }, QStringList {} }) {
            const auto run = check(openAiOptions(base("latin1")) + extra);
            QVERIFY2(!run.err.contains(QStringLiteral("[internal]")), qPrintable(run.err));
            // Replaced before the JSON is read (issue 23): the reply is read, its text kept around the bytes.
            QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
            if (!extra.isEmpty()) {
                const auto json = nlohmann::json::parse(run.out.toStdString());
                QVERIFY(json["category"] == "ok");
                QVERIFY(json["response"].get<std::string>().find("caf\xEF\xBF\xBD") != std::string::npos);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestLlmCheckInputs)
#include "test_llm_check_inputs.moc"
