#include "core/llm/anthropic_client.h"

namespace kl {

namespace {

using nlohmann::json;

// Anthropic's stop reasons in the words both protocols share.
std::string normalisedStop(const std::string& reason)
{
    if (reason == "end_turn" || reason == "stop_sequence")
        return "stop";
    if (reason == "max_tokens")
        return "length";
    if (reason == "tool_use")
        return "tool_calls";
    return reason; // "refusal", "pause_turn", ...
}

// Input tokens include what the prompt cache served: they were all part of the prompt.
void readUsage(const json& usage, DecodedReply& reply)
{
    if (!usage.is_object())
        return;
    const auto count = [&](const char* name) {
        const auto it = usage.find(name);
        return it != usage.end() && it->is_number_integer() ? it->get<std::int64_t>() : std::int64_t { -1 };
    };
    if (const auto input = count("input_tokens"); input >= 0) {
        reply.usage.promptTokens = input + std::max<std::int64_t>(0, count("cache_creation_input_tokens"))
            + std::max<std::int64_t>(0, count("cache_read_input_tokens"));
        reply.usage.reported = true;
    }
    if (const auto output = count("output_tokens"); output >= 0) {
        reply.usage.completionTokens = output;
        reply.usage.reported = true;
    }
}

bool readError(const json& object, DecodedReply& reply)
{
    if (object.value("type", "") != "error")
        return false;
    const auto error = object.value("error", json::object());
    const std::string type = error.value("type", "");
    const std::string message = error.value("message", "");
    reply.fail(categoryOfErrorType(type),
        "the server reported an error" + (type.empty() ? std::string() : " (" + type + ")")
            + (message.empty() ? "" : ": " + message));
    return true;
}

} // namespace

AnthropicChatClient::AnthropicChatClient(EndpointConfig config)
    : HttpChatClient(std::move(config))
{
}

std::string AnthropicChatClient::url() const
{
    std::string base = endpoint().baseUrl;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    const auto endsWith = [&](std::string_view suffix) {
        return base.size() >= suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (endsWith("/v1/messages"))
        return base;
    if (endsWith("/v1"))
        return base + "/messages";
    return base + "/v1/messages";
}

std::vector<std::pair<std::string, std::string>> AnthropicChatClient::protocolHeaders() const
{
    std::vector<std::pair<std::string, std::string>> headers {
        { "Content-Type", "application/json" },
        { "anthropic-version", endpoint().anthropicVersion },
    };
    if (!endpoint().apiKey.empty())
        headers.emplace_back("x-api-key", endpoint().apiKey);
    for (const auto& header : endpoint().extraHeaders)
        headers.push_back(header);
    return headers;
}

json AnthropicChatClient::requestBody(const ChatRequest& request) const
{
    json messages = json::array();
    for (const auto& m : request.messages)
        messages.push_back({ { "role", m.role }, { "content", m.content } });
    json body { { "model", endpoint().model }, { "max_tokens", request.maxTokens }, { "messages", messages } };
    if (!request.system.empty())
        body["system"] = request.system;
    if (request.temperature)
        body["temperature"] = *request.temperature;
    if (request.stream)
        body["stream"] = true;
    return body;
}

void AnthropicChatClient::decodeEvent(const ServerSentEvent& event, DecodedReply& reply) const
{
    const json data = json::parse(event.data);
    if (readError(data, reply))
        return;
    const std::string type = data.value("type", event.type);
    if (type == "message_start") {
        const auto& message = data.at("message");
        reply.servedModel = message.value("model", "");
        readUsage(message.value("usage", json::object()), reply);
        reply.choice(0);
    } else if (type == "content_block_start") {
        const auto& block = data.at("content_block");
        if (block.value("type", "") == "text")
            reply.appendText(0, block.value("text", ""));
    } else if (type == "content_block_delta") {
        const auto& delta = data.at("delta");
        if (delta.value("type", "") == "text_delta")
            reply.appendText(0, delta.at("text").get<std::string>());
        // thinking_delta, signature_delta, input_json_delta: not part of the reply text
    } else if (type == "message_delta") {
        if (const auto delta = data.find("delta"); delta != data.end() && delta->is_object())
            if (const auto stop = delta->find("stop_reason"); stop != delta->end() && stop->is_string())
                reply.choice(0).finishReason = normalisedStop(stop->get<std::string>());
        if (const auto usage = data.find("usage"); usage != data.end())
            readUsage(*usage, reply);
    } else if (type == "message_stop") {
        reply.finished = true;
    }
    // ping and content_block_stop carry nothing we keep.
}

void AnthropicChatClient::decodeBody(const std::string& body, DecodedReply& reply) const
{
    const json object = json::parse(body);
    if (readError(object, reply))
        return;
    reply.servedModel = object.value("model", "");
    readUsage(object.value("usage", json::object()), reply);
    auto& choice = reply.choice(0);
    for (const auto& block : object.at("content"))
        if (block.value("type", "") == "text")
            choice.text += block.at("text").get<std::string>();
    const auto stop = object.find("stop_reason");
    choice.finishReason = stop != object.end() && stop->is_string() ? normalisedStop(stop->get<std::string>()) : "";
    reply.finished = true;
}

std::string AnthropicChatClient::errorText(const std::string& body) const
{
    const json object = json::parse(body, nullptr, false);
    if (object.is_discarded() || !object.is_object())
        return body.substr(0, 300);
    DecodedReply scratch;
    return readError(object, scratch) ? scratch.errorMessage : body.substr(0, 300);
}

} // namespace kl
