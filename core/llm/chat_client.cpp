#include "core/llm/chat_client.h"

#include "core/llm/anthropic_client.h"
#include "core/llm/openai_client.h"

namespace kl {

std::string_view providerName(Provider provider) { return provider == Provider::Anthropic ? "anthropic" : "openai"; }

std::optional<Provider> parseProvider(std::string_view name)
{
    if (name == "openai")
        return Provider::OpenAi;
    if (name == "anthropic")
        return Provider::Anthropic;
    return std::nullopt;
}

std::unique_ptr<ChatClient> makeChatClient(EndpointConfig config)
{
    if (config.provider == Provider::Anthropic)
        return std::make_unique<AnthropicChatClient>(std::move(config));
    return std::make_unique<OpenAiChatClient>(std::move(config));
}

} // namespace kl
