#pragma once
// Small pieces shared by the protocol's JSON code: the envelope ("v", "type", "id"), enum tables,
// numbers that must survive JSON. Internal to core/protocol.
#include "core/model/dtype.h"
#include "core/protocol/json_reader.h"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kl::protocol {

nlohmann::json envelope(std::string_view type, const std::string& id = {});
// Checks that `j` is an object with "v": 1 and the given "type"; returns a reader over it.
JsonReader openEnvelope(const nlohmann::json& j, std::string_view type);
void checkVersion(const JsonReader& r);

DType readDType(const JsonReader& r, const std::string& key);

// A whole number is written as an integer (134234112, not 134234112.0).
nlohmann::json wholeOrReal(double value);
// NaN and ±Inf, which JSON lacks, as "nan", "inf", "-inf"; finite values as numbers.
nlohmann::json anyNumber(double value);
double readAnyNumber(const JsonReader& r);

std::string shorten(std::string_view text, std::size_t limit = 80);

template <class E, std::size_t N>
std::string_view nameOf(const std::array<std::pair<E, std::string_view>, N>& table, E value)
{
    for (const auto& [e, name] : table)
        if (e == value)
            return name;
    return table[0].second;
}

template <class E, std::size_t N>
std::optional<E> valueOf(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name)
{
    for (const auto& [e, n] : table)
        if (n == name)
            return e;
    return std::nullopt;
}

template <class E, std::size_t N>
E readEnum(const JsonReader& r, const std::string& key, const std::array<std::pair<E, std::string_view>, N>& table)
{
    const auto text = r.string(key);
    if (const auto e = valueOf(table, text))
        return *e;
    std::string allowed;
    for (const auto& [e, name] : table)
        allowed += (allowed.empty() ? "" : ", ") + std::string(name);
    r.fail(key, "\"" + text + "\" is not one of " + allowed);
}

} // namespace kl::protocol
