#pragma once
// The one rule for an LLM endpoint as the engineer typed it (the CLI's flags, the GUI's run dialog):
// provider, base URL, model, headers, timeouts and attempts checked, then the EndpointConfig the
// chat clients take. The error categories keep the names the CLI has always printed (cli.*, see
// docs/llm.md); the option names in the messages are the CLI's flags, which the run dialog mirrors.
#include "core/llm/chat_client.h"
#include "core/session/session_recipe.h"

#include <string>
#include <vector>

namespace kl::session {

struct EndpointText {
    std::string provider = "openai";
    std::string baseUrl;
    std::string model;
    std::string anthropicVersion = "2023-06-01";
    std::vector<std::string> headers; // "Name: value"
    // Numbers as typed, so that "nan", "-1" or "1e9" get our own categorised message.
    std::string timeout = "60";
    std::string connectTimeout = "10";
    std::string attempts = "1";
    std::string maxRetryAfter = "60";
};

// The recipe's LLM settings as endpoint text (no extra headers, the default Retry-After cap).
EndpointText endpointText(const LlmSettings& llm);

// Throws kl::Error: "cli.missing-option" (no base URL or model), "cli.bad-url" (not http:// or
// https://, or no host), "cli.bad-header" (no "Name: value", or a control character that would add
// headers), "cli.bad-number" (a timeout, attempt count or Retry-After cap out of range or not a
// number), "cli.bad-option" (a control character in the model or the anthropic version), and
// "cli.bad-provider". `apiKey` goes into the config as it is (loaded by the caller).
EndpointConfig endpointConfig(const EndpointText& text, std::string apiKey);

} // namespace kl::session
