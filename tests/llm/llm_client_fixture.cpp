#include "llm_client_fixture.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <ctime>

namespace kl::test {

using namespace std::chrono_literals;

namespace {

bool wantsStream(const SeenRequest& r) { return nlohmann::json::parse(r.body).value("stream", false); }

// Byte offset just past the n-th event (events end with a blank line).
std::size_t afterEvents(const std::string& stream, int n)
{
    std::size_t pos = 0;
    for (int i = 0; i < n; ++i)
        pos = stream.find("\n\n", pos) + 2;
    return pos;
}

} // namespace

std::string openAiPath(const std::string& scenario) { return "/" + scenario + "/v1/chat/completions"; }

std::string anthropicPath(const std::string& scenario) { return "/" + scenario + "/v1/messages"; }

std::string megabyteReply()
{
    auto text = fixture("replies/ok_vectorised.md");
    std::string filler;
    for (int i = 0; filler.size() < (1u << 20); ++i)
        filler += "// padding line " + std::to_string(i) + ": the model explains itself at length\n";
    text.insert(text.find("#include <cuda_fp16.h>"), filler);
    return text;
}

EndpointConfig LlmClientFixture::config(Provider provider, const std::string& scenario)
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

ChatRequest LlmClientFixture::request(bool stream)
{
    ChatRequest r;
    r.system = "You optimise CUDA kernels.";
    r.messages.push_back({ "user", "Make layernorm_gelu faster." });
    r.maxTokens = 4096;
    r.temperature = 0.2;
    r.stream = stream;
    return r;
}

void LlmClientFixture::waitForReads(int count)
{
    std::unique_lock lock(m_mutex);
    m_readsChanged.wait_for(lock, 2s, [&] { return m_reads >= count; });
}

Reply LlmClientFixture::pacedStream(const std::string& body)
{
    auto r = eventStreamReply(body);
    static const std::size_t sizes[] = { 1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31 };
    for (int i = 0; i < 60; ++i)
        r.firstPieces.push_back(sizes[i % 12]);
    r.pace = [this, written = std::make_shared<int>(0)] { waitForReads(++*written); };
    return r;
}

std::string LlmClientFixture::logText()
{
    std::lock_guard lock(m_mutex);
    std::string all;
    for (const auto& line : m_log)
        all += line + "\n";
    return all;
}

void LlmClientFixture::verifyNoSecret(const Exchange& e)
{
    for (const auto& secret : { kKey, kHeaderSecret }) {
        std::string all = e.url + e.requestBody + e.response + e.servedModel;
        for (const auto& header : e.requestHeaders)
            all += header;
        for (const auto& m : e.prompt)
            all += m.content;
        for (const auto& c : e.choices)
            all += c.text;
        QVERIFY2(all.find(secret) == std::string::npos, "the secret is in the exchange");
        QVERIFY2(e.message.find(secret) == std::string::npos, e.message.c_str());
        QVERIFY2(logText().find(secret) == std::string::npos, "the secret is in the log");
    }
}

void LlmClientFixture::initTestCase()
{
    // Everything stays on 127.0.0.1: no proxy may see these requests.
    for (const char* name : { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" })
        ::unsetenv(name);
    m_server = std::make_unique<ReplayServer>();
    m_okText = fixture("replies/ok_vectorised.md");
    auto& s = *m_server;

    s.route(openAiPath("ok"), [](const SeenRequest& r, int) {
        return wantsStream(r) ? eventStreamReply(fixture("openai/chat_completion_stream.sse"))
                              : jsonReply(fixture("openai/chat_completion.json"));
    });
    s.route(anthropicPath("ok"), [](const SeenRequest& r, int) {
        return wantsStream(r) ? eventStreamReply(fixture("anthropic/message_stream.sse"))
                              : jsonReply(fixture("anthropic/message.json"));
    });
    s.route(openAiPath("split"),
        [this](const SeenRequest&, int) { return pacedStream(fixture("openai/chat_completion_stream.sse")); });
    s.route(anthropicPath("split"),
        [this](const SeenRequest&, int) { return pacedStream(fixture("anthropic/message_stream.sse")); });
    s.route(openAiPath("multiline"), [](const SeenRequest&, int) {
        auto r = eventStreamReply(fixture("openai/chat_completion_multiline.sse"));
        r.firstPieces.assign(400, 7);
        return r;
    });
    s.route(anthropicPath("overloaded"),
        [](const SeenRequest&, int) { return eventStreamReply(fixture("anthropic/stream_overloaded.sse")); });
    s.route(openAiPath("ratelimit"), [](const SeenRequest&, int count) {
        if (count > 1)
            return jsonReply(fixture("openai/chat_completion.json"));
        auto r = jsonReply(fixture("openai/error_429.json"), 429);
        r.headers = { { "Retry-After", "1" }, { "x-ratelimit-remaining-tokens", "0" } };
        return r;
    });
    s.route(anthropicPath("overloaded-date"), [](const SeenRequest&, int count) {
        if (count > 1)
            return jsonReply(fixture("anthropic/message.json"));
        auto r = jsonReply(
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
        auto r = jsonReply(fixture("openai/error_429.json"), 429);
        r.headers = { { "Retry-After", "30" } };
        return r;
    });
    s.route(openAiPath("flaky"), [](const SeenRequest&, int count) {
        return count == 1 ? jsonReply(fixture("openai/error_500.json"), 500)
                          : jsonReply(fixture("openai/chat_completion.json"));
    });
    for (int status : { 400, 401, 403, 404, 422 })
        s.route(openAiPath("status-" + std::to_string(status)), [status](const SeenRequest&, int) {
            return status == 404 ? jsonReply(fixture("openai/error_404_model.json"), 404)
                                 : jsonReply("{\"error\":{\"message\":\"status " + std::to_string(status)
                                         + "\",\"type\":\"invalid_request_error\"}}",
                                     status);
        });
    s.route(anthropicPath("status-404"),
        [](const SeenRequest&, int) { return jsonReply(fixture("anthropic/error_404.json"), 404); });
    s.route(openAiPath("stall"), [](const SeenRequest&, int) {
        auto r = eventStreamReply(fixture("openai/chat_completion_stream.sse"));
        r.holdAfter = afterEvents(r.body, 5);
        return r;
    });
    s.route(openAiPath("slow"), [](const SeenRequest&, int) {
        auto r = jsonReply(fixture("openai/chat_completion.json"));
        r.holdAfter = 0;
        return r;
    });
    s.route(openAiPath("hold"), [](const SeenRequest&, int) {
        auto r = eventStreamReply(fixture("openai/chat_completion_stream.sse"));
        r.holdAfter = afterEvents(r.body, 3);
        return r;
    });
    s.route(openAiPath("reset"), [](const SeenRequest&, int) {
        auto r = eventStreamReply(fixture("openai/chat_completion_stream.sse"));
        r.resetAfter = afterEvents(r.body, 20) + 17; // in the middle of an event
        return r;
    });
    s.route(openAiPath("reset-body"), [](const SeenRequest&, int) {
        auto r = jsonReply(fixture("openai/chat_completion.json"));
        r.resetAfter = r.body.size() / 2;
        return r;
    });
    s.route(openAiPath("badjson"), [](const SeenRequest&, int) {
        return jsonReply("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"mess");
    });
    s.route(openAiPath("nochoices"), [](const SeenRequest&, int) { return jsonReply("{\"id\":\"chatcmpl-1\"}"); });
    s.route(openAiPath("badevent"), [](const SeenRequest&, int) {
        auto body = fixture("openai/chat_completion_stream.sse");
        body.insert(afterEvents(body, 4), "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\n");
        return eventStreamReply(body);
    });
    s.route(openAiPath("nofinish"), [](const SeenRequest&, int) {
        const auto body = fixture("openai/chat_completion_stream.sse");
        return eventStreamReply(body.substr(0, afterEvents(body, 30)));
    });
    s.route(openAiPath("big"), [](const SeenRequest& r, int) {
        const auto text = megabyteReply();
        if (!wantsStream(r)) {
            auto object = nlohmann::json::parse(fixture("openai/chat_completion.json"));
            object["choices"][0]["message"]["content"] = text;
            return jsonReply(object.dump());
        }
        return eventStreamReply(test::openAiStream({ test::fixedPieces(text, 4096) }, "gpt-4o", std::nullopt));
    });
    s.route(openAiPath("choices"), [](const SeenRequest&, int) {
        auto object = nlohmann::json::parse(fixture("openai/chat_completion.json"));
        auto second = object["choices"][0];
        second["index"] = 1;
        second["message"]["content"] = "## Plan\nA second opinion.";
        object["choices"].push_back(second);
        return jsonReply(object.dump());
    });
    // A server that echoes credentials back: in an error body, and in a stream comment.
    const auto echo = [](const SeenRequest& r, int) {
        const std::string credentials = "authorization=" + r.header("authorization")
            + " x-api-key=" + r.header("x-api-key") + " x-custom-token=" + r.header("x-custom-token");
        if (wantsStream(r)) {
            const bool anthropic = r.path.find("/messages") != std::string::npos;
            return eventStreamReply(": echo " + credentials + "\n\n"
                + fixture(anthropic ? "anthropic/message_stream.sse" : "openai/chat_completion_stream.sse"));
        }
        return jsonReply(
            nlohmann::json({ { "error",
                               { { "message", "Incorrect API key provided: " + credentials },
                                   { "type", "invalid_request_error" }, { "code", "invalid_api_key" } } } })
                .dump(),
            401);
    };
    s.route(openAiPath("echo"), echo);
    s.route(anthropicPath("echo"), echo);
}

void LlmClientFixture::init()
{
    std::lock_guard lock(m_mutex);
    m_log.clear();
    m_reads = 0;
}

void LlmClientFixture::cleanup() { m_server->releaseHeld(); }

void LlmClientFixture::cleanupTestCase() { m_server.reset(); }

} // namespace kl::test
