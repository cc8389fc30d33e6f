// kernelloop-cli llm-check: one tiny request to an LLM endpoint, to see that the URL, the model and
// the key work before a session depends on them. Each kind of failure has its own message and
// exit code, so a script (or a person) knows what to fix.
#include "cli/command.h"
#include "cli/llm_options.h"

#include "core/llm/chat_client.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

namespace kl::cli {

namespace {

// What --json prints: every field of the exchange, the request as the body that was sent.
nlohmann::json exchangeJson(const Exchange& e)
{
    nlohmann::json choices = nlohmann::json::array();
    for (const auto& c : e.choices)
        choices.push_back({ { "text", c.text }, { "finish_reason", c.finishReason } });
    return {
        { "provider", e.provider },
        { "url", e.url },
        { "model", e.model },
        { "served_model", e.servedModel },
        { "request", e.requestBody.empty() ? nlohmann::json() : nlohmann::json::parse(e.requestBody, nullptr, false) },
        { "request_headers", e.requestHeaders },
        { "streamed", e.streamed },
        { "response", e.response },
        { "choices", choices },
        { "usage",
            { { "prompt_tokens", e.usage.promptTokens }, { "completion_tokens", e.usage.completionTokens },
                { "reported", e.usage.reported } } },
        { "category", exchangeCategoryName(e.category) },
        { "message", e.message },
        { "http_status", e.httpStatus },
        { "attempts", e.attempts },
        { "latency_ms", e.latencyMs },
        { "first_token_ms", e.firstTokenMs },
        { "retry_wait_ms", e.retryWaitMs },
        { "started_at", e.startedAt },
    };
}

// Exit codes of llm-check beyond the shared ones (command.h).
enum LlmCheckExit : int {
    DnsFailed = 10,
    ConnectionRefused = 11,
    TlsFailed = 12,
    TimedOut = 13,
    Unauthorised = 14,
    Forbidden = 15,
    NotFound = 16,
    RateLimited = 17,
    ServerFailed = 18,
    BadReply = 19,
};

std::atomic<bool> g_interrupted { false };

extern "C" void onInterrupt(int) { g_interrupted = true; }

struct Diagnosis {
    int exitCode;
    std::string text;
};

Diagnosis diagnose(const Exchange& e, const EndpointConfig& config)
{
    const std::string detail = e.message.empty() ? "" : " [" + e.message + "]";
    switch (e.category) {
    case ExchangeCategory::Ok:
        return { Ok, "" };
    case ExchangeCategory::Dns:
        return { DnsFailed,
            "cannot resolve the host in " + e.url
                + ": check the host name in --base-url, or your DNS and proxy settings" + detail };
    case ExchangeCategory::ConnectionRefused:
        return { ConnectionRefused,
            "connection refused: nothing listens at " + e.url
                + ". Is the server running, and are the host and port right?" + detail };
    case ExchangeCategory::Tls:
        return { TlsFailed,
            "the TLS handshake with " + e.url
                + " failed: does the server speak https on that port (or should the URL say http://), and is "
                  "its certificate trusted?"
                + detail };
    case ExchangeCategory::Timeout:
        return { TimedOut,
            "no complete answer from " + e.url + " within the timeout (--timeout "
                + std::to_string(config.timeouts.total.count() / 1000) + " s)" + detail };
    case ExchangeCategory::Stall:
        return { TimedOut,
            "the stream from " + e.url + " stalled: no data for " + std::to_string(config.timeouts.stall.count() / 1000)
                + " s" + detail };
    case ExchangeCategory::Http401:
        return { Unauthorised, "the server rejected the API key (HTTP 401): check --key-env / --key-file" + detail };
    case ExchangeCategory::Http403:
        return { Forbidden,
            "the key is not allowed to use model \"" + config.model + "\" or this endpoint (HTTP 403)" + detail };
    case ExchangeCategory::Http404:
        return { NotFound,
            "not found (HTTP 404): the server has no model \"" + config.model + "\", or --base-url is wrong ("
                + (config.provider == Provider::OpenAi ? "OpenAI-compatible servers usually end in /v1"
                                                       : "Anthropic's is https://api.anthropic.com")
                + ")" + detail };
    case ExchangeCategory::Http429:
        return { RateLimited,
            "rate-limited (HTTP 429): the endpoint refuses more requests for now; wait, or raise "
            "the limit"
                + detail };
    case ExchangeCategory::Http5xx:
        return { ServerFailed,
            "the server failed (HTTP " + std::to_string(e.httpStatus) + "): try again later" + detail };
    case ExchangeCategory::Cancelled:
        return { Interrupted, "interrupted" };
    case ExchangeCategory::BadUrl:
        return { BadInput, "the base URL cannot be used: " + e.url + detail };
    case ExchangeCategory::Http4xx:
        return { BadReply,
            "the server refused the request (HTTP " + std::to_string(e.httpStatus) + "): is it really an "
                + std::string(providerName(config.provider)) + " endpoint?" + detail };
    case ExchangeCategory::EmptyReply:
        return { BadReply,
            "the server answered without any text (content null or empty): is the model a chat model, and does "
            "it spend its tokens elsewhere?"
                + detail };
    case ExchangeCategory::BadJson:
    case ExchangeCategory::Truncated:
    case ExchangeCategory::ConnectionReset:
    case ExchangeCategory::Oversized:
    case ExchangeCategory::BudgetExhausted:
        break;
    }
    return { BadReply,
        "the reply is not a valid " + std::string(providerName(config.provider)) + " response ("
            + std::string(exchangeCategoryName(e.category)) + ")" + detail };
}

std::string quoted(const std::string& text)
{
    std::string out = "\"";
    for (char c : text.substr(0, 200))
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    return out + (text.size() > 200 ? "...\"" : "\"");
}

} // namespace

const CommandRegistration llmCheck([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("llm-check", "Send one tiny request to an LLM endpoint and report what happened");
    cmd->footer("Exit codes: 0 ok, 2 bad options or key, 10 DNS, 11 connection refused, 12 TLS, 13 timeout or "
                "stall, 14 HTTP 401, 15 HTTP 403, 16 HTTP 404, 17 HTTP 429, 18 HTTP 5xx, 19 bad reply, "
                "130 interrupted.");
    struct Options {
        LlmEndpointOptions endpoint;
        bool stream = false, json = false;
    };
    auto o = std::make_shared<Options>();
    addLlmEndpointOptions(cmd, o->endpoint, true);
    cmd->add_flag("--stream", o->stream, "ask for a streamed reply (server-sent events)");
    cmd->add_flag("--json", o->json, "print the exchange as JSON (the key is never in it)");
    return [o]() {
        const EndpointConfig config = endpointConfig(o->endpoint);
        auto client = makeChatClient(config);

        ChatRequest request;
        request.system = "You are checking that a connection works.";
        request.messages.push_back({ "user", "Reply with the single word: ok" });
        request.maxTokens = 16;
        request.temperature = 0.0;
        request.stream = o->stream;

        g_interrupted = false;
        const auto previous = std::signal(SIGINT, onInterrupt);
        SendControl control;
        control.cancel = &g_interrupted;
        const Exchange e = client->send(request, control);
        std::signal(SIGINT, previous);

        const auto diagnosis = diagnose(e, client->endpoint());
        if (o->json) {
            auto json = exchangeJson(e);
            json["exit_code"] = diagnosis.exitCode;
            // Exchanges hold valid UTF-8; replacing is the last guard should a field slip through.
            std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        }
        if (!e.ok()) {
            std::cerr << "llm-check: " << exchangeCategoryName(e.category) << ": " << diagnosis.text << "\n";
            return diagnosis.exitCode;
        }
        if (!o->json) {
            std::printf("ok: %s at %s\n", std::string(providerName(config.provider)).c_str(), e.url.c_str());
            std::printf("  model     %s", e.servedModel.empty() ? e.model.c_str() : e.servedModel.c_str());
            if (!e.servedModel.empty() && e.servedModel != e.model)
                std::printf(" (asked for %s)", e.model.c_str());
            std::printf("\n  latency   %.0f ms", e.latencyMs);
            if (e.firstTokenMs >= 0 && e.streamed)
                std::printf(" (first text after %.0f ms)", e.firstTokenMs);
            std::printf(", %d attempt%s\n", e.attempts, e.attempts == 1 ? "" : "s");
            if (e.usage.reported)
                std::printf("  usage     %lld prompt + %lld completion tokens\n",
                    static_cast<long long>(e.usage.promptTokens), static_cast<long long>(e.usage.completionTokens));
            else
                std::printf("  usage     not reported by the server\n");
            std::printf("  reply     %s%s\n", quoted(e.text()).c_str(),
                e.choices.empty() || e.choices.front().finishReason.empty()
                    ? ""
                    : (" (" + e.choices.front().finishReason + ")").c_str());
        }
        return static_cast<int>(Ok);
    };
});

} // namespace kl::cli
