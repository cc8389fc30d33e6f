#pragma once
// One HTTP POST over libcurl, with the body handed over as it arrives. Timeouts (connect, total,
// and a stall timeout for streams), cancellation, TLS verification on, proxies from the
// environment (libcurl's http_proxy / https_proxy / no_proxy). It knows nothing of LLMs: the chat
// clients give meaning to statuses and bodies.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

struct HttpTimeouts {
    std::chrono::milliseconds connect { 10000 };
    std::chrono::milliseconds total { 600000 };
    std::chrono::milliseconds stall { 60000 }; // only where HttpPost::stallApplies
};

struct HttpPost {
    std::string url;
    std::vector<std::string> headers; // "Name: value"
    std::string body;
    HttpTimeouts timeouts;
    // A stream sends bytes all along; silence longer than timeouts.stall means it is stuck. A
    // plain reply comes all at once after the model has finished, so silence there is normal.
    bool stallApplies = false;
    std::size_t maxResponseBytes = 64u << 20;
    const std::atomic<bool>* cancel = nullptr;
    // libcurl's account of the exchange (connection steps, header lines, data sizes). Raw:
    // it holds the request headers, so the caller must redact it.
    std::function<void(std::string_view)> trace;
};

enum class TransportFailure {
    None,
    Dns,
    Refused,
    Reset, // the connection broke, or ended before the response was complete
    Tls,
    Timeout, // connect or total
    Stall,
    Cancelled,
    Oversized, // more than maxResponseBytes
    Aborted, // the body handler asked to stop
    BadUrl,
    Other,
};

struct HttpOutcome {
    TransportFailure failure = TransportFailure::None;
    std::string error; // libcurl's explanation of a failure
    int status = 0; // 0 if no response line arrived
    std::map<std::string, std::string> headers; // of the final response, names in lower case
    std::size_t bodyBytes = 0;
    double elapsedMs = 0.0;
};

// Called with each piece of the body as it arrives, with the outcome so far (status and headers
// are known by then); return false to stop the transfer (the outcome is then Aborted).
using BodyHandler = std::function<bool(const HttpOutcome& head, std::string_view bytes)>;

// Never throws for a network problem: every failure comes back in the outcome.
HttpOutcome httpPost(const HttpPost& post, const BodyHandler& onBody);

} // namespace kl
