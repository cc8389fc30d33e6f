#pragma once
// Reads fields of a JSON object and names the exact field when one is missing or has the wrong
// type: kl::Error("protocol.bad-message", "", "cases[2].buffers[0].rows", "must be an integer, got a string").
// Used by the protocol's from_json functions; not part of the messages' API.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl::protocol {

class JsonReader {
public:
    // `value` must outlive the reader. `path` is where it sits in the message ("" for the top).
    JsonReader(const nlohmann::json& value, std::string path);

    const nlohmann::json& value() const { return *m_value; }
    const std::string& path() const { return m_path; }
    std::string pathOf(const std::string& key) const;

    bool has(const std::string& key) const; // present and not null

    std::string string(const std::string& key) const;
    std::string stringOr(const std::string& key, std::string fallback) const;
    std::int64_t integer(const std::string& key) const;
    std::int64_t integerOr(const std::string& key, std::int64_t fallback) const;
    std::uint64_t unsignedOr(const std::string& key, std::uint64_t fallback) const;
    double number(const std::string& key) const;
    double numberOr(const std::string& key, double fallback) const;
    std::optional<double> optionalNumber(const std::string& key) const; // absent or null → nullopt
    bool boolean(const std::string& key) const;
    bool booleanOr(const std::string& key, bool fallback) const;

    JsonReader object(const std::string& key) const;
    std::optional<JsonReader> optionalObject(const std::string& key) const; // absent or null → nullopt
    std::vector<JsonReader> array(const std::string& key) const; // required
    std::vector<JsonReader> arrayOr(const std::string& key) const; // absent or null → empty

    // Conversions of this reader's own value (for array elements).
    std::string asString() const;
    std::int64_t asInteger() const;
    double asNumber() const;
    void requireObject() const;

    [[noreturn]] void fail(const std::string& message) const;
    [[noreturn]] void fail(const std::string& key, const std::string& message) const;

private:
    const nlohmann::json& at(const std::string& key) const; // required, present and not null
    JsonReader child(const std::string& key) const;

    const nlohmann::json* m_value;
    std::string m_path;
};

// "a string", "an array", ... for messages.
std::string jsonTypeName(const nlohmann::json& value);

} // namespace kl::protocol
