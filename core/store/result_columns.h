#pragma once
// The result row's JSON columns as the typed values of ResultRecord: the only place where a stored
// verification, timing, device, profile or PC-sampling text is encoded or decoded, and where a
// metric's stored name is split into its kernel, size and counter. The text written is the
// protocol's own JSON of each part, as it always was (no migration). Internal to core/store.
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::store {

// A part as its column's JSON; null (SQL NULL) for none.
template <typename Part> nlohmann::json columnJson(const std::optional<Part>& part)
{
    return part ? nlohmann::json(*part) : nlohmann::json(nullptr);
}
nlohmann::json columnJson(const std::optional<lines::PcSampling>& sampling);

// A stored column as its part; none when null, or when not readable as protocol v1: then the reason
// joins `unreadable` (where given) and the rest of the iteration still reads.
std::optional<protocol::Verification> verificationColumn(
    const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);
std::optional<protocol::Timing> timingColumn(const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);
std::optional<protocol::DeviceDescription> deviceColumn(
    const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);
std::optional<protocol::Profile> profileColumn(const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);
std::optional<lines::PcSampling> samplingColumn(const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);

// A stored metrics.name (metricName's text) as its key; a name without two slashes is a bare metric.
MetricKey metricKey(std::string_view name);

} // namespace kl::store
