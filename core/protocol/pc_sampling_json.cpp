#include "core/protocol/pc_sampling_json.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace kl::protocol {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& message)
{
    throw Error("lines.bad-value", {}, where, message);
}

const nlohmann::json* field(const nlohmann::json& object, const char* key)
{
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const nlohmann::json& object, const char* key, const std::string& where)
{
    const nlohmann::json* value = field(object, key);
    if (!value)
        return {};
    if (!value->is_string())
        bad(where + key, "must be a string");
    return value->get<std::string>();
}

std::int64_t count(const nlohmann::json& value, const std::string& where)
{
    if (value.is_number_unsigned()
        && value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(value.get<std::uint64_t>());
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
        return value.get<std::int64_t>();
    bad(where, "must be a whole number of at least 0");
}

std::int64_t count(const nlohmann::json& object, const char* key, const std::string& where)
{
    const nlohmann::json* value = field(object, key);
    return value ? count(*value, where + key) : 0;
}

} // namespace

std::optional<lines::PcSampling> pcSamplingFromJson(const nlohmann::json& value)
{
    if (value.is_null())
        return std::nullopt;
    if (!value.is_object())
        bad("pc_sampling", "must be an object or null");
    lines::PcSampling s;
    const std::string status = text(value, "status", "pc_sampling.");
    if (status == "ok")
        s.status = lines::SamplingStatus::Ok;
    else if (status == "unavailable")
        s.status = lines::SamplingStatus::Unavailable;
    else if (status == "skipped")
        s.status = lines::SamplingStatus::Skipped;
    else
        bad("pc_sampling.status", "must be \"ok\", \"unavailable\" or \"skipped\", not \"" + status + "\"");
    s.reason = text(value, "reason", "pc_sampling.");
    s.detail = text(value, "detail", "pc_sampling.");
    s.caseLabel = text(value, "case", "pc_sampling.");
    s.periodLog2 = static_cast<int>(count(value, "period_log2", "pc_sampling."));
    s.runs = static_cast<int>(count(value, "runs", "pc_sampling."));
    s.totalSamples = count(value, "total_samples", "pc_sampling.");
    s.droppedSamples = count(value, "dropped_samples", "pc_sampling.");
    s.otherSamples = count(value, "other_samples", "pc_sampling.");
    if (const nlohmann::json* full = field(value, "hardware_buffer_full")) {
        if (!full->is_boolean())
            bad("pc_sampling.hardware_buffer_full", "must be true or false");
        s.hardwareBufferFull = full->get<bool>();
    }
    if (const nlohmann::json* ms = field(value, "ms")) {
        if (!ms->is_number() || !std::isfinite(ms->get<double>()) || ms->get<double>() < 0)
            bad("pc_sampling.ms", "must be a number of at least 0");
        s.milliseconds = ms->get<double>();
    }
    if (const nlohmann::json* pcs = field(value, "pcs")) {
        if (!pcs->is_array())
            bad("pc_sampling.pcs", "must be an array");
        for (std::size_t i = 0; i < pcs->size(); ++i) {
            const nlohmann::json& p = (*pcs)[i];
            const std::string where = "pc_sampling.pcs[" + std::to_string(i) + "].";
            if (!p.is_object())
                bad(where.substr(0, where.size() - 1), "must be an object");
            lines::PcSample pc;
            pc.function = text(p, "function", where);
            pc.pcOffset = static_cast<std::uint64_t>(count(p, "pc_offset", where));
            pc.file = text(p, "file", where);
            pc.line = static_cast<int>(std::min<std::int64_t>(count(p, "line", where), 1 << 30));
            if (const nlohmann::json* stalls = field(p, "stalls")) {
                if (!stalls->is_object())
                    bad(where + "stalls", "must be an object of sample counts");
                for (auto it = stalls->begin(); it != stalls->end(); ++it)
                    pc.stalls[lines::stallName(it.key())] += count(it.value(), where + "stalls." + it.key());
            }
            s.pcs.push_back(std::move(pc));
        }
    }
    return s;
}

nlohmann::json pcSamplingJson(const lines::PcSampling& s)
{
    nlohmann::json pcs = nlohmann::json::array();
    for (const lines::PcSample& pc : s.pcs)
        pcs.push_back({ { "function", pc.function }, { "pc_offset", pc.pcOffset }, { "file", pc.file },
            { "line", pc.line }, { "stalls", pc.stalls } });
    nlohmann::json j { { "status", lines::samplingStatusName(s.status) }, { "case", s.caseLabel },
        { "period_log2", s.periodLog2 }, { "runs", s.runs }, { "total_samples", s.totalSamples },
        { "dropped_samples", s.droppedSamples }, { "other_samples", s.otherSamples },
        { "hardware_buffer_full", s.hardwareBufferFull }, { "ms", s.milliseconds }, { "pcs", std::move(pcs) } };
    if (!s.reason.empty())
        j["reason"] = s.reason;
    if (!s.detail.empty())
        j["detail"] = s.detail;
    return j;
}

} // namespace kl::protocol
