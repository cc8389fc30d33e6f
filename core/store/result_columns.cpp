// Encoding and decoding of the result row's JSON columns (result_columns.h).
#include "core/store/result_columns.h"

#include "core/model/error.h"
#include "core/protocol/pc_sampling_json.h"

namespace kl::store {

namespace {

// The column's part; none for null, and none with the reason added to `unreadable` for a stored text
// that is not the protocol's (its where: "timing_json.cases[0].label").
template <typename Part, typename Decode>
std::optional<Part> decoded(
    const nlohmann::json& column, const char* name, std::vector<Error>* unreadable, Decode decode)
{
    if (column.is_null())
        return std::nullopt;
    try {
        return decode(column);
    } catch (const Error& error) {
        if (unreadable)
            unreadable->emplace_back(
                error.category(), error.file(), std::string(name) + "." + error.where(), error.message());
    } catch (const std::exception& error) {
        if (unreadable)
            unreadable->emplace_back("store.unreadable-part", std::string(), name, error.what());
    }
    return std::nullopt;
}

template <typename Part>
std::optional<Part> decodedPart(const nlohmann::json& column, const char* name, std::vector<Error>* unreadable)
{
    return decoded<Part>(column, name, unreadable, [](const nlohmann::json& c) { return c.get<Part>(); });
}

} // namespace

nlohmann::json columnJson(const std::optional<lines::PcSampling>& sampling)
{
    return sampling ? protocol::pcSamplingJson(*sampling) : nlohmann::json(nullptr);
}

std::optional<protocol::Verification> verificationColumn(const nlohmann::json& column, std::vector<Error>* unreadable)
{
    return decodedPart<protocol::Verification>(column, "verification_json", unreadable);
}

std::optional<protocol::Timing> timingColumn(const nlohmann::json& column, std::vector<Error>* unreadable)
{
    return decodedPart<protocol::Timing>(column, "timing_json", unreadable);
}

std::optional<protocol::DeviceDescription> deviceColumn(const nlohmann::json& column, std::vector<Error>* unreadable)
{
    return decodedPart<protocol::DeviceDescription>(column, "device_json", unreadable);
}

std::optional<protocol::Profile> profileColumn(const nlohmann::json& column, std::vector<Error>* unreadable)
{
    return decodedPart<protocol::Profile>(column, "profile_json", unreadable);
}

std::optional<lines::PcSampling> samplingColumn(const nlohmann::json& column, std::vector<Error>* unreadable)
{
    return decoded<lines::PcSampling>(column, "pc_sampling_json", unreadable,
        [](const nlohmann::json& c) { return protocol::pcSamplingFromJson(c).value(); });
}

MetricKey metricKey(std::string_view name)
{
    // Kernel names and size labels hold no slash; a metric name may (none of CUPTI's do today).
    const auto first = name.find('/');
    const auto second = first == std::string_view::npos ? first : name.find('/', first + 1);
    if (second == std::string_view::npos)
        return { {}, {}, std::string(name) };
    return { std::string(name.substr(0, first)), std::string(name.substr(first + 1, second - first - 1)),
        std::string(name.substr(second + 1)) };
}

} // namespace kl::store
