// The chat clients' replies over real HTTP on 127.0.0.1 (the replay server): whole and streamed
// replies of both protocols (events split across TCP writes, CRLF, comments, multi-line data),
// usage and the request as sent, a 1 MB reply, several choices and k alternatives, and the URLs
// built from a base URL.
#include "llm_client_fixture.h"

#include "core/llm/alternatives.h"
#include "core/llm/redaction.h"
#include "core/llm/reply_parser.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <set>

using namespace kl;
using namespace kl::test;
using namespace std::chrono_literals;

class TestLlmClientReplies : public LlmClientFixture {
    Q_OBJECT

private slots:
    void openAiWholeReply()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "ok"));
        const auto e = client->send(request(false));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.text(), m_okText);
        QCOMPARE(e.choices.front().finishReason, std::string("stop"));
        QCOMPARE(e.usage.promptTokens, 3120LL);
        QCOMPARE(e.usage.completionTokens, 1450LL);
        QVERIFY(e.usage.reported);
        QCOMPARE(e.servedModel, std::string("gpt-4o-2024-08-06"));
        QCOMPARE(e.attempts, 1);
        QCOMPARE(e.httpStatus, 200);
        QVERIFY(e.latencyMs > 0);
        // What went over the wire.
        const auto seen = m_server->requests().back();
        QCOMPARE(seen.path, openAiPath("ok"));
        QCOMPARE(seen.header("authorization"), "Bearer " + kKey);
        const auto body = nlohmann::json::parse(seen.body);
        QVERIFY(body["model"] == "gpt-4o");
        QVERIFY(body["messages"][0]["role"] == "system");
        QVERIFY(body["messages"][1]["content"] == "Make layernorm_gelu faster.");
        QVERIFY(body["max_tokens"] == 4096);
        QVERIFY(body["stream"] == false);
        QVERIFY(!body.contains("stream_options"));
        QVERIFY(!body.contains("n"));
        // The record: the body as sent, the key only as [redacted].
        QCOMPARE(e.requestBody, seen.body);
        QCOMPARE(e.prompt.size(), std::size_t { 2 });
        QCOMPARE(e.prompt[0].role, std::string("system"));
        QCOMPARE(e.prompt[1].content, std::string("Make layernorm_gelu faster."));
        QVERIFY(std::find(e.requestHeaders.begin(), e.requestHeaders.end(), "Authorization: [redacted]")
            != e.requestHeaders.end());
        verifyNoSecret(e);
    }

    void openAiStreamSplitAcrossWrites()
    {
        auto c = config(Provider::OpenAi, "split");
        c.traceHttp = true;
        auto client = makeChatClient(c);
        std::string streamed;
        int pieces = 0;
        SendControl control;
        control.onText = [&](int choice, std::string_view text) {
            QCOMPARE(choice, 0);
            streamed.append(text);
            ++pieces;
        };
        const auto e = client->send(request(true), control);
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.text(), m_okText);
        QCOMPARE(streamed, m_okText);
        QVERIFY(pieces > 100);
        QVERIFY(e.streamed);
        QVERIFY(e.firstTokenMs >= 0 && e.firstTokenMs <= e.latencyMs);
        QCOMPARE(e.usage.promptTokens, 3120LL); // from the include_usage chunk
        QCOMPARE(e.usage.completionTokens, 1450LL);
        // The first 60 writes (1 to 31 bytes, cutting "data:", JSON and blank lines apart) each
        // reached the client in a read of its own.
        std::lock_guard lock(m_mutex);
        QVERIFY2(m_reads >= 60, qPrintable(QString::number(m_reads)));
        const auto seen = m_server->requests().back();
        QCOMPARE(seen.header("accept"), std::string("text/event-stream"));
        const auto body = nlohmann::json::parse(seen.body);
        QVERIFY(body["stream"] == true);
        QVERIFY(body["stream_options"]["include_usage"] == true);
    }

    void openAiStreamWithCrLfCommentsAndMultiLineData()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "multiline"));
        const auto e = client->send(request(true));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.text(), m_okText);
        QCOMPARE(e.usage.completionTokens, 1450LL);
    }

    void anthropicWholeReply()
    {
        auto client = makeChatClient(config(Provider::Anthropic, "ok"));
        const auto e = client->send(request(false));
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.text(), m_okText);
        QCOMPARE(e.choices.front().finishReason, std::string("stop")); // end_turn
        QCOMPARE(e.usage.promptTokens, 3050LL);
        QCOMPARE(e.usage.completionTokens, 1390LL);
        QCOMPARE(e.servedModel, std::string("claude-sonnet-4-20250514"));
        const auto seen = m_server->requests().back();
        QCOMPARE(seen.path, anthropicPath("ok"));
        QCOMPARE(seen.header("x-api-key"), kKey);
        QCOMPARE(seen.header("anthropic-version"), std::string("2023-06-01"));
        QVERIFY(seen.header("authorization").empty());
        const auto body = nlohmann::json::parse(seen.body);
        QVERIFY(body["system"] == "You optimise CUDA kernels.");
        QVERIFY(body["messages"].size() == std::size_t(1));
        QVERIFY(body["messages"][0]["role"] == "user");
        QVERIFY(body["max_tokens"] == 4096);
        QVERIFY(!body.contains("stream"));
        QVERIFY(std::find(e.requestHeaders.begin(), e.requestHeaders.end(), "x-api-key: [redacted]")
            != e.requestHeaders.end());
        verifyNoSecret(e);
    }

    void anthropicStreamSplitAcrossWrites()
    {
        auto c = config(Provider::Anthropic, "split");
        c.traceHttp = true;
        auto client = makeChatClient(c);
        std::string streamed;
        SendControl control;
        control.onText = [&](int, std::string_view text) { streamed.append(text); };
        const auto e = client->send(request(true), control);
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.text(), m_okText);
        QCOMPARE(streamed, m_okText);
        QCOMPARE(e.usage.promptTokens, 3050LL); // message_start
        QCOMPARE(e.usage.completionTokens, 1390LL); // message_delta
        QCOMPARE(e.choices.front().finishReason, std::string("stop"));
        std::lock_guard lock(m_mutex);
        QVERIFY2(m_reads >= 60, qPrintable(QString::number(m_reads)));
        QVERIFY(nlohmann::json::parse(m_server->requests().back().body)["stream"] == true);
    }

    void aMegabyteReply_data()
    {
        QTest::addColumn<bool>("stream");
        QTest::newRow("whole") << false;
        QTest::newRow("streamed") << true;
    }

    void aMegabyteReply()
    {
        QFETCH(bool, stream);
        auto client = makeChatClient(config(Provider::OpenAi, "big"));
        const auto e = client->send(request(stream));
        QVERIFY2(e.ok(), e.message.c_str());
        // The client keeps a prefix that says how much it dropped (issue 23: a refused reply must not
        // fill the store); the reply parser refuses it as oversized.
        QVERIFY(e.text().size() > kMaxNetworkTextBytes && e.text().size() < kMaxNetworkTextBytes + 64);
        QCOMPARE(e.text().substr(0, kMaxNetworkTextBytes), megabyteReply().substr(0, kMaxNetworkTextBytes));
        QVERIFY2(
            e.text().find("more bytes not kept]") != std::string::npos, e.text().substr(kMaxNetworkTextBytes).c_str());
        const auto parsed = parseCandidateReply(e.text(), e.choices.front().finishReason, {});
        QCOMPARE(parsed.category, ReplyCategory::Oversized);
    }

    void severalChoicesInOneRequest()
    {
        auto client = makeChatClient(config(Provider::OpenAi, "choices"));
        QVERIFY(client->supportsChoices());
        QVERIFY(!makeChatClient(config(Provider::Anthropic, "ok"))->supportsChoices());
        auto r = request(false);
        r.n = 2;
        const auto e = client->send(r);
        QVERIFY2(e.ok(), e.message.c_str());
        QCOMPARE(e.choices.size(), std::size_t(2));
        QCOMPARE(e.choices[0].text, m_okText);
        QCOMPARE(e.choices[1].text, std::string("## Plan\nA second opinion."));
        QVERIFY(nlohmann::json::parse(m_server->requests().back().body)["n"] == 2);
    }

    void kAlternativesForOnePrompt()
    {
        // Anthropic has no n: k requests run in parallel.
        auto anthropic = makeChatClient(config(Provider::Anthropic, "ok"));
        const int before = m_server->requestCount(anthropicPath("ok"));
        std::mutex mutex;
        std::set<int> streamedBy;
        SendControl control;
        control.onText = [&](int alternative, std::string_view) {
            std::lock_guard lock(mutex);
            streamedBy.insert(alternative);
        };
        const auto three = sendAlternatives(*anthropic, request(true), 3, control);
        QCOMPARE(three.exchanges.size(), std::size_t(3));
        QCOMPARE(three.choices.size(), std::size_t(3));
        for (const auto& e : three.exchanges) {
            QVERIFY2(e.ok(), e.message.c_str());
            QCOMPARE(e.text(), m_okText);
        }
        QCOMPARE(streamedBy, (std::set<int> { 0, 1, 2 }));
        QCOMPARE(m_server->requestCount(anthropicPath("ok")), before + 3);
        // OpenAI-compatible: one request with n.
        auto openAi = makeChatClient(config(Provider::OpenAi, "choices"));
        const auto two = sendAlternatives(*openAi, request(false), 2);
        QCOMPARE(two.exchanges.size(), std::size_t(1));
        QCOMPARE(two.choices.size(), std::size_t(2));
        QVERIFY(nlohmann::json::parse(m_server->requests().back().body)["n"] == 2);
    }

    void urlsAreBuiltFromTheBaseUrl()
    {
        // Requests to these go nowhere: the names are under .invalid.
        auto c = config(Provider::OpenAi, "ok");
        for (const auto& [base, url] : std::vector<std::pair<std::string, std::string>> {
                 { "http://h.invalid/v1", "http://h.invalid/v1/chat/completions" },
                 { "http://h.invalid/v1/", "http://h.invalid/v1/chat/completions" },
                 { "http://h.invalid/v1/chat/completions", "http://h.invalid/v1/chat/completions" } }) {
            c.baseUrl = base;
            QCOMPARE(makeChatClient(c)->send(request(false)).url, url);
        }
        auto a = config(Provider::Anthropic, "ok");
        for (const auto& [base, url] :
            std::vector<std::pair<std::string, std::string>> { { "http://h.invalid", "http://h.invalid/v1/messages" },
                { "http://h.invalid/v1", "http://h.invalid/v1/messages" },
                { "http://h.invalid/v1/messages/", "http://h.invalid/v1/messages" } }) {
            a.baseUrl = base;
            QCOMPARE(makeChatClient(a)->send(request(false)).url, url);
        }
    }
};

QTEST_APPLESS_MAIN(TestLlmClientReplies)
#include "test_llm_client_replies.moc"
