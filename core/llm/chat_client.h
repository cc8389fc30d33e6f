#pragma once
// Talking to a model: a ChatClient sends one request (with retries) and returns the Exchange.
// Two protocols cover the endpoints engineers have: OpenAI-compatible chat completions (OpenAI,
// vLLM, llama.cpp server, Ollama, SGLang, LM Studio) and Anthropic's messages API.
#include "core/exchange/exchange.h"
#include "core/llm/http_transport.h"
#include "core/llm/retry_policy.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kl {

class TokenBudget;

enum class Provider { OpenAi, Anthropic };
std::string_view providerName(Provider provider); // "openai" | "anthropic"
std::optional<Provider> parseProvider(std::string_view name);

struct EndpointConfig {
    Provider provider = Provider::OpenAi;
    // OpenAI-compatible: ".../v1" (chat/completions is appended unless already there).
    // Anthropic: "https://api.anthropic.com" (/v1/messages is appended as needed).
    std::string baseUrl;
    std::string model;
    std::string apiKey; // empty for servers that need none; never logged or stored
    std::vector<std::pair<std::string, std::string>> extraHeaders; // secret-looking values are redacted too
    std::string anthropicVersion = "2023-06-01";
    // OpenAI streams report usage only when asked (stream_options.include_usage); a few older
    // compatible servers reject the field, hence the switch.
    bool streamUsage = true;
    HttpTimeouts timeouts;
    RetryPolicy retry;
    std::size_t maxResponseBytes = 64u << 20;
    std::shared_ptr<TokenBudget> budget; // optional, may be shared between clients
    // One line per event worth knowing (request sent, status, retry and why, failure); redacted.
    // Called on the sending thread, so from several threads when sends run in parallel.
    std::function<void(const std::string&)> log;
    bool traceHttp = false; // also log libcurl's trace (headers, sizes), redacted
};

struct ChatMessage {
    std::string role; // "user" | "assistant"
    std::string content;
};

struct ChatRequest {
    std::string system;
    std::vector<ChatMessage> messages;
    std::optional<double> temperature;
    int maxTokens = 4096;
    int n = 1; // alternatives in one request (OpenAI-compatible only; see ChatClient::supportsChoices)
    bool stream = true;
};

struct SendControl {
    // Streamed text as it arrives: the choice's index and the new piece. Called on the sending thread.
    std::function<void(int choice, std::string_view text)> onText;
    const std::atomic<bool>* cancel = nullptr; // set it to stop the request, mid-stream included
};

class ChatClient {
public:
    virtual ~ChatClient() = default;
    // Blocks until the exchange ends; never throws for network or server trouble (see
    // Exchange::category). May be called from several threads at once.
    virtual Exchange send(const ChatRequest& request, const SendControl& control = {}) = 0;
    virtual const EndpointConfig& endpoint() const = 0;
    // Whether one request can return n > 1 choices. Where not, ask k times (in parallel).
    virtual bool supportsChoices() const = 0;
};

std::unique_ptr<ChatClient> makeChatClient(EndpointConfig config);

} // namespace kl
