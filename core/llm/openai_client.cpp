#include "core/llm/openai_client.h"

namespace kl {

namespace {

using nlohmann::json;

// Content is a string, null, or (newer servers) a list of parts with text.
std::string contentText(const json& content)
{
    if (content.is_string())
        return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const auto& part : content)
            if (part.is_object() && part.value("type", "") == "text")
                text += part.value("text", "");
    return text;
}

std::string finishReason(const json& choice)
{
    const auto it = choice.find("finish_reason");
    return it != choice.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void readUsage(const json& object, DecodedReply& reply)
{
    const auto it = object.find("usage");
    if (it == object.end() || !it->is_object())
        return;
    reply.usage.promptTokens = it->value("prompt_tokens", std::int64_t { 0 });
    reply.usage.completionTokens = it->value("completion_tokens", std::int64_t { 0 });
    reply.usage.reported = true;
}

// {"error": {"message": ..., "type": ..., "code": ...}} in a body or a stream event.
bool readError(const json& object, DecodedReply& reply)
{
    const auto it = object.find("error");
    if (it == object.end() || it->is_null())
        return false;
    std::string type, message;
    if (it->is_object()) {
        message = it->value("message", "");
        if (const auto code = it->find("code"); code != it->end() && code->is_string())
            type = code->get<std::string>();
        if (type.empty())
            type = it->value("type", "");
    } else if (it->is_string()) {
        message = it->get<std::string>();
    }
    reply.fail(categoryOfErrorType(type),
        "the server reported an error" + (type.empty() ? std::string() : " (" + type + ")")
            + (message.empty() ? "" : ": " + message));
    return true;
}

} // namespace

OpenAiChatClient::OpenAiChatClient(EndpointConfig config)
    : HttpChatClient(std::move(config))
{
}

std::string OpenAiChatClient::url() const
{
    std::string base = endpoint().baseUrl;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    const std::string suffix = "/chat/completions";
    if (base.size() >= suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
        return base;
    return base + suffix;
}

std::vector<std::pair<std::string, std::string>> OpenAiChatClient::protocolHeaders() const
{
    std::vector<std::pair<std::string, std::string>> headers { { "Content-Type", "application/json" } };
    if (!endpoint().apiKey.empty())
        headers.emplace_back("Authorization", "Bearer " + endpoint().apiKey);
    for (const auto& header : endpoint().extraHeaders)
        headers.push_back(header);
    return headers;
}

json OpenAiChatClient::requestBody(const ChatRequest& request) const
{
    json messages = json::array();
    if (!request.system.empty())
        messages.push_back({ { "role", "system" }, { "content", request.system } });
    for (const auto& m : request.messages)
        messages.push_back({ { "role", m.role }, { "content", m.content } });
    json body { { "model", endpoint().model }, { "messages", messages }, { "max_tokens", request.maxTokens } };
    if (request.temperature)
        body["temperature"] = *request.temperature;
    if (request.n > 1)
        body["n"] = request.n;
    body["stream"] = request.stream;
    if (request.stream && endpoint().streamUsage)
        body["stream_options"] = { { "include_usage", true } };
    return body;
}

void OpenAiChatClient::decodeEvent(const ServerSentEvent& event, DecodedReply& reply) const
{
    if (event.data == "[DONE]") {
        reply.finished = true;
        return;
    }
    const json chunk = json::parse(event.data);
    if (readError(chunk, reply))
        return;
    if (const auto model = chunk.find("model"); model != chunk.end() && model->is_string())
        reply.servedModel = model->get<std::string>();
    readUsage(chunk, reply);
    for (const auto& choice : chunk.value("choices", json::array())) {
        const int index = choice.value("index", 0);
        reply.choice(index);
        if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
            if (const auto content = delta->find("content"); content != delta->end())
                reply.appendText(index, contentText(*content));
            if (const auto refusal = delta->find("refusal"); refusal != delta->end() && refusal->is_string()) {
                reply.appendText(index, refusal->get<std::string>());
                reply.choice(index).finishReason = "refusal";
            }
        }
        if (const auto reason = finishReason(choice); !reason.empty() && reply.choice(index).finishReason != "refusal")
            reply.choice(index).finishReason = reason;
    }
    // Servers that omit [DONE] still end every choice with a finish reason.
    bool allFinished = !reply.choices.empty();
    for (const auto& c : reply.choices)
        allFinished = allFinished && !c.finishReason.empty();
    if (allFinished)
        reply.finished = true;
}

void OpenAiChatClient::decodeBody(const std::string& body, DecodedReply& reply) const
{
    const json object = json::parse(body);
    if (readError(object, reply))
        return;
    reply.servedModel = object.value("model", "");
    readUsage(object, reply);
    const auto& choices = object.at("choices");
    if (!choices.is_array() || choices.empty())
        throw json::other_error::create(501, "the reply has no choices", &object);
    for (const auto& choice : choices) {
        const int index = choice.value("index", 0);
        const auto& message = choice.at("message");
        auto& c = reply.choice(index);
        c.text = contentText(message.value("content", json()));
        c.finishReason = finishReason(choice);
        if (const auto refusal = message.find("refusal"); refusal != message.end() && refusal->is_string()) {
            c.text += refusal->get<std::string>();
            c.finishReason = "refusal";
        }
    }
    reply.finished = true;
}

std::string OpenAiChatClient::errorText(const std::string& body) const
{
    const json object = json::parse(body, nullptr, false);
    if (object.is_discarded() || !object.is_object())
        return body.substr(0, 300);
    DecodedReply scratch;
    return readError(object, scratch) ? scratch.errorMessage : body.substr(0, 300);
}

} // namespace kl
