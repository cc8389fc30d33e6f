#pragma once
// OpenAI-compatible chat completions: POST {base}/chat/completions with a bearer key. Streams are
// "data: {chunk}" events ending with "data: [DONE]"; usage arrives in a last chunk when
// stream_options.include_usage is set.
#include "core/llm/http_chat_client.h"

namespace kl {

class OpenAiChatClient : public HttpChatClient {
public:
    explicit OpenAiChatClient(EndpointConfig config);
    bool supportsChoices() const override { return true; }

protected:
    std::string url() const override;
    std::vector<std::pair<std::string, std::string>> protocolHeaders() const override;
    nlohmann::json requestBody(const ChatRequest& request) const override;
    void decodeEvent(const ServerSentEvent& event, DecodedReply& reply) const override;
    void decodeBody(const std::string& body, DecodedReply& reply) const override;
    std::string errorText(const std::string& body) const override;
};

} // namespace kl
