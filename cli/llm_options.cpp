#include "cli/llm_options.h"

#include "core/llm/api_key.h"
#include "core/model/error.h"

#include <algorithm>

namespace kl::cli {

void addLlmEndpointOptions(CLI::App* cmd, LlmEndpointOptions& o, bool required)
{
    auto* provider = cmd->add_option("--provider", o.provider, "openai (any OpenAI-compatible server) or anthropic")
                         ->check(CLI::IsMember({ "openai", "anthropic" }));
    auto* url = cmd->add_option("--base-url", o.baseUrl, "e.g. https://api.openai.com/v1, http://localhost:8000/v1");
    auto* model = cmd->add_option("--model", o.model, "the model name the server knows");
    if (required) {
        provider->required();
        url->required();
        model->required();
    } else {
        provider->capture_default_str();
    }
    cmd->add_option("--key-env", o.keyEnv, "environment variable holding the API key");
    cmd->add_option("--key-file", o.keyFile, "file holding the API key (mode 0600)");
    cmd->add_option("--header", o.headers, "extra request header \"Name: value\" (repeatable)");
    cmd->add_option("--timeout", o.timeout, "seconds for one whole LLM request")->capture_default_str();
    cmd->add_option("--connect-timeout", o.connectTimeout, "seconds to connect")->capture_default_str();
    cmd->add_option("--attempts", o.attempts, "LLM requests in all, retries included")->capture_default_str();
    cmd->add_option("--anthropic-version", o.anthropicVersion, "anthropic-version header")->capture_default_str();
}

EndpointConfig endpointConfig(const LlmEndpointOptions& o)
{
    if (o.baseUrl.empty())
        throw Error("cli.missing-option", {}, "--base-url", "the LLM endpoint needs --base-url");
    if (o.model.empty())
        throw Error("cli.missing-option", {}, "--model", "the LLM endpoint needs --model");
    EndpointConfig config;
    config.provider = *parseProvider(o.provider);
    config.baseUrl = o.baseUrl;
    config.model = o.model;
    config.apiKey = loadApiKey({ o.keyEnv, o.keyFile });
    config.anthropicVersion = o.anthropicVersion;
    for (const auto& header : o.headers) {
        const auto colon = header.find(':');
        if (colon == std::string::npos || colon == 0)
            throw Error("cli.bad-header", {}, "--header", "expected \"Name: value\", got \"" + header + "\"");
        const auto value = header.find_first_not_of(' ', colon + 1);
        config.extraHeaders.emplace_back(
            header.substr(0, colon), value == std::string::npos ? std::string() : header.substr(value));
    }
    config.timeouts.total = std::chrono::milliseconds(static_cast<long long>(o.timeout * 1000.0));
    config.timeouts.connect = std::chrono::milliseconds(static_cast<long long>(o.connectTimeout * 1000.0));
    config.timeouts.stall = std::min(config.timeouts.total, std::chrono::milliseconds(30000));
    config.retry.maxAttempts = std::max(1, o.attempts);
    return config;
}

} // namespace kl::cli
