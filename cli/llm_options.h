#pragma once
// The options that name an LLM endpoint (provider, URL, model, key, headers, timeouts), shared by
// `llm-check` and `tune --proposer llm`, and the EndpointConfig they make.
#include "core/llm/chat_client.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kl::cli {

struct LlmEndpointOptions {
    std::string provider = "openai";
    std::string baseUrl;
    std::string model;
    std::string keyEnv;
    std::string keyFile;
    std::string anthropicVersion = "2023-06-01";
    std::vector<std::string> headers;
    // Numbers as typed, so that "nan", "-1" or "1e9" get our own categorised message.
    std::string timeout = "60";
    std::string connectTimeout = "10";
    std::string attempts = "1";
    std::string maxRetryAfter = "60";
};

// `required`: whether --base-url and --model must be given (llm-check); tune checks them itself,
// since they are needed only with --proposer llm.
void addLlmEndpointOptions(CLI::App* command, LlmEndpointOptions& options, bool required);

// Throws kl::Error: "cli.missing-option", "cli.bad-url" (not http:// or https://, or no host),
// "cli.bad-header" (no "Name: value", or a control character that would add headers),
// "cli.bad-number" (a timeout, attempt count or Retry-After cap out of range or not a number),
// "cli.bad-option" (a control character in --anthropic-version), and the key loader's "llm.key-*".
EndpointConfig endpointConfig(const LlmEndpointOptions& options);

} // namespace kl::cli
