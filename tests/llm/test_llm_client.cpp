// The chat clients against a real HTTP server on 127.0.0.1 that replays recorded replies of both
// protocols: whole and streamed (events split across TCP writes), usage, retries with
// Retry-After, stalls, resets, bad JSON, a 1 MB reply, cancellation, the budget, and a planted
// API key that must never come back out of the client.
#include "replay_bodies.h"
#include "replay_server.h"

#include "core/llm/alternatives.h"
#include "core/llm/chat_client.h"
#include "core/llm/reply_parser.h"
#include "core/llm/token_budget.h"

#include <QtTest>

#include <arpa/inet.h>
#include <condition_variable>
#include <mutex>
#include <netinet/in.h>
#include <set>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace kl;
using namespace std::chrono_literals;
using test::fixture;
using test::ReplayServer;
using test::Reply;
using test::SeenRequest;

namespace {

const std::string kKey = "sk-kltest-PLANTED-7c1e9a2b4d6f8e0a";
const std::string kHeaderSecret = "hdr-secret-PLANTED-3b5d7f9e1c";

std::string openAiPath(const std::string& scenario) { return "/" + scenario + "/v1/chat/completions"; }
std::string anthropicPath(const std::string& scenario) { return "/" + scenario + "/v1/messages"; }

bool wantsStream(const SeenRequest& r) { return nlohmann::json::parse(r.body).value("stream", false); }

Reply json(const std::string& body, int status = 200)
{
    Reply r;
    r.status = status;
    r.body = body;
    return r;
}

Reply sse(const std::string& body)
{
    Reply r;
    r.contentType = "text/event-stream";
    r.chunked = true;
    r.body = body;
    return r;
}

// A port nothing listens on: bound, never listened, closed.
int closedPort()
{
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(s);
    return ntohs(address.sin_port);
}

// Byte offset just past the n-th event (events end with a blank line).
std::size_t afterEvents(const std::string& stream, int n)
{
    std::size_t pos = 0;
    for (int i = 0; i < n; ++i)
        pos = stream.find("\n\n", pos) + 2;
    return pos;
}

// A reply whose candidate carries a 1 MiB comment: larger than any candidate may be.
std::string megabyteReply()
{
    auto text = fixture("replies/ok_vectorised.md");
    std::string filler;
    for (int i = 0; filler.size() < (1u << 20); ++i)
        filler += "// padding line " + std::to_string(i) + ": the model explains itself at length\n";
    text.insert(text.find("#include <cuda_fp16.h>"), filler);
    return text;
}

} // namespace

class TestLlmClient : public QObject {
    Q_OBJECT

    std::unique_ptr<ReplayServer> m_server;
    std::string m_okText;
    std::mutex m_mutex;
    std::condition_variable m_readsChanged;
    int m_reads = 0;
    std::vector<std::string> m_log;

    EndpointConfig config(Provider provider, const std::string& scenario)
    {
        EndpointConfig c;
        c.provider = provider;
        c.baseUrl = m_server->url("/" + scenario + (provider == Provider::OpenAi ? "/v1" : ""));
        c.model = provider == Provider::OpenAi ? "gpt-4o" : "claude-sonnet-4-20250514";
        c.apiKey = kKey;
        c.retry.maxAttempts = 3;
        c.retry.initialDelay = 20ms;
        c.retry.maxDelay = 100ms;
        c.timeouts.connect = 2s;
        c.timeouts.total = 15s;
        c.timeouts.stall = 5s;
        c.log = [this](const std::string& line) {
            std::lock_guard lock(m_mutex);
            m_log.push_back(line);
            // libcurl's trace says "< N bytes" for each read of the body.
            if (line.rfind("< ", 0) == 0 && line.size() > 8 && line.compare(line.size() - 6, 6, " bytes") == 0) {
                ++m_reads;
                m_readsChanged.notify_all();
            }
        };
        return c;
    }

    static ChatRequest request(bool stream)
    {
        ChatRequest r;
        r.system = "You optimise CUDA kernels.";
        r.messages.push_back({ "user", "Make layernorm_gelu faster." });
        r.maxTokens = 4096;
        r.temperature = 0.2;
        r.stream = stream;
        return r;
    }

    // Server side of a paced stream: wait until the client has read `count` pieces.
    void waitForReads(int count)
    {
        std::unique_lock lock(m_mutex);
        m_readsChanged.wait_for(lock, 2s, [&] { return m_reads >= count; });
    }

    Reply pacedStream(const std::string& body)
    {
        auto r = sse(body);
        static const std::size_t sizes[] = { 1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31 };
        for (int i = 0; i < 60; ++i)
            r.firstPieces.push_back(sizes[i % 12]);
        r.pace = [this, written = std::make_shared<int>(0)] { waitForReads(++*written); };
        return r;
    }

    std::string logText()
    {
        std::lock_guard lock(m_mutex);
        std::string all;
        for (const auto& line : m_log)
            all += line + "\n";
        return all;
    }

    void verifyNoSecret(const Exchange& e)
    {
        for (const auto& secret : { kKey, kHeaderSecret }) {
            QVERIFY2(e.toJson().dump().find(secret) == std::string::npos, "the secret is in the exchange");
            QVERIFY2(e.message.find(secret) == std::string::npos, e.message.c_str());
            QVERIFY2(logText().find(secret) == std::string::npos, "the secret is in the log");
        }
    }

private slots:
    void initTestCase()
    {
        // Everything stays on 127.0.0.1: no proxy may see these requests.
        for (const char* name : { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" })
            ::unsetenv(name);
        m_server = std::make_unique<ReplayServer>();
        m_okText = fixture("replies/ok_vectorised.md");
        auto& s = *m_server;

        s.route(openAiPath("ok"), [](const SeenRequest& r, int) {
            return wantsStream(r) ? sse(fixture("openai/chat_completion_stream.sse"))
                                  : json(fixture("openai/chat_completion.json"));
        });
        s.route(anthropicPath("ok"), [](const SeenRequest& r, int) {
            return wantsStream(r) ? sse(fixture("anthropic/message_stream.sse"))
                                  : json(fixture("anthropic/message.json"));
        });
        s.route(openAiPath("split"),
            [this](const SeenRequest&, int) { return pacedStream(fixture("openai/chat_completion_stream.sse")); });
        s.route(anthropicPath("split"),
            [this](const SeenRequest&, int) { return pacedStream(fixture("anthropic/message_stream.sse")); });
        s.route(openAiPath("multiline"), [](const SeenRequest&, int) {
            auto r = sse(fixture("openai/chat_completion_multiline.sse"));
            r.firstPieces.assign(400, 7);
            return r;
        });
        s.route(anthropicPath("overloaded"),
            [](const SeenRequest&, int) { return sse(fixture("anthropic/stream_overloaded.sse")); });
        s.route(openAiPath("ratelimit"), [](const SeenRequest&, int count) {
            if (count > 1)
                return json(fixture("openai/chat_completion.json"));
            auto r = json(fixture("openai/error_429.json"), 429);
            r.headers = { { "Retry-After", "1" }, { "x-ratelimit-remaining-tokens", "0" } };
            return r;
        });
        s.route(anthropicPath("overloaded-date"), [](const SeenRequest&, int count) {
            if (count > 1)
                return json(fixture("anthropic/message.json"));
            auto r = json(
                "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", 503);
            char date[64];
            const std::time_t when = std::time(nullptr) + 2;
            std::tm parts {};
            gmtime_r(&when, &parts);
            std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &parts);
            r.headers = { { "Retry-After", date } };
            return r;
        });
        s.route(openAiPath("ratelimit-long"), [](const SeenRequest&, int) {
            auto r = json(fixture("openai/error_429.json"), 429);
            r.headers = { { "Retry-After", "30" } };
            return r;
        });
        s.route(openAiPath("flaky"), [](const SeenRequest&, int count) {
            return count == 1 ? json(fixture("openai/error_500.json"), 500)
                              : json(fixture("openai/chat_completion.json"));
        });
        for (int status : { 400, 401, 403, 404, 422 })
            s.route(openAiPath("status-" + std::to_string(status)), [status](const SeenRequest&, int) {
                return status == 404 ? json(fixture("openai/error_404_model.json"), 404)
                                     : json("{\"error\":{\"message\":\"status " + std::to_string(status)
                                             + "\",\"type\":\"invalid_request_error\"}}",
                                         status);
            });
        s.route(anthropicPath("status-404"),
            [](const SeenRequest&, int) { return json(fixture("anthropic/error_404.json"), 404); });
        s.route(openAiPath("stall"), [](const SeenRequest&, int) {
            auto r = sse(fixture("openai/chat_completion_stream.sse"));
            r.holdAfter = afterEvents(r.body, 5);
            return r;
        });
        s.route(openAiPath("slow"), [](const SeenRequest&, int) {
            auto r = json(fixture("openai/chat_completion.json"));
            r.holdAfter = 0;
            return r;
        });
        s.route(openAiPath("hold"), [](const SeenRequest&, int) {
            auto r = sse(fixture("openai/chat_completion_stream.sse"));
            r.holdAfter = afterEvents(r.body, 3);
            return r;
        });
        s.route(openAiPath("reset"), [](const SeenRequest&, int) {
            auto r = sse(fixture("openai/chat_completion_stream.sse"));
            r.resetAfter = afterEvents(r.body, 20) + 17; // in the middle of an event
            return r;
        });
        s.route(openAiPath("reset-body"), [](const SeenRequest&, int) {
            auto r = json(fixture("openai/chat_completion.json"));
            r.resetAfter = r.body.size() / 2;
            return r;
        });
        s.route(openAiPath("badjson"), [](const SeenRequest&, int) {
            return json("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"mess");
        });
        s.route(openAiPath("nochoices"), [](const SeenRequest&, int) { return json("{\"id\":\"chatcmpl-1\"}"); });
        s.route(openAiPath("badevent"), [](const SeenRequest&, int) {
            auto body = fixture("openai/chat_completion_stream.sse");
            body.insert(afterEvents(body, 4), "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\n");
            return sse(body);
        });
        s.route(openAiPath("nofinish"), [](const SeenRequest&, int) {
            const auto body = fixture("openai/chat_completion_stream.sse");
            return sse(body.substr(0, afterEvents(body, 30)));
        });
        s.route(openAiPath("big"), [](const SeenRequest& r, int) {
            const auto text = megabyteReply();
            if (!wantsStream(r)) {
                auto object = nlohmann::json::parse(fixture("openai/chat_completion.json"));
                object["choices"][0]["message"]["content"] = text;
                return json(object.dump());
            }
            return sse(test::openAiStream({ test::fixedPieces(text, 4096) }, "gpt-4o", std::nullopt));
        });
        s.route(openAiPath("choices"), [](const SeenRequest&, int) {
            auto object = nlohmann::json::parse(fixture("openai/chat_completion.json"));
            auto second = object["choices"][0];
            second["index"] = 1;
            second["message"]["content"] = "## Plan\nA second opinion.";
            object["choices"].push_back(second);
            return json(object.dump());
        });
        // A server that echoes credentials back: in an error body, and in a stream comment.
        const auto echo = [](const SeenRequest& r, int) {
            const std::string credentials = "authorization=" + r.header("authorization")
                + " x-api-key=" + r.header("x-api-key") + " x-custom-token=" + r.header("x-custom-token");
            if (wantsStream(r)) {
                const bool anthropic = r.path.find("/messages") != std::string::npos;
                return sse(": echo " + credentials + "\n\n"
                    + fixture(anthropic ? "anthropic/message_stream.sse" : "openai/chat_completion_stream.sse"));
            }
            return json(nlohmann::json({ { "error",
                                           { { "message", "Incorrect API key provided: " + credentials },
                                               { "type", "invalid_request_error" }, { "code", "invalid_api_key" } } } })
                            .dump(),
                401);
        };
        s.route(openAiPath("echo"), echo);
        s.route(anthropicPath("echo"), echo);
    }

    void init()
    {
        std::lock_guard lock(m_mutex);
        m_log.clear();
        m_reads = 0;
    }

    void cleanup() { m_server->releaseHeld(); }

    void cleanupTestCase() { m_server.reset(); }

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
        QCOMPARE(e.request, body);
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
        QCOMPARE(e.text(), megabyteReply());
        QVERIFY(e.text().size() > (1u << 20));
        // The client delivers it; the reply parser refuses it.
        const auto parsed = parseCandidateReply(e.text(), e.choices.front().finishReason, {});
        QCOMPARE(parsed.category, ReplyCategory::Oversized);
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

QTEST_APPLESS_MAIN(TestLlmClient)
#include "test_llm_client.moc"
