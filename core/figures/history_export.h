#pragma once
// A session's history as a file: the `history` columns, one row per iteration, as CSV (RFC 4180)
// or JSON, for spreadsheets and notebooks.
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kl::figures {

std::string historyCsv(const std::vector<store::IterationRow>& rows);
nlohmann::json historyJson(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows);

} // namespace kl::figures
