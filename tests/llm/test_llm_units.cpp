// The LLM clients' building blocks without a network: the SSE parser fed in every possible split,
// Retry-After and backoff, redaction, the token budget, and the Exchange record.
#include "core/exchange/exchange.h"
#include "core/llm/redaction.h"
#include "core/llm/retry_policy.h"
#include "core/llm/sse_parser.h"
#include "core/llm/token_budget.h"
#include "core/model/error.h"
#include "core/protocol/base64.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

using namespace kl;

namespace {

// Events as "type|data" strings, easy to compare.
std::vector<std::string> parseAll(const std::vector<std::string>& pieces, bool* cut = nullptr)
{
    std::vector<std::string> events;
    SseParser parser([&](const ServerSentEvent& e) { events.push_back(e.type + "|" + e.data); });
    for (const auto& p : pieces)
        parser.feed(p);
    const bool wasCut = parser.finish();
    if (cut)
        *cut = wasCut;
    return events;
}

} // namespace

class TestLlmUnits : public QObject {
    Q_OBJECT

private slots:
    void sseEveryTwoWaySplitGivesTheSameEvents()
    {
        // Mixed line endings, a comment, multi-line data, a named event, a BOM, an id and retry.
        const std::string stream = "\xEF\xBB\xBF: keep-alive\r\n"
                                   "data: {\"a\":1}\r\n\r\n"
                                   "event: content_block_delta\n"
                                   "data: line one\n"
                                   "data: line two\n"
                                   "id: 7\n"
                                   "retry: 1000\n\n"
                                   "data:no-space\r\r"
                                   "data: [DONE]\n\n";
        const std::vector<std::string> expected { "message|{\"a\":1}", "content_block_delta|line one\nline two",
            "message|no-space", "message|[DONE]" };
        QCOMPARE(parseAll({ stream }), expected);
        for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
            bool wasCut = true;
            const auto events = parseAll({ stream.substr(0, cut), stream.substr(cut) }, &wasCut);
            QVERIFY2(events == expected, qPrintable(QStringLiteral("split at %1").arg(cut)));
            QVERIFY(!wasCut);
        }
        // One byte at a time: every CR LF pair and every field split.
        std::vector<std::string> bytes;
        for (char c : stream)
            bytes.emplace_back(1, c);
        QCOMPARE(parseAll(bytes), expected);
    }

    void sseReportsAStreamCutMidEvent()
    {
        bool cut = false;
        const auto events = parseAll({ "data: {\"complete\":true}\n\ndata: {\"cut", "-off\":" }, &cut);
        QCOMPARE(events.size(), std::size_t(1));
        QVERIFY(cut);
        bool clean = true;
        parseAll({ "data: x\n\n" }, &clean);
        QVERIFY(!clean);
    }

    void sseIgnoresEventsWithoutData()
    {
        QCOMPARE(parseAll({ "event: ping\n\n: comment\n\nid: 3\n\n" }).size(), std::size_t(0));
        QCOMPARE(parseAll({ "data\n\n" }), std::vector<std::string> { "message|" });
    }

    void retryAfterInSecondsAndAsAnHttpDate()
    {
        const std::time_t now = 1445412480; // Wed, 21 Oct 2015 07:28:00 GMT
        QCOMPARE(parseRetryAfter("3", now).value().count(), 3000LL);
        QCOMPARE(parseRetryAfter(" 1.5 ", now).value().count(), 1500LL);
        QCOMPARE(parseRetryAfter("Wed, 21 Oct 2015 07:28:07 GMT", now).value().count(), 7000LL);
        QCOMPARE(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now).value().count(), 0LL); // in the past
        QVERIFY(!parseRetryAfter("soon", now));
        QVERIFY(!parseRetryAfter("", now));
        QVERIFY(!parseRetryAfter("-4", now));
    }

    // A server may ask for anything: 99999 s, a date years ahead, "inf". The wait is cut to a
    // minute by default, and the cut is said.
    void retryAfterIsCapped()
    {
        const std::time_t now = 1445412480;
        QCOMPARE(parseRetryAfter("99999", now).value().count(), 99999000LL);
        QCOMPARE(parseRetryAfter("Wed, 21 Oct 2025 07:28:00 GMT", now).value().count(), 315619200000LL); // 10 years
        QCOMPARE(parseRetryAfter("1e300", now).value().count(), 1000000000000LL); // no overflow
        QVERIFY(!parseRetryAfter("inf", now));
        QVERIFY(!parseRetryAfter("nan", now));
        QVERIFY(!parseRetryAfter("1e400", now));
        RetryPolicy policy;
        QCOMPARE(policy.maxRetryAfter.count(), 60000LL);
        std::mt19937_64 random(1);
        const auto wait = policy.waitBefore(2, parseRetryAfter("99999", now), random);
        QCOMPARE(wait.delay.count(), 60000LL);
        QVERIFY(wait.capped && wait.fromRetryAfter);
        QVERIFY(!policy.waitBefore(2, std::chrono::milliseconds(3000), random).capped);
        QCOMPARE(retryAfterText(std::chrono::milliseconds(99999000), policy.maxRetryAfter),
            std::string("Retry-After 99999 s, capped at 60 s"));
        QCOMPARE(retryAfterText(std::chrono::milliseconds(3000), policy.maxRetryAfter), std::string("Retry-After 3 s"));
    }

    void invalidUtf8IsReplaced()
    {
        QCOMPARE(validUtf8("plain \xC3\xA9 \xE2\x86\x92 ok"), std::string("plain \xC3\xA9 \xE2\x86\x92 ok"));
        QCOMPARE(validUtf8("a\xFF"
                           "b"),
            std::string("a\xEF\xBF\xBD"
                        "b"));
        QCOMPARE(validUtf8("\xC3"), std::string("\xEF\xBF\xBD")); // cut in the middle
        QCOMPARE(validUtf8("\xED\xA0\x80"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD")); // a surrogate
        QCOMPARE(validUtf8("\xC0\xAF"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD")); // overlong
        QCOMPARE(validUtf8("\xF0\x9F\x98\x80"), std::string("\xF0\x9F\x98\x80"));
        nlohmann::json j = validUtf8("bad \x80\x81 bytes");
        QVERIFY(!j.dump().empty()); // would throw type_error 316 on the raw bytes
    }

    void urlCredentialsAreRedacted()
    {
        SecretRedactor r;
        r.addUrlCredentials("https://alice:sk-userinfo-123456@llm.example.com/v1");
        const auto text = r.redact("POST https://alice:sk-userinfo-123456@llm.example.com/v1/chat/completions; key "
                                   "sk-userinfo-123456 echoed");
        QVERIFY2(text.find("sk-userinfo-123456") == std::string::npos, text.c_str());
        QVERIFY2(text.find("https://[redacted]@llm.example.com/v1") != std::string::npos, text.c_str());
        // Without being told: any userinfo in a URL.
        const auto other = SecretRedactor().redact("see http://sk-only-user-999@host:8000/v1");
        QCOMPARE(other, std::string("see http://[redacted]@host:8000/v1"));
    }

    void backoffGrowsExponentiallyWithJitterAndACap()
    {
        RetryPolicy policy;
        policy.initialDelay = std::chrono::milliseconds(100);
        policy.maxDelay = std::chrono::milliseconds(1000);
        std::mt19937_64 random(1);
        for (int i = 0; i < 200; ++i) {
            const auto first = policy.backoff(2, random).count();
            QVERIFY(first >= 50 && first <= 100);
            const auto third = policy.backoff(4, random).count();
            QVERIFY(third >= 200 && third <= 400);
            const auto late = policy.backoff(20, random).count();
            QVERIFY(late >= 500 && late <= 1000);
        }
        // Jitter: not every delay is the same.
        std::set<long long> seen;
        for (int i = 0; i < 20; ++i)
            seen.insert(policy.backoff(3, random).count());
        QVERIFY(seen.size() > 5);
    }

    void whatIsRetried()
    {
        for (auto c : { ExchangeCategory::Http429, ExchangeCategory::Http5xx, ExchangeCategory::ConnectionRefused,
                 ExchangeCategory::ConnectionReset, ExchangeCategory::Timeout, ExchangeCategory::Stall })
            QVERIFY2(RetryPolicy::isRetryable(c), exchangeCategoryName(c).data());
        for (auto c : { ExchangeCategory::Http401, ExchangeCategory::Http403, ExchangeCategory::Http404,
                 ExchangeCategory::Http4xx, ExchangeCategory::Dns, ExchangeCategory::Tls, ExchangeCategory::BadJson,
                 ExchangeCategory::Cancelled, ExchangeCategory::BudgetExhausted })
            QVERIFY2(!RetryPolicy::isRetryable(c), exchangeCategoryName(c).data());
    }

    void redactionRemovesKnownSecretsAndCredentialHeaders()
    {
        SecretRedactor r;
        r.addSecret("sk-live-0123456789abcdef");
        r.addSecret("ab"); // too short to redact safely: ignored
        const std::string text = "key sk-live-0123456789abcdef in text; Authorization: Bearer sk-other-987654321; "
                                 "{\"x-api-key\": \"anthropic-secret-value\"} api-key=azure-secret-1 ab";
        const auto out = r.redact(text);
        QVERIFY2(out.find("sk-live-0123456789abcdef") == std::string::npos, out.c_str());
        QVERIFY2(out.find("sk-other-987654321") == std::string::npos, out.c_str());
        QVERIFY2(out.find("anthropic-secret-value") == std::string::npos, out.c_str());
        QVERIFY2(out.find("azure-secret-1") == std::string::npos, out.c_str());
        QVERIFY(out.find("[redacted]") != std::string::npos);
        QVERIFY(out.find(" ab") != std::string::npos);
        QCOMPARE(r.redact("nothing secret here: 12 tokens"), std::string("nothing secret here: 12 tokens"));
        QVERIFY(SecretRedactor::isSecretHeader("X-Api-Key"));
        QVERIFY(SecretRedactor::isSecretHeader("Authorization"));
        QVERIFY(!SecretRedactor::isSecretHeader("anthropic-version"));
    }

    void redactionOfALargeResponseIsQuick()
    {
        SecretRedactor r;
        r.addSecret("sk-live-0123456789abcdef");
        std::string big;
        while (big.size() < (1u << 20))
            big += "__global__ void k(const float* x) { float v = x[threadIdx.x]; } // bearer of news\n";
        QElapsedTimer timer;
        timer.start();
        const auto out = r.redact(big);
        QCOMPARE(out.size(), big.size());
        QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    }

    // Issue 23: the key in every form a server can echo it in.
    void redactionCoversEveryFormOfAKey()
    {
        const std::string key = "sk-kl/units+form=00aa11bb22cc";
        SecretRedactor r;
        r.addSecret(key);
        r.addUrlCredentials("https://bob:s3cr%2Ft-pass-word@llm.example.com/v1");
        const auto encoded = [](const std::string& s) { return kl::protocol::base64Encode(s); };
        const std::vector<std::string> forms { key, "sk-kl%2Funits%2Bform%3D00aa11bb22cc",
            "sk-kl%2funits%2bform%3d00aa11bb22cc", "sk-kl\\/units+form=00aa11bb22cc", encoded("bob:s3cr/t-pass-word"),
            "s3cr/t-pass-word", "s3cr%2Ft-pass-word" };
        for (const auto& form : forms) {
            const auto out = r.redact("echo: " + form + " end");
            QVERIFY2(out.find(form) == std::string::npos && out.find("[redacted]") != std::string::npos,
                (form + " -> " + out).c_str());
        }
        // Base64 of a longer blob holding the key, at each alignment: no run of its characters that
        // encodes the key alone survives.
        for (const auto& blob : { encoded("x" + key + "yz"), encoded("xy" + key), encoded(key + "!") }) {
            const auto out = r.redact("blob " + blob + " end");
            QVERIFY2(out.find("[redacted]") != std::string::npos && out.find(blob.substr(4, 20)) == std::string::npos,
                (blob + " -> " + out).c_str());
        }
        // A secret-looking header's value: the credential after its scheme word too.
        SecretRedactor h;
        h.addSecret("Bearer tok-abcdefgh12345678");
        QCOMPARE(h.redact("got tok-abcdefgh12345678"), std::string("got [redacted]"));
    }

    void networkTextIsUtf8RedactedAndCapped()
    {
        SecretRedactor r;
        r.addSecret("sk-cap-0123456789");
        QCOMPARE(r.text("caf\xE9 sk-cap-0123456789"), std::string("caf\xEF\xBF\xBD [redacted]"));
        const std::string big = std::string(300 * 1024, 'a') + "sk-cap-0123456789";
        const auto out = r.text(big);
        QVERIFY(out.size() < kMaxNetworkTextBytes + 64);
        QVERIFY2(out.find("more bytes not kept]") != std::string::npos, out.substr(out.size() - 80).c_str());
        QVERIFY(out.find("sk-cap") == std::string::npos);
        // A key straddling the cap is not left in halves.
        const std::string straddling = std::string(kMaxNetworkTextBytes - 5, 'b') + "sk-cap-0123456789";
        QVERIFY(r.text(straddling).find("sk-cap") == std::string::npos);
        // 20 MB of token characters after "Bearer ": no recursion to overflow, and quick.
        QElapsedTimer timer;
        timer.start();
        const auto runaway = r.text("Authorization: Bearer " + std::string(20u << 20, 'Q'));
        QVERIFY(runaway.size() < kMaxNetworkTextBytes + 64);
        QVERIFY2(timer.elapsed() < 3000, qPrintable(QString::number(timer.elapsed())));
    }

    void aStreamNeverShowsHalfAKey()
    {
        const std::string key = "sk-stream-split-0123456789";
        SecretRedactor r;
        r.addSecret(key);
        const std::string text = "line one\nthe key is " + key + " and more text without an end " + key + " done";
        for (std::size_t size : { 1, 3, 7, 13 }) {
            RedactedStreams streams(r);
            std::string shown;
            for (std::size_t at = 0; at < text.size(); at += size) {
                const auto piece = streams.feed(0, text.substr(at, size));
                QVERIFY2(piece.find("sk-stream") == std::string::npos, piece.c_str());
                shown += piece;
            }
            for (const auto& [alternative, rest] : streams.finish())
                shown += rest;
            QCOMPARE(shown, r.redact(text));
        }
    }

    void tokenBudget()
    {
        TokenBudget budget(1000);
        QVERIFY(!budget.exhausted());
        budget.record({ 600, 300, true });
        QCOMPARE(budget.remaining(), 100LL);
        budget.record({ 50, 100, true });
        QVERIFY(budget.exhausted());
        QCOMPARE(budget.used(), 1050LL);
        QCOMPARE(budget.remaining(), 0LL);
    }

    // The names the store keeps for a role and a category read back as the same values.
    void rolesAndCategoriesKeepTheirNames()
    {
        for (auto role : { PromptRole::Planner, PromptRole::Coder, PromptRole::Debugger, PromptRole::Single,
                 PromptRole::FirstKernel })
            QVERIFY(parsePromptRole(promptRoleName(role)) == role);
        QCOMPARE(promptRoleName(PromptRole::FirstKernel), std::string_view("first_kernel"));
        QVERIFY(!parsePromptRole("propose")); // an older file's role is read by name, not as a role
        for (int c = 0; c <= static_cast<int>(ExchangeCategory::EmptyReply); ++c) {
            const auto category = static_cast<ExchangeCategory>(c);
            QVERIFY(exchangeCategoryName(category) != "unknown");
            QVERIFY(parseExchangeCategory(exchangeCategoryName(category)) == category);
        }
        QCOMPARE(exchangeCategoryName(ExchangeCategory::Http429), std::string_view("http-429"));
        QVERIFY(!parseExchangeCategory("no-such-category"));
    }

    void categoryNamesAreStableAndDistinct()
    {
        std::set<std::string_view> names;
        for (int i = 0; i <= static_cast<int>(ExchangeCategory::EmptyReply); ++i) {
            const auto c = static_cast<ExchangeCategory>(i);
            const auto name = exchangeCategoryName(c);
            QVERIFY(names.insert(name).second);
            QCOMPARE(parseExchangeCategory(name), std::optional(c));
        }
        QCOMPARE(exchangeCategoryName(ExchangeCategory::Http401), std::string_view("http-401"));
        QCOMPARE(exchangeCategoryName(ExchangeCategory::BudgetExhausted), std::string_view("budget-exhausted"));
    }
};

QTEST_APPLESS_MAIN(TestLlmUnits)
#include "test_llm_units.moc"
