#pragma once
// Keeps secrets out of everything the LLM clients write: logs, error messages, stored
// exchanges. Servers sometimes echo the Authorization header back in an error body, so known
// secrets are replaced wherever they occur, and so is anything that looks like a credential
// header, a bearer token or the userinfo of a URL.
#include <string>
#include <string_view>
#include <vector>

namespace kl {

class SecretRedactor {
public:
    static constexpr std::string_view kMark = "[redacted]";

    // Secrets shorter than 4 characters are ignored: replacing them would shred ordinary text.
    void addSecret(std::string secret);
    // The user name and password in a URL's userinfo ("https://user:key@host/v1"), if any.
    void addUrlCredentials(const std::string& url);
    std::string redact(std::string_view text) const;

    // True for header names whose values are credentials (Authorization, x-api-key, api-key,
    // anything with "token", "secret" or "key" in its name).
    static bool isSecretHeader(std::string_view name);

private:
    std::vector<std::string> m_secrets;
};

} // namespace kl
