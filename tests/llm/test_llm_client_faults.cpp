// The chat clients when the endpoint fails, over real HTTP on 127.0.0.1 (the replay server):
// retries with Retry-After (seconds and HTTP dates) and backoff, statuses that are never retried,
// stalls, timeouts, connection resets, bad JSON, streams without their end, cancellation mid-stream
// and while waiting to retry, the token budget, TLS, refused connections and unknown hosts.
#include "llm_client_fixture.h"

#include "core/llm/token_budget.h"

#include <QtTest>

#include <atomic>
#include <thread>

using namespace kl;
using namespace kl::test;
using namespace std::chrono_literals;

class TestLlmClientFaults : public LlmClientFixture {
    Q_OBJECT

private slots:
    void anthropicErrorEventMidStream()
    {
        auto client = makeChatClient(config(Provider::Anthropic, "overloaded"));
        const auto e = client->send(request(true));
        QCOMPARE(e.category, ExchangeCategory::Http5xx);
        QVERIFY2(e.message.find("overloaded_error") != std::string::npos, e.message.c_str());
        QVERIFY(!e.text().empty() && m_okText.rfind(e.text(), 0) == 0); // the part that arrived
        QCOMPARE(e.attempts, 1); // text was already streamed: no silent repeat
    }

    void retryAfterOn429IsHonoured()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "ratelimit"));
        const auto e = client->send(request(false));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.attempts, 2);
        QVERIFY2(e.retryWaitMs >= 950 && e.retryWaitMs < 2000, qPrintable(QString::number(e.retryWaitMs)));
        QVERIFY(e.latencyMs >= 1000);
        QCOMPARE(m_server->requestCount(openAiPath("ratelimit")), 2);
        QVERIFY2(logText().find("(Retry-After 1 s)") != std::string::npos, logText().c_str());
    }

    void retryAfterAsHttpDateOn503()
    {
        auto client = makeChatClient(config(Provider::Anthropic, "overloaded-date"));
        const auto e = client->send(request(false));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.attempts, 2);
        // The date was 2 s ahead of the server's clock, in whole seconds: 1 to 2 s from now.
        QVERIFY2(e.retryWaitMs >= 950 && e.retryWaitMs < 2600, qPrintable(QString::number(e.retryWaitMs)));
    }

    void serverErrorThenSuccess()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "flaky"));
        const auto e = client->send(request(false));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.attempts, 2);
        QVERIFY(e.retryWaitMs >= 10 && e.retryWaitMs < 500); // backoff: 20 ms with jitter
        QVERIFY(logText().find("http-5xx") != std::string::npos);
    }

    void noRetryOnErrorsThatCannotSucceed_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<int>("provider");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("400") << "status-400" << 0 << "http-4xx"
                             << "HTTP 400";
        QTest::newRow("401") << "status-401" << 0 << "http-401"
                             << "HTTP 401";
        QTest::newRow("403") << "status-403" << 0 << "http-403"
                             << "HTTP 403";
        QTest::newRow("404 model") << "status-404" << 0 << "http-404"
                                   << "gpt-9-nonexistent";
        QTest::newRow("422") << "status-422" << 0 << "http-4xx"
                             << "HTTP 422";
        QTest::newRow("anthropic 404") << "status-404" << 1 << "http-404"
                                       << "not_found_error";
    }

    void noRetryOnErrorsThatCannotSucceed()
    {
        QFETCH(QString, scenario);
        QFETCH(int, provider);
        QFETCH(QString, category);
        QFETCH(QString, messagePart);
        const auto p = provider == 0 ? Provider::OpenAi : Provider::Anthropic;
        const auto path
            = p == Provider::OpenAi ? openAiPath(scenario.toStdString()) : anthropicPath(scenario.toStdString());
        const int before = m_server->requestCount(path);
        auto client = makeChatClient(config(p, scenario.toStdString()));
        const auto e = client->send(request(false));
        QCOMPARE(QString::fromStdString(std::string(exchangeCategoryName(e.category))), category);
        QVERIFY2(QString::fromStdString(e.message).contains(messagePart), e.message.c_str());
        QCOMPARE(e.attempts, 1);
        QCOMPARE(m_server->requestCount(path), before + 1);
    }

    void aStallHitsTheStallTimeout()
    {
        auto c = config(Provider::OpenAi, "stall");
        c.timeouts.stall = 700ms;
        auto client = makeChatClient(c);
        const auto e = client->send(request(true));
        QCOMPARE(e.category, ExchangeCategory::Stall);
        QVERIFY2(e.latencyMs >= 700 && e.latencyMs < 3000, qPrintable(QString::number(e.latencyMs)));
        QVERIFY(!e.text().empty()); // what came before the stall is kept
        QCOMPARE(e.attempts, 1);
    }

    void aSilentPlainReplyHitsTheTotalTimeout()
    {
        auto c = config(Provider::OpenAi, "slow");
        c.timeouts.total = 700ms;
        c.timeouts.stall = 100ms; // no effect on a plain reply: silence is how it works
        c.retry.maxAttempts = 1;
        auto client = makeChatClient(c);
        const auto e = client->send(request(false));
        QCOMPARE(e.category, ExchangeCategory::Timeout);
        QVERIFY2(e.latencyMs >= 650 && e.latencyMs < 3000, qPrintable(QString::number(e.latencyMs)));
    }

    void aConnectionResetMidStreamIsTruncated()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "reset"));
        const auto e = client->send(request(true));
        QCOMPARE(e.category, ExchangeCategory::Truncated);
        QVERIFY(!e.text().empty() && e.text().size() < m_okText.size());
        QVERIFY(m_okText.rfind(e.text(), 0) == 0);
        QCOMPARE(e.attempts, 1);
    }

    void aConnectionResetMidBodyIsRetried()
    {
        const int before = m_server->requestCount(openAiPath("reset-body"));
        auto client = makeChatClient(config(Provider::OpenAi, "reset-body"));
        const auto e = client->send(request(false));
        QCOMPARE(e.category, ExchangeCategory::Truncated);
        QCOMPARE(e.attempts, 3);
        QCOMPARE(m_server->requestCount(openAiPath("reset-body")), before + 3);
    }

    void invalidJson_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<bool>("stream");
        QTest::newRow("cut JSON body") << "badjson" << false;
        QTest::newRow("no choices") << "nochoices" << false;
        QTest::newRow("bad event") << "badevent" << true;
    }

    void invalidJson()
    {
        QFETCH(QString, scenario);
        QFETCH(bool, stream);
        auto client = makeChatClient(config(Provider::OpenAi, scenario.toStdString()));
        const auto e = client->send(request(stream));
        QCOMPARE(e.category, ExchangeCategory::BadJson);
        QCOMPARE(e.attempts, 1);
        QVERIFY(!e.message.empty());
    }

    void aStreamThatEndsWithoutItsFinishIsTruncated()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "nofinish"));
        const auto e = client->send(request(true));
        QCOMPARE(e.category, ExchangeCategory::Truncated);
        QVERIFY2(e.message.find("end-of-reply") != std::string::npos, e.message.c_str());
    }

    void cancelMidStream()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "hold"));
        std::atomic<bool> cancel { false };
        SendControl control;
        control.cancel = &cancel;
        control.onText = [&](int, std::string_view) { cancel = true; };
        const auto e = client->send(request(true), control);
        QCOMPARE(e.category, ExchangeCategory::Cancelled);
        QVERIFY(!e.text().empty());
        QVERIFY2(e.latencyMs < 2000, qPrintable(QString::number(e.latencyMs))); // the server holds for 20 s
        QCOMPARE(e.attempts, 1);
    }

    void cancelWhileWaitingToRetry()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "ratelimit-long"));
        const int before = m_server->requestCount(openAiPath("ratelimit-long"));
        std::atomic<bool> cancel { false };
        std::thread canceller([&] {
            m_server->waitForRequests(openAiPath("ratelimit-long"), before + 1, 5s);
            cancel = true;
        });
        SendControl control;
        control.cancel = &cancel;
        const auto e = client->send(request(false), control);
        canceller.join();
        QCOMPARE(e.category, ExchangeCategory::Cancelled);
        QCOMPARE(e.attempts, 1);
        QVERIFY2(e.latencyMs < 3000, qPrintable(QString::number(e.latencyMs))); // Retry-After was 30 s
    }

    void theTokenBudgetRefusesToSendWhenSpent()
    {
        auto c = config(Provider::OpenAi, "ok");
        c.budget = std::make_shared<TokenBudget>(6000);
        auto client = makeChatClient(c);
        const int before = m_server->requestCount(openAiPath("ok"));
        QVERIFY(client->send(request(false)).ok()); // 4570 tokens
        QVERIFY(client->send(request(true)).ok()); // 9140: over, but it was allowed to start
        const auto refused = client->send(request(false));
        QCOMPARE(refused.category, ExchangeCategory::BudgetExhausted);
        QCOMPARE(refused.attempts, 0);
        QCOMPARE(c.budget->used(), 9140LL);
        QCOMPARE(m_server->requestCount(openAiPath("ok")), before + 2);
    }

    void tlsFailure()
    {
        auto c = config(Provider::OpenAi, "ok");
        c.baseUrl = "https://127.0.0.1:" + std::to_string(m_server->port()) + "/ok/v1"; // it speaks plain HTTP
        auto client = makeChatClient(c);
        const auto e = client->send(request(false));
        QCOMPARE(e.category, ExchangeCategory::Tls);
        QCOMPARE(e.attempts, 1);
    }

    void connectionRefusedIsRetriedThenReported()
    {
        auto c = config(Provider::OpenAi, "ok");
        c.baseUrl = "http://127.0.0.1:" + std::to_string(closedPort()) + "/v1";
        c.retry.maxAttempts = 2;
        auto client = makeChatClient(c);
        const auto e = client->send(request(false));
        QCOMPARE(e.category, ExchangeCategory::ConnectionRefused);
        QCOMPARE(e.attempts, 2);
        QCOMPARE(e.httpStatus, 0);
    }

    void anInvalidHostNameFailsAtOnce()
    {
        auto c = config(Provider::Anthropic, "ok");
        c.baseUrl = "https://api.kernelloop-test.invalid";
        auto client = makeChatClient(c);
        const auto e = client->send(request(true));
        QCOMPARE(e.category, ExchangeCategory::Dns);
        QCOMPARE(e.attempts, 1);
        QVERIFY(e.latencyMs < 500);
        QCOMPARE(e.url, std::string("https://api.kernelloop-test.invalid/v1/messages"));
    }
};

QTEST_APPLESS_MAIN(TestLlmClientFaults)
#include "test_llm_client_faults.moc"
