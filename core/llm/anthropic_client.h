#pragma once
// Anthropic's messages API: POST {base}/v1/messages with x-api-key and anthropic-version. Streams
// are typed events: message_start, content_block_start/delta/stop, message_delta (stop reason and
// output tokens), message_stop, ping, error.
#include "core/llm/http_chat_client.h"

namespace kl {

class AnthropicChatClient : public HttpChatClient {
public:
    explicit AnthropicChatClient(EndpointConfig config);
    bool supportsChoices() const override { return false; }

protected:
    std::string url() const override;
    std::vector<std::pair<std::string, std::string>> protocolHeaders() const override;
    nlohmann::json requestBody(const ChatRequest& request) const override;
    void decodeEvent(const ServerSentEvent& event, DecodedReply& reply) const override;
    void decodeBody(const std::string& body, DecodedReply& reply) const override;
    std::string errorText(const std::string& body) const override;
};

} // namespace kl
