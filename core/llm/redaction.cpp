#include "core/llm/redaction.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace kl {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

void replaceAll(std::string& text, const std::string& what, std::string_view with)
{
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + with.size()))
        text.replace(pos, what.size(), with);
}

} // namespace

void SecretRedactor::addSecret(std::string secret)
{
    if (secret.size() < 4)
        return;
    if (std::find(m_secrets.begin(), m_secrets.end(), secret) == m_secrets.end())
        m_secrets.push_back(std::move(secret));
    // Longest first, so that a secret containing another is replaced whole.
    std::sort(m_secrets.begin(), m_secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void SecretRedactor::addUrlCredentials(const std::string& url)
{
    const auto scheme = url.find("://");
    if (scheme == std::string::npos)
        return;
    const auto hostStart = scheme + 3;
    const auto hostEnd = url.find_first_of("/?#", hostStart);
    const auto authority
        = url.substr(hostStart, hostEnd == std::string::npos ? std::string::npos : hostEnd - hostStart);
    const auto at = authority.rfind('@');
    if (at == std::string::npos)
        return;
    const auto userinfo = authority.substr(0, at);
    const auto colon = userinfo.find(':');
    addSecret(userinfo.substr(0, colon));
    if (colon != std::string::npos)
        addSecret(userinfo.substr(colon + 1));
}

std::string SecretRedactor::redact(std::string_view text) const
{
    // Credentials this redactor may not know: a header line or a JSON field carrying one, and
    // bearer tokens anywhere. Then the known secrets, wherever they are.
    static const std::regex headerLine(
        R"(((?:^|[\s"'{,])(?:authorization|proxy-authorization|x-api-key|api-key)["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?[^\s"',}\]\[]+)",
        std::regex::icase);
    static const std::regex bearer(R"((bearer\s+)[A-Za-z0-9._~+/=-]{4,})", std::regex::icase);
    std::string out = std::regex_replace(std::string(text), headerLine, "$1[redacted]");
    out = std::regex_replace(out, bearer, "$1[redacted]");
    static const std::regex userinfo(R"(((?:https?|ftp)://)[^/@\s"'?#]+@)", std::regex::icase);
    out = std::regex_replace(out, userinfo, "$1[redacted]@");
    for (const auto& secret : m_secrets)
        replaceAll(out, secret, kMark);
    return out;
}

bool SecretRedactor::isSecretHeader(std::string_view name)
{
    const auto n = lower(name);
    return n == "authorization" || n == "proxy-authorization" || n.find("key") != std::string::npos
        || n.find("token") != std::string::npos || n.find("secret") != std::string::npos
        || n.find("cookie") != std::string::npos;
}

} // namespace kl
