// A planted API key and header secret never come out of the chat clients: a server that echoes
// the credentials back (in a 401 body and in a stream comment), with libcurl's trace logged, leaves
// them only as [redacted] in the exchange, its message and the log.
#include "llm_client_fixture.h"

#include <QtTest>

using namespace kl;
using namespace kl::test;
using namespace std::chrono_literals;

class TestLlmClientSecrets : public LlmClientFixture {
    Q_OBJECT

private slots:
    void aPlantedKeyNeverComesOut_data()
    {
        QTest::addColumn<int>("provider");
        QTest::addColumn<bool>("stream");
        QTest::newRow("openai, 401 echoing the headers") << 0 << false;
        QTest::newRow("openai, stream echoing the headers") << 0 << true;
        QTest::newRow("anthropic, 401 echoing the headers") << 1 << false;
        QTest::newRow("anthropic, stream echoing the headers") << 1 << true;
    }

    void aPlantedKeyNeverComesOut()
    {
        QFETCH(int, provider);
        QFETCH(bool, stream);
        auto c = config(provider == 0 ? Provider::OpenAi : Provider::Anthropic, "echo");
        c.traceHttp = true; // libcurl's trace shows the request headers: they must be redacted too
        c.extraHeaders = { { "X-Custom-Token", kHeaderSecret } };
        auto client = makeChatClient(c);
        const auto e = client->send(request(stream));
        QCOMPARE(e.ok(), stream);
        if (!stream)
            QCOMPARE(e.category, ExchangeCategory::Http401);
        // The server did get the secrets, and echoed them...
        const auto seen = m_server->requests().back();
        QVERIFY((seen.header("authorization") + seen.header("x-api-key")).find(kKey) != std::string::npos);
        QCOMPARE(seen.header("x-custom-token"), kHeaderSecret);
        QVERIFY(e.response.find("authorization=") != std::string::npos);
        // ... and nothing the client produced holds them.
        verifyNoSecret(e);
        QVERIFY(e.response.find("[redacted]") != std::string::npos);
        QVERIFY(logText().find("[redacted]") != std::string::npos);
        QVERIFY2(logText().find("> POST ") != std::string::npos, "the trace was not logged");
    }
};

QTEST_APPLESS_MAIN(TestLlmClientSecrets)
#include "test_llm_client_secrets.moc"
