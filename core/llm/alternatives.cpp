#include "core/llm/alternatives.h"

#include <algorithm>
#include <thread>

namespace kl {

Alternatives sendAlternatives(ChatClient& client, ChatRequest request, int k, const SendControl& control)
{
    k = std::max(1, k);
    Alternatives out;
    if (k == 1 || client.supportsChoices()) {
        request.n = k;
        out.exchanges.push_back(client.send(request, control));
    } else {
        request.n = 1;
        out.exchanges.resize(static_cast<std::size_t>(k));
        std::vector<std::thread> threads;
        for (int i = 0; i < k; ++i)
            threads.emplace_back([&, i] {
                SendControl own;
                own.cancel = control.cancel;
                if (control.onText)
                    own.onText = [&, i](int, std::string_view text) { control.onText(i, text); };
                out.exchanges[static_cast<std::size_t>(i)] = client.send(request, own);
            });
        for (auto& t : threads)
            t.join();
    }
    for (std::size_t e = 0; e < out.exchanges.size(); ++e)
        for (std::size_t c = 0; c < out.exchanges[e].choices.size(); ++c)
            out.choices.emplace_back(e, c);
    return out;
}

} // namespace kl
