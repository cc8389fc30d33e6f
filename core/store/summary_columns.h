#pragma once
// A session's summary_json as its SessionSummary: the only place where the stored summary's text is
// written or read. The text written is what the loop wrote before the summary was typed, byte for
// byte (no migration); `tune --json` prints it as stored.
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace kl::store {

nlohmann::json summaryColumn(const std::optional<SessionSummary>& summary); // null (SQL NULL) for none
// None for null or a text that is not an object; a figure of the wrong type reads as absent.
std::optional<SessionSummary> summaryFromColumn(const nlohmann::json& column);

} // namespace kl::store
