#pragma once
// A model at the process boundary for the loop suites: a replay server over loopback answers each
// request with the next scripted reply of the role its system prompt names (planner, coder,
// debugger, single, first_kernel), streamed or whole as asked, in either protocol; and a chat client
// of the real HTTP code pointed at it.
#include "core/llm/chat_client.h"
#include "core/llm/token_budget.h"

#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kl::test {

inline const std::string kPlantedKey = "sk-kl-planted-0123456789abcdefABCDEF";

inline std::string systemPrompt(const nlohmann::json& body)
{
    if (body.contains("system") && body["system"].is_string())
        return body["system"];
    for (const auto& m : body.value("messages", nlohmann::json::array()))
        if (m.value("role", "") == "system")
            return m.value("content", "");
    return {};
}

inline std::string roleOf(const SeenRequest& r)
{
    const auto system = systemPrompt(nlohmann::json::parse(r.body));
    if (system.find("Your role is the planner") != std::string::npos)
        return "planner";
    if (system.find("fixing a kernel that failed") != std::string::npos)
        return "debugger";
    if (system.find("you write the next candidate") != std::string::npos)
        return "coder";
    if (system.find("Propose the next candidate") != std::string::npos)
        return "single";
    if (system.find("no kernel has been written for it yet") != std::string::npos)
        return "first_kernel";
    return "unknown";
}

// Serves the next reply of each role, streamed or whole as asked, in either protocol.
class ScriptedModel {
public:
    ScriptedModel(ReplayServer& server, std::map<std::string, std::vector<std::string>> script)
        : m_script(std::move(script))
    {
        server.route("/v1/chat/completions", [this](const SeenRequest& r, int) { return answer(r, false); });
        server.route("/v1/messages", [this](const SeenRequest& r, int) { return answer(r, true); });
    }
    std::vector<std::string> roles() const
    {
        std::lock_guard lock(m_mutex);
        return m_roles;
    }

private:
    Reply answer(const SeenRequest& r, bool anthropic)
    {
        const auto body = nlohmann::json::parse(r.body);
        const auto role = roleOf(r);
        const int n = body.value("n", 1);
        std::vector<std::string> texts;
        {
            std::lock_guard lock(m_mutex);
            m_roles.push_back(role);
            auto& queue = m_script[role];
            for (int i = 0; i < n; ++i) {
                texts.push_back(queue.empty() ? "I have no further ideas." : queue.front());
                if (!queue.empty())
                    queue.erase(queue.begin());
            }
        }
        const kl::test::ReplyUsage usage { std::int64_t(r.body.size() / 4), 700 };
        Reply out;
        if (body.value("stream", false)) {
            std::vector<std::vector<std::string>> pieces;
            for (const auto& t : texts)
                pieces.push_back(kl::test::tokenPieces(t));
            out.contentType = "text/event-stream";
            out.body = anthropic ? kl::test::anthropicStream(pieces.front(), "replay", usage)
                                 : kl::test::openAiStream(pieces, "replay", usage);
            out.chunked = true;
            out.chunkSize = 512;
        } else {
            out.body = anthropic ? kl::test::anthropicMessage(texts.front(), "replay", usage)
                                 : kl::test::openAiCompletion(texts, "replay", usage);
        }
        return out;
    }

    mutable std::mutex m_mutex;
    std::map<std::string, std::vector<std::string>> m_script;
    std::vector<std::string> m_roles;
};

inline std::shared_ptr<kl::ChatClient> client(
    const ReplayServer& server, kl::Provider provider, std::shared_ptr<kl::TokenBudget> budget = {})
{
    kl::EndpointConfig c;
    c.provider = provider;
    c.baseUrl = provider == kl::Provider::OpenAi ? server.url("/v1") : server.url();
    c.model = "replay";
    c.apiKey = kPlantedKey;
    c.timeouts.total = std::chrono::seconds(20);
    c.retry.maxAttempts = 1;
    c.budget = std::move(budget);
    return kl::makeChatClient(c);
}

} // namespace kl::test
