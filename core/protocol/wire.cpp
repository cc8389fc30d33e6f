#include "core/protocol/wire.h"

#include "core/protocol/messages.h"

#include <cmath>
#include <limits>

namespace kl::protocol {

nlohmann::json envelope(std::string_view type, const std::string& id)
{
    nlohmann::json j { { "v", kProtocolVersion }, { "type", type } };
    if (!id.empty())
        j["id"] = id;
    return j;
}

void checkVersion(const JsonReader& r)
{
    if (!r.value().contains("v"))
        r.fail("v", "missing protocol version (expected \"v\": " + std::to_string(kProtocolVersion) + ")");
    const JsonReader v(r.value().at("v"), "v");
    if (v.asInteger() != kProtocolVersion)
        v.fail("protocol version " + r.value().at("v").dump() + " is not supported (this side speaks "
            + std::to_string(kProtocolVersion) + ")");
}

JsonReader openEnvelope(const nlohmann::json& j, std::string_view type)
{
    JsonReader r(j, "");
    r.requireObject();
    checkVersion(r);
    const auto actual = r.string("type");
    if (actual != type)
        r.fail("type", "expected a \"" + std::string(type) + "\" message, got \"" + actual + "\"");
    return r;
}

DType readDType(const JsonReader& r, const std::string& key)
{
    const auto text = r.string(key);
    if (const auto t = parseDType(text))
        return *t;
    r.fail(key, "\"" + text + "\" is not a dtype (f16, bf16, f32, f64, i8, u8, i32, i64)");
}

nlohmann::json wholeOrReal(double value)
{
    if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15)
        return static_cast<std::int64_t>(value);
    return value;
}

nlohmann::json anyNumber(double value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    return value;
}

double readAnyNumber(const JsonReader& r)
{
    if (r.value().is_string()) {
        const auto s = r.value().get<std::string>();
        if (s == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
        r.fail("\"" + s + "\" is not a number, \"nan\", \"inf\" or \"-inf\"");
    }
    if (r.value().is_null()) // what a writer that knows no better makes of NaN
        return std::numeric_limits<double>::quiet_NaN();
    return r.asNumber();
}

std::string shorten(std::string_view text, std::size_t limit)
{
    std::string out;
    for (const char c : text.substr(0, limit))
        out += (static_cast<unsigned char>(c) < 0x20 || c == '"') ? '?' : c;
    if (text.size() > limit)
        out += "…";
    return out;
}

} // namespace kl::protocol
