#pragma once
// A field of a stored JSON column, read leniently: rows written by older versions lack fields or hold
// them in another type, and a row that cannot be read whole still shows what it has. The one reader
// of the store's own columns (the runner's strict wire reader is protocol::JsonReader).
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

namespace kl::store {

// The value at `key` where `object` is an object holding it with T's JSON type (a string, a boolean,
// a number for arithmetic T); nullopt otherwise.
template <typename T> std::optional<T> storedField(const nlohmann::json& object, const char* key)
{
    if (!object.is_object())
        return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end())
        return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>)
        return it->is_string() ? std::optional<T>(it->template get<T>()) : std::nullopt;
    else if constexpr (std::is_same_v<T, bool>)
        return it->is_boolean() ? std::optional<T>(it->template get<T>()) : std::nullopt;
    else
        return it->is_number() ? std::optional<T>(it->template get<T>()) : std::nullopt;
}

// A finite number at `key`; NaN, infinities, other types and absent keys give nullopt.
inline std::optional<double> finiteField(const nlohmann::json& object, const char* key)
{
    const auto value = storedField<double>(object, key);
    return value && std::isfinite(*value) ? value : std::nullopt;
}

} // namespace kl::store
