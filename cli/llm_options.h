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
    double timeout = 60.0;
    double connectTimeout = 10.0;
    int attempts = 1;
};

// `required`: whether --base-url and --model must be given (llm-check); tune checks them itself,
// since they are needed only with --proposer llm.
void addLlmEndpointOptions(CLI::App* command, LlmEndpointOptions& options, bool required);

// Throws kl::Error: "cli.bad-header", "cli.missing-option", and the key loader's "llm.key-*".
EndpointConfig endpointConfig(const LlmEndpointOptions& options);

} // namespace kl::cli
