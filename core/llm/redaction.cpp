#include "core/llm/redaction.h"

#include "core/exchange/exchange.h"
#include "core/protocol/base64.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace kl {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string percentEncoded(std::string_view text, const char* digits)
{
    std::string out;
    for (const unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

std::string percentDecoded(std::string_view text)
{
    std::string out;
    const auto hex = [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                           : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1]))
            && std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string urlSafe(std::string text)
{
    std::replace(text.begin(), text.end(), '+', '-');
    std::replace(text.begin(), text.end(), '/', '_');
    return text;
}

// The characters of base64(anything + secret + anything) that depend on the secret alone, for each
// of the three places the secret can start at within a group of three bytes.
std::vector<std::string> base64Cores(const std::string& secret)
{
    std::vector<std::string> cores;
    for (std::size_t offset = 0; offset < 3; ++offset) {
        const std::string data = std::string(offset, '\0') + secret;
        const std::string encoded = protocol::base64Encode(data);
        const std::size_t skip = (offset * 8 + 5) / 6; // characters that hold bits of the bytes before
        const std::size_t whole = data.size() * 8 / 6; // characters made of the secret's bits only
        if (whole > skip)
            cores.push_back(encoded.substr(skip, whole - skip));
    }
    return cores;
}

// Replaces, in `text`, each run that `valueAt(lowered, i)` finds at a position where `startsAt` holds.
// The scanners below find credential-shaped text without std::regex, whose recursion a long hostile
// run of token characters would overflow.
using Finder = std::size_t (*)(const std::string& lowered, std::size_t at, std::size_t& valueStart);

std::string replaceRuns(std::string_view text, Finder find)
{
    const std::string lowered = lower(text);
    std::string out;
    out.reserve(text.size());
    std::size_t copied = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        std::size_t valueStart = 0;
        const std::size_t valueEnd = find(lowered, i, valueStart);
        if (valueEnd == 0)
            continue;
        out.append(text.substr(copied, valueStart - copied));
        out.append(SecretRedactor::kMark);
        copied = valueEnd;
        i = valueEnd - 1;
    }
    out.append(text.substr(copied));
    return out;
}

std::size_t skipSpaces(const std::string& s, std::size_t i)
{
    while (i < s.size() && isSpace(s[i]))
        ++i;
    return i;
}

bool startsWith(const std::string& s, std::size_t at, std::string_view what)
{
    return s.compare(at, what.size(), what) == 0;
}

// "Authorization: Bearer X", "x-api-key": "X", api-key=X: the end of X (0 when none starts at `at`).
std::size_t credentialField(const std::string& s, std::size_t at, std::size_t& valueStart)
{
    static constexpr std::string_view names[] = { "proxy-authorization", "authorization", "x-api-key", "api-key" };
    if (at > 0 && !isSpace(s[at - 1]) && std::string_view("\"'{,").find(s[at - 1]) == std::string_view::npos)
        return 0;
    for (const auto name : names) {
        if (!startsWith(s, at, name))
            continue;
        std::size_t i = at + name.size();
        if (i < s.size() && (s[i] == '"' || s[i] == '\''))
            ++i;
        i = skipSpaces(s, i);
        if (i >= s.size() || (s[i] != ':' && s[i] != '='))
            return 0;
        i = skipSpaces(s, i + 1);
        if (i < s.size() && (s[i] == '"' || s[i] == '\''))
            ++i;
        for (const std::string_view scheme : { "bearer", "basic" })
            if (startsWith(s, i, scheme) && i + scheme.size() < s.size() && isSpace(s[i + scheme.size()])) {
                i = skipSpaces(s, i + scheme.size());
                break;
            }
        std::size_t end = i;
        while (end < s.size() && !isSpace(s[end]) && std::string_view("\"',}][").find(s[end]) == std::string_view::npos)
            ++end;
        if (end == i)
            return 0;
        valueStart = i;
        return end;
    }
    return 0;
}

bool isTokenChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._~+/=-").find(c) != std::string_view::npos;
}

// "Bearer X" anywhere, X of four or more token characters.
std::size_t bearerToken(const std::string& s, std::size_t at, std::size_t& valueStart)
{
    if (!startsWith(s, at, "bearer") || at + 6 >= s.size() || !isSpace(s[at + 6]))
        return 0;
    const std::size_t i = skipSpaces(s, at + 6);
    std::size_t end = i;
    while (end < s.size() && isTokenChar(s[end]))
        ++end;
    if (end - i < 4)
        return 0;
    valueStart = i;
    return end;
}

// "https://user:key@host": the userinfo, up to the '@'.
std::size_t urlUserinfo(const std::string& s, std::size_t at, std::size_t& valueStart)
{
    std::size_t i = 0;
    for (const std::string_view scheme : { "https://", "http://", "ftp://" })
        if (startsWith(s, at, scheme)) {
            i = at + scheme.size();
            break;
        }
    if (i == 0)
        return 0;
    std::size_t end = i;
    while (end < s.size() && !isSpace(s[end]) && std::string_view("/@\"'?#").find(s[end]) == std::string_view::npos)
        ++end;
    if (end == i || end >= s.size() || s[end] != '@')
        return 0;
    valueStart = i;
    return end;
}

// A cut at `at` that does not split a UTF-8 character.
std::size_t characterStart(std::string_view text, std::size_t at)
{
    for (int back = 0; back < 3 && at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
         ++back)
        --at;
    return at;
}

std::string notKept(std::size_t bytes, const char* what = "kept")
{
    return "\n[" + std::to_string(bytes) + " more bytes not " + what + "]";
}

} // namespace

void SecretRedactor::addForm(std::string form)
{
    if (form.size() < 4 || std::find(m_forms.begin(), m_forms.end(), form) != m_forms.end())
        return;
    m_longest = std::max(m_longest, form.size());
    m_forms.push_back(std::move(form));
    // Longest first, so that a form containing another is replaced whole.
    std::stable_sort(m_forms.begin(), m_forms.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void SecretRedactor::addPlain(const std::string& secret)
{
    if (secret.size() < 4)
        return;
    addForm(secret);
    addForm(percentEncoded(secret, "0123456789ABCDEF"));
    addForm(percentEncoded(secret, "0123456789abcdef"));
    const auto escaped = nlohmann::json(validUtf8(secret)).dump();
    addForm(escaped.substr(1, escaped.size() - 2));
    std::string slashes;
    for (const char c : secret)
        slashes += c == '/' ? std::string("\\/") : std::string(1, c);
    addForm(slashes);
    // Base64 hides a secret inside a longer blob too (a Basic header, a token that wraps it):
    // only cores long enough not to match ordinary text.
    for (const auto& core : base64Cores(secret))
        if (core.size() >= 8) {
            addForm(core);
            addForm(urlSafe(core));
        }
}

void SecretRedactor::addSecret(const std::string& secret)
{
    addPlain(secret);
    // A header value "Bearer KEY" or "Basic BASE64": the credential after the scheme too.
    const auto space = secret.find_last_of(" \t");
    if (space != std::string::npos)
        addSecret(secret.substr(space + 1));
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
    const auto user = userinfo.substr(0, colon);
    const auto password = colon == std::string::npos ? std::string() : userinfo.substr(colon + 1);
    for (const auto& part : { user, password }) {
        addPlain(part);
        addPlain(percentDecoded(part));
    }
    // What libcurl sends for them: "Authorization: Basic base64(user:password)".
    const auto basic = protocol::base64Encode(percentDecoded(user) + ":" + percentDecoded(password));
    addForm(basic);
    addForm(urlSafe(basic));
}

std::string SecretRedactor::redact(std::string_view text) const
{
    // Credentials this redactor may not know: a header line or a JSON field carrying one, bearer
    // tokens anywhere, a URL's userinfo. Then every form of the known secrets, wherever they are.
    std::string out = replaceRuns(text, credentialField);
    out = replaceRuns(out, bearerToken);
    out = replaceRuns(out, urlUserinfo);
    for (const auto& form : m_forms)
        for (auto pos = out.find(form); pos != std::string::npos; pos = out.find(form, pos + kMark.size()))
            out.replace(pos, form.size(), kMark);
    return out;
}

std::size_t SecretRedactor::safeCut(std::string_view text, std::size_t at) const
{
    at = std::min(at, text.size());
    for (bool moved = true; moved;) {
        moved = false;
        for (const auto& form : m_forms) {
            const std::size_t from = at >= form.size() ? at - form.size() + 1 : 0;
            const auto pos = text.find(form, from);
            if (pos != std::string_view::npos && pos < at && pos + form.size() > at) {
                at = pos;
                moved = true;
            }
        }
    }
    return characterStart(text, at);
}

std::string SecretRedactor::text(std::string_view bytes, std::size_t maxBytes) const
{
    // Redacting 20 MB to keep 256 KiB of it would be waste: a window a little larger than the cap,
    // cut where no secret straddles its end, is enough.
    const std::size_t window = maxBytes + 2 * m_longest + 64;
    std::size_t dropped = 0;
    if (bytes.size() > window) {
        const auto cut = safeCut(bytes, window - m_longest);
        dropped = bytes.size() - cut;
        bytes = bytes.substr(0, cut);
    }
    std::string out = redact(validUtf8(bytes));
    if (out.size() > maxBytes) {
        const auto cut = characterStart(out, maxBytes);
        dropped += out.size() - cut;
        out.resize(cut);
    }
    if (dropped > 0)
        out += notKept(dropped);
    return out;
}

bool SecretRedactor::isSecretHeader(std::string_view name)
{
    const auto n = lower(name);
    return n == "authorization" || n == "proxy-authorization" || n.find("key") != std::string::npos
        || n.find("token") != std::string::npos || n.find("secret") != std::string::npos
        || n.find("cookie") != std::string::npos;
}

RedactedStream::RedactedStream(const SecretRedactor& redactor, std::size_t maxBytes)
    : m_redactor(redactor)
    , m_maxBytes(maxBytes)
{
}

std::string RedactedStream::shown(std::string_view raw)
{
    std::string text = m_redactor.redact(validUtf8(raw));
    if (m_shownBytes + text.size() > m_maxBytes) {
        const auto keep = characterStart(text, m_maxBytes - m_shownBytes);
        m_droppedBytes += text.size() - keep;
        text.resize(keep);
    }
    m_shownBytes += text.size();
    return text;
}

std::string RedactedStream::feed(std::string_view piece)
{
    if (m_shownBytes >= m_maxBytes) {
        m_droppedBytes += piece.size();
        return {};
    }
    m_pending.append(piece);
    // A whole line at a time where lines end (a credential header and its value stay together),
    // else all but the tail a secret could still be growing in.
    const auto hold = std::max<std::size_t>(m_redactor.longestForm(), 64);
    std::size_t cut = 0;
    if (const auto newline = m_pending.rfind('\n'); newline != std::string::npos)
        cut = newline + 1;
    else if (m_pending.size() > std::max<std::size_t>(hold, 4096))
        cut = m_redactor.safeCut(m_pending, m_pending.size() - hold);
    if (cut == 0)
        return {};
    auto out = shown(std::string_view(m_pending).substr(0, cut));
    m_pending.erase(0, cut);
    return out;
}

std::string RedactedStream::finish()
{
    std::string out;
    if (m_shownBytes < m_maxBytes)
        out = shown(m_pending);
    else
        m_droppedBytes += m_pending.size();
    m_pending.clear();
    if (m_droppedBytes > 0)
        out += notKept(m_droppedBytes, "shown");
    m_droppedBytes = 0;
    return out;
}

std::string RedactedStreams::feed(int alternative, std::string_view piece)
{
    return m_streams.try_emplace(alternative, m_redactor).first->second.feed(piece);
}

std::map<int, std::string> RedactedStreams::finish()
{
    std::map<int, std::string> rest;
    for (auto& [alternative, stream] : m_streams)
        if (auto text = stream.finish(); !text.empty())
            rest[alternative] = std::move(text);
    m_streams.clear();
    return rest;
}

} // namespace kl
