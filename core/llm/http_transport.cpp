#include "core/llm/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace kl {

namespace {

using Clock = std::chrono::steady_clock;

void initialiseCurl()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    const HttpPost* post = nullptr;
    const BodyHandler* onBody = nullptr;
    CURL* easy = nullptr;
    HttpOutcome outcome;
    Clock::time_point lastActivity;
    bool stalled = false;
    bool cancelled = false;
    bool oversized = false;
    bool oversizedHeaders = false;
    std::size_t headerBytes = 0;
    bool aborted = false;
};

// The most of a response's header lines we read: a real server sends a few KiB.
constexpr std::size_t kMaxHeaderBytes = 64u << 10;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string trimmed(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

size_t onHeader(char* data, size_t size, size_t count, void* user)
{
    auto& t = *static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    t.lastActivity = Clock::now();
    t.headerBytes += line.size();
    if (t.headerBytes > kMaxHeaderBytes) {
        t.oversizedHeaders = true;
        return 0;
    }
    if (line.rfind("HTTP/", 0) == 0) {
        t.outcome.headers.clear(); // a new response (after 100 Continue, or a proxy's CONNECT)
        return size * count;
    }
    if (const auto colon = line.find(':'); colon != std::string_view::npos)
        t.outcome.headers[lower(trimmed(line.substr(0, colon)))] = trimmed(line.substr(colon + 1));
    return size * count;
}

size_t onBodyBytes(char* data, size_t size, size_t count, void* user)
{
    auto& t = *static_cast<Transfer*>(user);
    const size_t n = size * count;
    t.lastActivity = Clock::now();
    t.outcome.bodyBytes += n;
    if (t.outcome.bodyBytes > t.post->maxResponseBytes) {
        t.oversized = true;
        return 0;
    }
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    t.outcome.status = static_cast<int>(status);
    if (!(*t.onBody)(t.outcome, std::string_view(data, n))) {
        t.aborted = true;
        return 0;
    }
    return n;
}

// libcurl calls this many times a second while the transfer runs (the loop below polls every
// 50 ms), which is where cancellation and stalls are noticed.
int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    auto& t = *static_cast<Transfer*>(user);
    if (t.post->cancel && t.post->cancel->load()) {
        t.cancelled = true;
        return 1;
    }
    if (t.post->stallApplies && Clock::now() - t.lastActivity > t.post->timeouts.stall) {
        t.stalled = true;
        return 1;
    }
    return 0;
}

int onDebug(CURL*, curl_infotype type, char* data, size_t size, void* user)
{
    auto& t = *static_cast<Transfer*>(user);
    const std::string_view text(data, size);
    switch (type) {
    case CURLINFO_TEXT:
        t.post->trace("* " + trimmed(text));
        break;
    case CURLINFO_HEADER_OUT: {
        std::size_t start = 0;
        while (start < text.size()) {
            auto end = text.find('\n', start);
            if (end == std::string_view::npos)
                end = text.size();
            if (auto line = trimmed(text.substr(start, end - start)); !line.empty())
                t.post->trace("> " + line);
            start = end + 1;
        }
        break;
    }
    case CURLINFO_HEADER_IN:
        if (auto line = trimmed(text); !line.empty())
            t.post->trace("< " + line);
        break;
    case CURLINFO_DATA_IN:
        t.post->trace("< " + std::to_string(size) + " bytes");
        break;
    case CURLINFO_DATA_OUT:
        t.post->trace("> " + std::to_string(size) + " bytes");
        break;
    default:
        break;
    }
    return 0;
}

// RFC 6761 §6.4: names under .invalid never resolve, and resolver libraries should say so at
// once instead of asking a name server. (This also keeps tests that use such names off the network.)
bool isInvalidDomain(const std::string& url)
{
    std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> handle(curl_url(), &curl_url_cleanup);
    if (curl_url_set(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
        return false;
    char* host = nullptr;
    if (curl_url_get(handle.get(), CURLUPART_HOST, &host, 0) != CURLUE_OK)
        return false;
    std::string name = lower(host);
    curl_free(host);
    if (!name.empty() && name.back() == '.')
        name.pop_back();
    return name == "invalid" || (name.size() > 8 && name.compare(name.size() - 8, 8, ".invalid") == 0);
}

TransportFailure classify(CURLcode code, const Transfer& t)
{
    switch (code) {
    case CURLE_OK:
        return TransportFailure::None;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return TransportFailure::Dns;
    case CURLE_COULDNT_CONNECT:
        return TransportFailure::Refused;
    case CURLE_OPERATION_TIMEDOUT:
        return TransportFailure::Timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
        return TransportFailure::Tls;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
        return TransportFailure::Reset;
    case CURLE_ABORTED_BY_CALLBACK:
        return t.stalled ? TransportFailure::Stall : TransportFailure::Cancelled;
    case CURLE_OUT_OF_MEMORY: // libcurl's answer to one header line over its own limit (100 KiB)
        return TransportFailure::Oversized;
    case CURLE_WRITE_ERROR:
        return t.oversized || t.oversizedHeaders ? TransportFailure::Oversized
            : t.aborted                          ? TransportFailure::Aborted
                                                 : TransportFailure::Other;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return TransportFailure::BadUrl;
    default:
        return TransportFailure::Other;
    }
}

} // namespace

HttpOutcome httpPost(const HttpPost& post, const BodyHandler& onBody)
{
    initialiseCurl();
    const auto started = Clock::now();
    Transfer t;
    t.post = &post;
    t.onBody = &onBody;
    t.lastActivity = started;
    auto finish = [&] {
        t.outcome.elapsedMs = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
        return t.outcome;
    };
    if (isInvalidDomain(post.url)) {
        t.outcome.failure = TransportFailure::Dns;
        t.outcome.error = "the host is in the .invalid domain, which never resolves (RFC 6761)";
        return finish();
    }

    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), &curl_easy_cleanup);
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), &curl_multi_cleanup);
    if (!easy || !multi) {
        t.outcome.failure = TransportFailure::Other;
        t.outcome.error = "libcurl could not be initialised";
        return finish();
    }
    t.easy = easy.get();
    curl_slist* headers = nullptr;
    for (const auto& h : post.headers)
        headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:"); // no 100-continue round trip for large prompts
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headerList(headers, &curl_slist_free_all);

    char errorText[CURL_ERROR_SIZE] = {};
    CURL* e = easy.get();
    curl_easy_setopt(e, CURLOPT_URL, post.url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, post.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post.body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "KernelLoop/0.1 (libcurl)");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); // a redirect must not carry the key elsewhere
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(post.timeouts.connect.count()));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(post.timeouts.total.count()));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errorText);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, onBodyBytes);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
    if (post.trace) {
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, onDebug);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, &t);
    }

    // The multi interface, polled every 50 ms, so that a cancel or a stall is noticed promptly
    // even while no byte arrives.
    curl_multi_add_handle(multi.get(), e);
    CURLcode code = CURLE_OK;
    int running = 1;
    while (running) {
        if (curl_multi_perform(multi.get(), &running) != CURLM_OK)
            break;
        if (running)
            curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    }
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &queued))
        if (message->msg == CURLMSG_DONE && message->easy_handle == e)
            code = message->data.result;
    curl_multi_remove_handle(multi.get(), e);

    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    t.outcome.status = static_cast<int>(status);
    t.outcome.failure = classify(code, t);
    if (code != CURLE_OK)
        t.outcome.error = errorText[0] ? errorText : curl_easy_strerror(code);
    if (t.outcome.failure == TransportFailure::Stall)
        t.outcome.error = "no data for " + std::to_string(post.timeouts.stall.count()) + " ms";
    else if (t.outcome.failure == TransportFailure::Cancelled)
        t.outcome.error = "cancelled";
    else if (t.outcome.failure == TransportFailure::Oversized && (t.oversizedHeaders || code == CURLE_OUT_OF_MEMORY))
        t.outcome.error = "the response's headers are larger than " + std::to_string(kMaxHeaderBytes)
            + " bytes (or one header line larger than libcurl accepts); nothing of it was read";
    else if (t.outcome.failure == TransportFailure::Oversized)
        t.outcome.error = "the response is larger than " + std::to_string(post.maxResponseBytes) + " bytes";
    return finish();
}

} // namespace kl
