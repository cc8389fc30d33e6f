#pragma once
// API keys for the LLM proposers. The window keeps them in the OS keychain (qtkeychain), one entry
// per provider and base URL; where no keychain runs (CI, a bare server) the recipe's environment
// variable or 0600 key file is used, as by the CLI. A key lives only in the keychain and in the
// endpoint the loop uses: never in QSettings, the recipe, logs, the store or exports.
#include "core/llm/chat_client.h"
#include "core/session/session_recipe.h"

#include <QString>

namespace kl::gui {

struct LoadedKey {
    std::string key; // "" for servers that need none
    QString from; // "keychain", "$NAME", "key file", or "none"
};

class ApiKeys {
public:
    // Whether a keychain can be asked: built with qtkeychain, a session bus to reach it, and not
    // switched off by KERNELLOOP_NO_KEYCHAIN=1 (tests, CI).
    static bool keychainUsable();
    // The keychain entry's name for an endpoint: "openai http://host/v1".
    static QString account(const session::LlmSettings& llm);
    // Stores the key in the keychain; returns why not (empty on success). Never writes it elsewhere.
    static QString save(const session::LlmSettings& llm, const QString& key);
    // The recipe's --key-env/--key-file when it names one (what its command line says), else the
    // keychain's entry, else none. Throws kl::Error "llm.key-*" (see core/llm/api_key.h).
    static LoadedKey load(const session::LlmSettings& llm);
};

// The endpoint of the recipe's LLM with its key: core/session/llm_endpoint.h's rule, the CLI's
// (its cli.* categories: a missing URL or model, a URL that is not http(s), a number out of range).
EndpointConfig endpointFor(const session::LlmSettings& llm, std::string key);

} // namespace kl::gui
