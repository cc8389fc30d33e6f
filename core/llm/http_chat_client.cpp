#include "core/llm/http_chat_client.h"

#include "core/llm/retry_policy.h"
#include "core/llm/token_budget.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace kl {

namespace {

using Clock = std::chrono::steady_clock;

// A failure's sentence and a log line: an error page says what it has to in far less.
constexpr std::size_t kMessageBytes = 8u << 10;

double millisSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string utcNow()
{
    const std::time_t now = std::time(nullptr);
    std::tm parts {};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

ExchangeCategory categoryOfStatus(int status)
{
    if (status == 401)
        return ExchangeCategory::Http401;
    if (status == 403)
        return ExchangeCategory::Http403;
    if (status == 404)
        return ExchangeCategory::Http404;
    if (status == 429)
        return ExchangeCategory::Http429;
    if (status >= 500)
        return ExchangeCategory::Http5xx;
    if (status >= 300 && status < 400)
        return ExchangeCategory::BadUrl; // a redirect: we do not follow one with a key attached
    return ExchangeCategory::Http4xx;
}

ExchangeCategory categoryOfTransport(TransportFailure failure, bool gotReply)
{
    switch (failure) {
    case TransportFailure::Dns:
        return ExchangeCategory::Dns;
    case TransportFailure::Refused:
        return ExchangeCategory::ConnectionRefused;
    case TransportFailure::Tls:
        return ExchangeCategory::Tls;
    case TransportFailure::Timeout:
        return ExchangeCategory::Timeout;
    case TransportFailure::Stall:
        return ExchangeCategory::Stall;
    case TransportFailure::Cancelled:
        return ExchangeCategory::Cancelled;
    case TransportFailure::Oversized:
        return ExchangeCategory::Oversized;
    case TransportFailure::BadUrl:
        return ExchangeCategory::BadUrl;
    case TransportFailure::Reset:
    case TransportFailure::Other:
    case TransportFailure::Aborted:
    case TransportFailure::None:
        break;
    }
    return gotReply ? ExchangeCategory::Truncated : ExchangeCategory::ConnectionReset;
}

bool hasText(const std::vector<ChatChoice>& choices)
{
    return std::any_of(choices.begin(), choices.end(), [](const ChatChoice& c) { return !c.text.empty(); });
}

// A CR or LF in a header would let its value add request headers of its own.
bool hasLineBreak(const std::string& text) { return text.find_first_of("\r\n", 0) != std::string::npos; }

} // namespace

ChatChoice& DecodedReply::choice(int index)
{
    if (index < 0)
        index = 0;
    if (static_cast<std::size_t>(index) >= choices.size())
        choices.resize(static_cast<std::size_t>(index) + 1);
    return choices[static_cast<std::size_t>(index)];
}

void DecodedReply::appendText(int index, std::string_view text)
{
    if (text.empty())
        return;
    choice(index).text.append(text);
    if (onText)
        onText(index, text);
}

void DecodedReply::fail(ExchangeCategory category, std::string message)
{
    if (!error) {
        error = category;
        errorMessage = std::move(message);
    }
}

struct HttpChatClient::Attempt {
    explicit Attempt(const SecretRedactor& redactor)
        : shown(redactor)
    {
    }
    ExchangeCategory category = ExchangeCategory::Ok;
    std::string message;
    std::optional<std::chrono::milliseconds> retryAfter;
    bool streamedText = false; // text already went to the caller: a retry would repeat it
    RedactedStreams shown; // the streamed text on its way to the caller, redacted before it is shown
};

HttpChatClient::HttpChatClient(EndpointConfig config)
    : m_config(std::move(config))
    , m_random(std::random_device {}())
{
    m_redactor.addSecret(m_config.apiKey);
    m_redactor.addUrlCredentials(m_config.baseUrl);
    for (const auto& [name, value] : m_config.extraHeaders)
        if (SecretRedactor::isSecretHeader(name))
            m_redactor.addSecret(value); // "Bearer KEY" adds KEY too
}

void HttpChatClient::log(const std::string& line) const
{
    if (m_config.log)
        m_config.log(m_redactor.text(line, kMessageBytes));
}

ExchangeCategory categoryOfErrorType(std::string_view type)
{
    if (type.find("rate_limit") != std::string_view::npos)
        return ExchangeCategory::Http429;
    if (type.find("authentication") != std::string_view::npos || type == "invalid_api_key")
        return ExchangeCategory::Http401;
    if (type.find("permission") != std::string_view::npos)
        return ExchangeCategory::Http403;
    if (type.find("not_found") != std::string_view::npos || type == "model_not_found")
        return ExchangeCategory::Http404;
    if (type.find("invalid_request") != std::string_view::npos)
        return ExchangeCategory::Http4xx;
    return ExchangeCategory::Http5xx; // overloaded_error, api_error, server_error, ...
}

Exchange HttpChatClient::send(const ChatRequest& request, const SendControl& control)
{
    const auto started = Clock::now();
    Exchange exchange;
    exchange.provider = providerName(m_config.provider);
    exchange.url = m_redactor.text(url(), kMessageBytes);
    exchange.model = m_config.model;
    exchange.streamed = request.stream;
    exchange.startedAt = utcNow();
    exchange.requestBody = requestBody(request).dump();
    if (!request.system.empty())
        exchange.prompt.push_back({ "system", request.system });
    for (const auto& m : request.messages)
        exchange.prompt.push_back({ m.role, m.content });
    for (const auto& [name, value] : protocolHeaders())
        exchange.requestHeaders.push_back(name + ": "
            + (SecretRedactor::isSecretHeader(name) ? std::string(SecretRedactor::kMark)
                                                    : m_redactor.text(value, kMessageBytes)));

    for (const auto& [name, value] : protocolHeaders())
        if (hasLineBreak(name) || hasLineBreak(value)) {
            exchange.category = ExchangeCategory::BadUrl;
            exchange.message = "the request header " + m_redactor.text(name, kMessageBytes)
                + " contains a line break (it would add headers of its own); nothing was sent";
            exchange.latencyMs = millisSince(started);
            return exchange;
        }
    const int maxAttempts = std::max(1, m_config.retry.maxAttempts);
    for (int attemptNumber = 1;; ++attemptNumber) {
        if (m_config.budget && m_config.budget->exhausted()) {
            exchange.category = ExchangeCategory::BudgetExhausted;
            exchange.message = "the token budget of " + std::to_string(m_config.budget->limit())
                + " tokens is spent; nothing was sent";
            break;
        }
        Attempt attempt(m_redactor);
        exchange.attempts = attemptNumber;
        runAttempt(request, control, exchange, attempt);
        if (control.onText) // what the streams held back, now that the reply is over
            for (const auto& [alternative, rest] : attempt.shown.finish())
                control.onText(alternative, rest);
        exchange.category = attempt.category;
        exchange.message = m_redactor.text(attempt.message, kMessageBytes);
        exchange.retryAfterMs.reset();
        if (attempt.retryAfter)
            exchange.retryAfterMs = attempt.retryAfter->count();
        if (attempt.category == ExchangeCategory::Ok)
            break;
        log("attempt " + std::to_string(attemptNumber)
            + " failed: " + std::string(exchangeCategoryName(attempt.category)) + ": " + exchange.message);
        if (!RetryPolicy::isRetryable(attempt.category) || attempt.streamedText || attemptNumber >= maxAttempts)
            break;
        RetryPolicy::Wait wait;
        {
            std::lock_guard lock(m_randomMutex);
            wait = m_config.retry.waitBefore(attemptNumber + 1, attempt.retryAfter, m_random);
        }
        log("retrying in " + std::to_string(wait.delay.count()) + " ms"
            + (attempt.retryAfter ? " (" + retryAfterText(*attempt.retryAfter, m_config.retry.maxRetryAfter) + ")"
                                  : std::string()));
        const auto waitStart = Clock::now();
        const bool waited = waitUnlessCancelled(wait.delay, control.cancel);
        exchange.retryWaitMs += millisSince(waitStart);
        if (!waited) {
            exchange.category = ExchangeCategory::Cancelled;
            exchange.message = "cancelled while waiting to retry";
            break;
        }
    }
    if (m_config.budget)
        m_config.budget->record(exchange.usage);
    exchange.latencyMs = millisSince(started);
    log(exchange.ok() ? "exchange ok in " + std::to_string(static_cast<long long>(exchange.latencyMs)) + " ms, "
                + std::to_string(exchange.usage.promptTokens) + " prompt + "
                + std::to_string(exchange.usage.completionTokens) + " completion tokens"
                      : "exchange failed: " + std::string(exchangeCategoryName(exchange.category)));
    return exchange;
}

void HttpChatClient::runAttempt(
    const ChatRequest& request, const SendControl& control, Exchange& exchange, Attempt& attempt)
{
    const auto started = Clock::now();
    HttpPost post;
    post.url = url();
    for (const auto& [name, value] : protocolHeaders())
        post.headers.push_back(name + ": " + value);
    if (request.stream)
        post.headers.push_back("Accept: text/event-stream");
    post.body = exchange.requestBody;
    post.timeouts = m_config.timeouts;
    post.stallApplies = request.stream;
    post.maxResponseBytes = m_config.maxResponseBytes;
    post.cancel = control.cancel;
    if (m_config.traceHttp && m_config.log)
        post.trace = [this](std::string_view line) { log(std::string(line)); };
    log("POST " + post.url + " model " + m_config.model + (request.stream ? ", streaming" : "") + ", attempt "
        + std::to_string(exchange.attempts));

    DecodedReply reply;
    double firstTextMs = -1.0;
    reply.onText = [&](int index, std::string_view text) {
        if (firstTextMs < 0)
            firstTextMs = millisSince(started);
        attempt.streamedText = true;
        if (!control.onText)
            return;
        if (const auto shown = attempt.shown.feed(index, text); !shown.empty())
            control.onText(index, shown);
    };
    SseParser parser([&](const ServerSentEvent& event) {
        if (reply.error)
            return;
        try {
            // A byte that is not UTF-8 inside a JSON string would make the whole event unreadable:
            // replaced first, the text around it is kept.
            ServerSentEvent repaired = event;
            repaired.data = validUtf8(event.data);
            decodeEvent(repaired, reply);
        } catch (const nlohmann::json::exception& e) {
            reply.fail(ExchangeCategory::BadJson, std::string("a stream event is not valid JSON: ") + e.what());
        }
    });
    std::string body;
    bool isEventStream = false;
    const auto outcome = httpPost(post, [&](const HttpOutcome& head, std::string_view bytes) {
        if (body.empty()) {
            const auto type = head.headers.find("content-type");
            isEventStream = request.stream && head.status / 100 == 2 && type != head.headers.end()
                && type->second.find("text/event-stream") != std::string::npos;
        }
        body.append(bytes);
        if (isEventStream) {
            parser.feed(bytes);
            return !reply.error;
        }
        return true;
    });

    exchange.httpStatus = outcome.status;
    exchange.response = m_redactor.text(body);
    exchange.firstTokenMs = firstTextMs;

    // What the server said goes to terminals, JSON and the store through m_redactor.text(): valid
    // UTF-8, never the key (a server may echo it back in a reply as well as in an error), capped (a
    // reply cut at the cap still reads as oversized: the cap adds a note of what was dropped).
    auto finishReply = [&] {
        exchange.choices = reply.choices;
        for (auto& choice : exchange.choices) {
            choice.text = m_redactor.text(choice.text);
            choice.finishReason = m_redactor.text(choice.finishReason, 256);
        }
        if (!reply.servedModel.empty())
            exchange.servedModel = m_redactor.text(reply.servedModel, 1024);
        if (reply.usage.reported) {
            exchange.usage.promptTokens += reply.usage.promptTokens;
            exchange.usage.completionTokens += reply.usage.completionTokens;
            exchange.usage.reported = true;
        }
    };

    if (outcome.failure == TransportFailure::Aborted && reply.error) {
        finishReply();
        attempt.category = *reply.error;
        attempt.message = reply.errorMessage;
        return;
    }
    if (outcome.failure != TransportFailure::None) {
        finishReply();
        const bool gotReply = outcome.status / 100 == 2 && outcome.bodyBytes > 0;
        attempt.category = categoryOfTransport(outcome.failure, gotReply);
        attempt.message = outcome.error;
        if (attempt.category == ExchangeCategory::Truncated)
            attempt.message = "the connection broke after " + std::to_string(outcome.bodyBytes)
                + " bytes, before the reply was complete (" + outcome.error + ")";
        return;
    }
    if (outcome.status / 100 != 2) {
        attempt.category = categoryOfStatus(outcome.status);
        const auto detail = errorText(validUtf8(body));
        attempt.message = "HTTP " + std::to_string(outcome.status) + (detail.empty() ? "" : ": " + detail);
        if (attempt.category == ExchangeCategory::BadUrl) {
            const auto location = outcome.headers.find("location");
            attempt.message += "; the server redirects"
                + (location != outcome.headers.end() ? " to " + location->second : std::string())
                + ", use that URL as the base URL";
        }
        if (outcome.status == 429 || outcome.status >= 500)
            if (const auto it = outcome.headers.find("retry-after"); it != outcome.headers.end()) {
                attempt.retryAfter = parseRetryAfter(it->second, std::time(nullptr));
                if (attempt.retryAfter)
                    attempt.message += " (" + retryAfterText(*attempt.retryAfter, m_config.retry.maxRetryAfter) + ")";
            }
        return;
    }
    if (isEventStream) {
        const bool cut = parser.finish();
        if (reply.error) {
            attempt.category = *reply.error;
            attempt.message = reply.errorMessage;
        } else if (!reply.finished) {
            attempt.category = ExchangeCategory::Truncated;
            attempt.message = std::string("the stream ended without the end-of-reply marker")
                + (cut ? " (its last event was cut off)" : "");
        }
        finishReply();
        if (attempt.category == ExchangeCategory::Ok && !hasText(exchange.choices)) {
            attempt.category = ExchangeCategory::EmptyReply;
            attempt.message = "the stream ended without any text";
        }
        return;
    }
    try {
        decodeBody(validUtf8(body), reply);
        if (reply.error) {
            attempt.category = *reply.error;
            attempt.message = reply.errorMessage;
        }
    } catch (const nlohmann::json::exception& e) {
        attempt.category = ExchangeCategory::BadJson;
        attempt.message = std::string("the reply is not the expected JSON: ") + e.what();
    }
    finishReply();
    if (attempt.category == ExchangeCategory::Ok && !hasText(exchange.choices)) {
        attempt.category = ExchangeCategory::EmptyReply;
        attempt.message = "the reply has no text (its content is null or empty)"
            + (exchange.choices.empty() || exchange.choices.front().finishReason.empty()
                    ? std::string()
                    : "; finish reason " + exchange.choices.front().finishReason);
    }
    // The whole reply arrived at once: hand it to the caller as one piece, as a stream would have
    // (its redacted, capped form).
    if (attempt.category == ExchangeCategory::Ok && control.onText)
        for (std::size_t i = 0; i < exchange.choices.size(); ++i)
            if (!exchange.choices[i].text.empty())
                control.onText(static_cast<int>(i), exchange.choices[i].text);
}

} // namespace kl
