#include "replay_bodies.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace kl::test {

namespace {

using json = nlohmann::ordered_json; // fields in the order the services send them

constexpr std::int64_t kCreated = 1767225600;

// A word character for tokenPieces; bytes of multi-byte UTF-8 count as word characters, so a
// sequence is never cut.
bool isWord(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }
bool isSpace(unsigned char c) { return std::isspace(c) != 0; }

std::string event(const json& data) { return "data: " + data.dump() + "\n\n"; }

std::string namedEvent(const std::string& name, const json& data)
{
    return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

} // namespace

std::vector<std::string> tokenPieces(const std::string& text, int tokens)
{
    // Like Python's re.findall(r"\s+|\w+|[^\w\s]"): runs of space, runs of word characters, single symbols.
    std::vector<std::string> found;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t end = i + 1;
        if (isSpace(c))
            while (end < text.size() && isSpace(static_cast<unsigned char>(text[end])))
                ++end;
        else if (isWord(c))
            while (end < text.size() && isWord(static_cast<unsigned char>(text[end])))
                ++end;
        found.push_back(text.substr(i, end - i));
        i = end;
    }
    std::vector<std::string> pieces;
    const auto step = static_cast<std::size_t>(std::max(tokens, 1));
    for (std::size_t i = 0; i < found.size(); i += step) {
        std::string piece;
        for (std::size_t k = i; k < std::min(found.size(), i + step); ++k)
            piece += found[k];
        pieces.push_back(std::move(piece));
    }
    return pieces;
}

std::vector<std::string> fixedPieces(const std::string& text, std::size_t size)
{
    std::vector<std::string> pieces;
    for (std::size_t i = 0; i < text.size(); i += std::max<std::size_t>(size, 1))
        pieces.push_back(text.substr(i, size));
    return pieces;
}

std::string openAiCompletion(const std::vector<std::string>& texts, const std::string& model, ReplyUsage usage)
{
    json choices = json::array();
    for (std::size_t i = 0; i < texts.size(); ++i)
        choices.push_back({ { "index", i },
            { "message", { { "role", "assistant" }, { "content", texts[i] }, { "refusal", nullptr } } },
            { "logprobs", nullptr }, { "finish_reason", "stop" } });
    const json body { { "id", "chatcmpl-KlReplay0000000000000000000" }, { "object", "chat.completion" },
        { "created", kCreated }, { "model", model }, { "choices", choices },
        { "usage",
            { { "prompt_tokens", usage.promptTokens }, { "completion_tokens", usage.completionTokens },
                { "total_tokens", usage.promptTokens + usage.completionTokens } } },
        { "system_fingerprint", "fp_klreplay" } };
    return body.dump(2) + "\n";
}

std::string openAiStream(
    const std::vector<std::vector<std::string>>& pieces, const std::string& model, std::optional<ReplyUsage> usage)
{
    const json base { { "id", "chatcmpl-KlReplay0000000000000000001" }, { "object", "chat.completion.chunk" },
        { "created", kCreated }, { "model", model }, { "system_fingerprint", "fp_klreplay" } };
    auto chunk = [&](json choices, json chunkUsage = nullptr) {
        json c = base;
        c["choices"] = std::move(choices);
        if (usage)
            c["usage"] = std::move(chunkUsage);
        return event(c);
    };
    auto choice = [](std::size_t index, json delta, json finish = nullptr) {
        return json { { "index", index }, { "delta", std::move(delta) }, { "logprobs", nullptr },
            { "finish_reason", std::move(finish) } };
    };
    std::string out;
    for (std::size_t i = 0; i < pieces.size(); ++i)
        out += chunk(
            json::array({ choice(i, { { "role", "assistant" }, { "content", "" }, { "refusal", nullptr } }) }));
    std::size_t longest = 0;
    for (const auto& p : pieces)
        longest = std::max(longest, p.size());
    // Round robin over the choices, as servers interleave them.
    for (std::size_t k = 0; k < longest; ++k)
        for (std::size_t i = 0; i < pieces.size(); ++i)
            if (k < pieces[i].size())
                out += chunk(json::array({ choice(i, { { "content", pieces[i][k] } }) }));
    for (std::size_t i = 0; i < pieces.size(); ++i)
        out += chunk(json::array({ choice(i, json::object(), "stop") }));
    if (usage)
        out += chunk(json::array(),
            { { "prompt_tokens", usage->promptTokens }, { "completion_tokens", usage->completionTokens },
                { "total_tokens", usage->promptTokens + usage->completionTokens } });
    out += "data: [DONE]\n\n";
    return out;
}

std::string anthropicMessage(const std::string& text, const std::string& model, ReplyUsage usage)
{
    const json body { { "id", "msg_01KlReplay000000000000000" }, { "type", "message" }, { "role", "assistant" },
        { "model", model }, { "content", json::array({ { { "type", "text" }, { "text", text } } }) },
        { "stop_reason", "end_turn" }, { "stop_sequence", nullptr },
        { "usage",
            { { "input_tokens", usage.promptTokens }, { "cache_creation_input_tokens", 0 },
                { "cache_read_input_tokens", 0 }, { "output_tokens", usage.completionTokens },
                { "service_tier", "standard" } } } };
    return body.dump(2) + "\n";
}

std::string anthropicStream(const std::vector<std::string>& pieces, const std::string& model, ReplyUsage usage)
{
    std::string out = namedEvent("message_start",
        { { "type", "message_start" },
            { "message",
                { { "id", "msg_01KlReplay000000000000001" }, { "type", "message" }, { "role", "assistant" },
                    { "model", model }, { "content", json::array() }, { "stop_reason", nullptr },
                    { "stop_sequence", nullptr },
                    { "usage",
                        { { "input_tokens", usage.promptTokens }, { "cache_creation_input_tokens", 0 },
                            { "cache_read_input_tokens", 0 }, { "output_tokens", 1 },
                            { "service_tier", "standard" } } } } } });
    out += namedEvent("content_block_start",
        { { "type", "content_block_start" }, { "index", 0 },
            { "content_block", { { "type", "text" }, { "text", "" } } } });
    out += namedEvent("ping", { { "type", "ping" } });
    for (const auto& piece : pieces)
        out += namedEvent("content_block_delta",
            { { "type", "content_block_delta" }, { "index", 0 },
                { "delta", { { "type", "text_delta" }, { "text", piece } } } });
    out += namedEvent("content_block_stop", { { "type", "content_block_stop" }, { "index", 0 } });
    out += namedEvent("message_delta",
        { { "type", "message_delta" }, { "delta", { { "stop_reason", "end_turn" }, { "stop_sequence", nullptr } } },
            { "usage", { { "output_tokens", usage.completionTokens } } } });
    out += namedEvent("message_stop", { { "type", "message_stop" } });
    return out;
}

std::string openAiError(const std::string& message, const std::string& type, const std::string& code)
{
    const json body { { "error",
        { { "message", message }, { "type", type }, { "param", nullptr },
            { "code", code.empty() ? json(nullptr) : json(code) } } } };
    return body.dump(4) + "\n";
}

std::string anthropicError(const std::string& message, const std::string& type)
{
    return json { { "type", "error" }, { "error", { { "type", type }, { "message", message } } } }.dump() + "\n";
}

} // namespace kl::test
