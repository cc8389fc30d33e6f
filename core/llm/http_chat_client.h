#pragma once
// What both protocols share: the retry loop, the budget, streaming through the SSE parser,
// categorising failures, redacting secrets and filling the Exchange. A protocol supplies the URL,
// its headers, the request body and how to decode replies.
#include "core/llm/chat_client.h"
#include "core/llm/redaction.h"
#include "core/llm/sse_parser.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <random>

namespace kl {

// A reply as decoded so far: filled by the protocol from stream events or from the whole body.
struct DecodedReply {
    std::vector<ChatChoice> choices;
    Usage usage;
    std::string servedModel;
    bool finished = false; // the protocol's end-of-reply marker was seen
    std::optional<ExchangeCategory> error; // an error the server reported in a 2xx stream
    std::string errorMessage;
    std::function<void(int, std::string_view)> onText;

    ChatChoice& choice(int index);
    void appendText(int index, std::string_view text); // grows the choice and reports the piece
    void fail(ExchangeCategory category, std::string message);
};

// The category of an error kind named in an error body or stream event ("rate_limit_error",
// "overloaded_error", "model_not_found", ...).
ExchangeCategory categoryOfErrorType(std::string_view type);

class HttpChatClient : public ChatClient {
public:
    explicit HttpChatClient(EndpointConfig config);
    Exchange send(const ChatRequest& request, const SendControl& control) override;
    const EndpointConfig& endpoint() const override { return m_config; }

protected:
    virtual std::string url() const = 0;
    virtual std::vector<std::pair<std::string, std::string>> protocolHeaders() const = 0; // credentials included
    virtual nlohmann::json requestBody(const ChatRequest& request) const = 0;
    // Both may throw nlohmann::json::exception for malformed JSON (categorised bad-json).
    virtual void decodeEvent(const ServerSentEvent& event, DecodedReply& reply) const = 0;
    virtual void decodeBody(const std::string& body, DecodedReply& reply) const = 0;
    // The human-readable part of an error body ("model not found"), or "" if it has none.
    virtual std::string errorText(const std::string& body) const = 0;

private:
    struct Attempt;
    void runAttempt(const ChatRequest& request, const SendControl& control, Exchange& exchange, Attempt& attempt);
    void log(const std::string& line) const;

    EndpointConfig m_config;
    SecretRedactor m_redactor;
    std::mutex m_randomMutex;
    std::mt19937_64 m_random;
};

} // namespace kl
