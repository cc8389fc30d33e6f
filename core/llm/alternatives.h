#pragma once
// Test-time scaling: k candidates for one prompt. Where the API can return several choices in one
// request (OpenAI-compatible `n`), that is one exchange; otherwise (Anthropic) k requests run in
// parallel, one exchange each. Either way the caller gets every choice and every exchange to store.
#include "core/llm/chat_client.h"

#include <vector>

namespace kl {

struct Alternatives {
    std::vector<Exchange> exchanges; // one, or k
    // Every choice that came back, in order: (exchange index, choice index within it).
    std::vector<std::pair<std::size_t, std::size_t>> choices;
};

// `control.onText` receives the alternative's index (0..k-1) as its choice, and is called from
// k threads at once when the requests run in parallel.
Alternatives sendAlternatives(ChatClient& client, ChatRequest request, int k, const SendControl& control = {});

} // namespace kl
