#include "cli/llm_options.h"

#include "core/llm/api_key.h"
#include "core/model/error.h"
#include "core/session/llm_endpoint.h"

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
    cmd->add_option("--timeout", o.timeout, "seconds for one whole LLM request (at most a day)")->capture_default_str();
    cmd->add_option("--connect-timeout", o.connectTimeout, "seconds to connect (at most 600)")->capture_default_str();
    cmd->add_option("--attempts", o.attempts, "LLM requests in all, retries included (1 to 20)")->capture_default_str();
    cmd->add_option("--max-retry-after", o.maxRetryAfter,
           "the longest wait, in seconds, that a server's Retry-After may ask for before a retry (at most 600)")
        ->capture_default_str();
    cmd->add_option("--anthropic-version", o.anthropicVersion, "anthropic-version header")->capture_default_str();
}

EndpointConfig endpointConfig(const LlmEndpointOptions& o)
{
    session::EndpointText text;
    text.provider = o.provider;
    text.baseUrl = o.baseUrl;
    text.model = o.model;
    text.anthropicVersion = o.anthropicVersion;
    text.headers = o.headers;
    text.timeout = o.timeout;
    text.connectTimeout = o.connectTimeout;
    text.attempts = o.attempts;
    text.maxRetryAfter = o.maxRetryAfter;
    auto config = session::endpointConfig(text, {}); // the shared rule (core/session/llm_endpoint.h)
    config.apiKey = loadApiKey({ o.keyEnv, o.keyFile }); // checked last, as before
    return config;
}

} // namespace kl::cli
