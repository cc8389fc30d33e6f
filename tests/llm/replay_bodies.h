#pragma once
// Response bodies of both LLM protocols built around reply texts, in the shape the real services
// send them: OpenAI chat.completion / chat.completion.chunk events ending with "data: [DONE]",
// Anthropic message / message_start ... message_stop events. The C++ twin of the builders in
// tests/fixtures/llm/make_fixtures.py, for replies chosen at run time (kl-llm-replay).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl::test {

struct ReplyUsage {
    std::int64_t promptTokens = 0;
    std::int64_t completionTokens = 0;
};

// Token-sized deltas, as servers stream them: `tokens` words, spaces or symbols at a time.
std::vector<std::string> tokenPieces(const std::string& text, int tokens = 3);
// Pieces of `size` bytes (the last one shorter); may cut a UTF-8 sequence, so only for ASCII.
std::vector<std::string> fixedPieces(const std::string& text, std::size_t size);

// One completion with a choice per text (index in order), finish reason "stop".
std::string openAiCompletion(const std::vector<std::string>& texts, const std::string& model, ReplyUsage usage);
// One stream with a choice per entry of `pieces`, their deltas interleaved; a usage chunk before
// [DONE] when `usage` is given (the request's stream_options.include_usage).
std::string openAiStream(
    const std::vector<std::vector<std::string>>& pieces, const std::string& model, std::optional<ReplyUsage> usage);

std::string anthropicMessage(const std::string& text, const std::string& model, ReplyUsage usage);
std::string anthropicStream(const std::vector<std::string>& pieces, const std::string& model, ReplyUsage usage);

// Error bodies of each protocol.
std::string openAiError(const std::string& message, const std::string& type, const std::string& code = {});
std::string anthropicError(const std::string& message, const std::string& type);

} // namespace kl::test
