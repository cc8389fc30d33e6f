#pragma once
// The one door through which bytes from the network become text: valid UTF-8, without secrets, and
// capped, before they reach a terminal, a widget, the store, a log or an export. Servers echo the
// key back (in an error body, in a reply), in the forms it travelled in: plain, in a Bearer or a
// Basic header (base64 of "user:key"), percent-encoded in a URL, base64 inside a longer blob. Known
// secrets are replaced in each of those forms; anything that looks like a credential header, a
// bearer token or a URL's userinfo is replaced too.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

// The most of one text from the network that is kept or shown: a reply longer than this is refused
// anyway (proposer.oversized), and an error page says what it has to say in far less.
constexpr std::size_t kMaxNetworkTextBytes = 256u << 10;

class SecretRedactor {
public:
    static constexpr std::string_view kMark = "[redacted]";

    // Secrets shorter than 4 characters are ignored: replacing them would shred ordinary text.
    void addSecret(const std::string& secret);
    // The user name and password in a URL's userinfo ("https://user:key@host/v1"), if any, as
    // written and percent-decoded, and the Basic header libcurl makes of them.
    void addUrlCredentials(const std::string& url);
    // Only the redaction: the text must already be UTF-8.
    std::string redact(std::string_view text) const;
    // Bytes from the network as text: invalid UTF-8 replaced by U+FFFD, redacted, and at most
    // `maxBytes` of it kept (cut at a character, "[N more bytes not kept]" added).
    std::string text(std::string_view bytes, std::size_t maxBytes = kMaxNetworkTextBytes) const;
    // The length of the longest form of any secret: a stream holds back that much of its tail.
    std::size_t longestForm() const { return m_longest; }
    // Where `text` may be cut so that no occurrence of a secret form straddles the cut, at or before `at`.
    std::size_t safeCut(std::string_view text, std::size_t at) const;

    // True for header names whose values are credentials (Authorization, x-api-key, api-key,
    // anything with "token", "secret" or "key" in its name).
    static bool isSecretHeader(std::string_view name);

private:
    void addForm(std::string form);
    void addPlain(const std::string& secret);

    std::vector<std::string> m_forms; // every form of every secret, longest first
    std::size_t m_longest = 0;
};

// Streamed text shown as it arrives, redacted before it is shown: a key split across two pieces
// must not come out in halves. Holds back the unfinished line (or, in a line without end, the last
// longestForm() bytes) until the rest arrives; shows at most maxBytes of one reply.
class RedactedStream {
public:
    explicit RedactedStream(const SecretRedactor& redactor, std::size_t maxBytes = kMaxNetworkTextBytes);
    std::string feed(std::string_view piece); // what can be shown now (may be empty)
    std::string finish(); // the rest, at the end of the reply

private:
    std::string shown(std::string_view text);

    const SecretRedactor& m_redactor;
    std::size_t m_maxBytes;
    std::string m_pending;
    std::size_t m_shownBytes = 0;
    std::size_t m_droppedBytes = 0;
};

// One RedactedStream per alternative of a reply.
class RedactedStreams {
public:
    explicit RedactedStreams(const SecretRedactor& redactor)
        : m_redactor(redactor)
    {
    }
    std::string feed(int alternative, std::string_view piece);
    std::map<int, std::string> finish(); // what each alternative still holds

private:
    const SecretRedactor& m_redactor;
    std::map<int, RedactedStream> m_streams;
};

} // namespace kl
