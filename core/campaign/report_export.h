#pragma once
// A campaign's report as text: the CLI's table, Markdown (docs/measurements.md, the README), CSV and JSON
// for spreadsheets and notebooks, and the distribution of speedups as an SVG plot (the GUI saves PNG).
// Every problem's row names its session and iteration, where its figures come from.
#include "core/campaign/campaign_report.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kl::campaign {

std::string reportTable(const CampaignReport& report);
std::string reportMarkdown(const CampaignReport& report);
std::string reportCsv(const CampaignReport& report);
nlohmann::json reportJson(const CampaignReport& report);
// Each problem's speedup over torch.compile (over eager where torch.compile was not timed), sorted, on a
// log scale with the fast_1 and fast_1.2 lines; failed problems are marked at the foot.
std::string distributionSvg(const CampaignReport& report);

} // namespace kl::campaign
