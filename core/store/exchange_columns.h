#pragma once
// An llm_exchanges row's JSON columns as an ExchangeRecord's typed fields: the only place where an
// exchange's request and usage text is written or read. The text written is what the loop wrote
// before the exchange was typed, byte for byte (no migration); `history --json` prints it as stored.
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kl::store {

// request_json: the body as sent, credential-looking fields scrubbed; "null" for an exchange that
// sent nothing (cancelled before its request was made).
std::string requestColumn(const Exchange& exchange);
// usage_json: the tokens as the provider reported them, and what the engineer needs to judge the
// exchange: served model, URL, streamed, attempts, HTTP status, timing, message, start and the
// first choice's finish reason (only when there are choices).
nlohmann::json usageColumn(const Exchange& exchange);

// The columns of one row, as read.
struct ExchangeColumns {
    std::string role;
    std::string provider;
    std::string model;
    std::string request; // request_json's text
    std::string response;
    nlohmann::json usage; // null for SQL NULL
    std::optional<double> latencyMs;
    std::string category;
    std::int64_t startedMs = 0;
};
ExchangeRecord exchangeFromColumns(const ExchangeColumns& columns);

} // namespace kl::store
