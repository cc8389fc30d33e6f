#include "core/protocol/json_reader.h"

#include "core/model/error.h"

#include <cmath>
#include <limits>

namespace kl::protocol {

namespace {
const char* kCategory = "protocol.bad-message";

// Whole numbers written as floating point (1.0) are accepted as integers.
std::optional<std::int64_t> toInteger(const nlohmann::json& v)
{
    if (v.is_number_integer() && !v.is_number_unsigned())
        return v.get<std::int64_t>();
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
            return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
}
} // namespace

std::string jsonTypeName(const nlohmann::json& value)
{
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
        return "an integer";
    case nlohmann::json::value_t::number_float:
        return "a number";
    default:
        return "something else";
    }
}

JsonReader::JsonReader(const nlohmann::json& value, std::string path)
    : m_value(&value)
    , m_path(std::move(path))
{
}

std::string JsonReader::pathOf(const std::string& key) const
{
    if (key.empty())
        return m_path;
    if (key.front() == '[')
        return m_path + key;
    return m_path.empty() ? key : m_path + "." + key;
}

void JsonReader::fail(const std::string& message) const
{
    throw Error(kCategory, "", m_path.empty() ? "message" : m_path, message);
}

void JsonReader::fail(const std::string& key, const std::string& message) const
{
    throw Error(kCategory, "", pathOf(key), message);
}

void JsonReader::requireObject() const
{
    if (!m_value->is_object())
        fail("must be an object, got " + jsonTypeName(*m_value));
}

bool JsonReader::has(const std::string& key) const
{
    if (!m_value->is_object())
        return false;
    const auto it = m_value->find(key);
    return it != m_value->end() && !it->is_null();
}

const nlohmann::json& JsonReader::at(const std::string& key) const
{
    requireObject();
    const auto it = m_value->find(key);
    if (it == m_value->end() || it->is_null())
        fail(key, "missing required field");
    return *it;
}

JsonReader JsonReader::child(const std::string& key) const { return JsonReader(at(key), pathOf(key)); }

std::string JsonReader::asString() const
{
    if (!m_value->is_string())
        fail("must be a string, got " + jsonTypeName(*m_value));
    return m_value->get<std::string>();
}

std::int64_t JsonReader::asInteger() const
{
    const auto i = toInteger(*m_value);
    if (!i)
        fail("must be an integer, got " + (m_value->is_number() ? m_value->dump() : jsonTypeName(*m_value)));
    return *i;
}

double JsonReader::asNumber() const
{
    if (!m_value->is_number())
        fail("must be a number, got " + jsonTypeName(*m_value));
    return m_value->get<double>();
}

std::string JsonReader::string(const std::string& key) const { return child(key).asString(); }

std::string JsonReader::stringOr(const std::string& key, std::string fallback) const
{
    return has(key) ? string(key) : fallback;
}

std::int64_t JsonReader::integer(const std::string& key) const { return child(key).asInteger(); }

std::int64_t JsonReader::integerOr(const std::string& key, std::int64_t fallback) const
{
    return has(key) ? integer(key) : fallback;
}

std::uint64_t JsonReader::unsignedOr(const std::string& key, std::uint64_t fallback) const
{
    if (!has(key))
        return fallback;
    const auto& v = at(key);
    if (v.is_number_unsigned())
        return v.get<std::uint64_t>();
    const auto i = child(key).asInteger();
    if (i < 0)
        fail(key, "must not be negative");
    return static_cast<std::uint64_t>(i);
}

double JsonReader::number(const std::string& key) const { return child(key).asNumber(); }

double JsonReader::numberOr(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }

std::optional<double> JsonReader::optionalNumber(const std::string& key) const
{
    if (!has(key))
        return std::nullopt;
    return number(key);
}

bool JsonReader::boolean(const std::string& key) const
{
    const auto& v = at(key);
    if (!v.is_boolean())
        fail(key, "must be true or false, got " + jsonTypeName(v));
    return v.get<bool>();
}

bool JsonReader::booleanOr(const std::string& key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

JsonReader JsonReader::object(const std::string& key) const
{
    auto r = child(key);
    r.requireObject();
    return r;
}

std::optional<JsonReader> JsonReader::optionalObject(const std::string& key) const
{
    if (!has(key))
        return std::nullopt;
    return object(key);
}

std::vector<JsonReader> JsonReader::array(const std::string& key) const
{
    const auto& v = at(key);
    if (!v.is_array())
        fail(key, "must be an array, got " + jsonTypeName(v));
    std::vector<JsonReader> items;
    items.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        items.emplace_back(v[i], pathOf(key) + "[" + std::to_string(i) + "]");
    return items;
}

std::vector<JsonReader> JsonReader::arrayOr(const std::string& key) const
{
    return has(key) ? array(key) : std::vector<JsonReader> {};
}

} // namespace kl::protocol
