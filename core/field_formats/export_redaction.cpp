#include "core/field_formats/export_redaction.h"

#include "core/exchange/exchange.h"

namespace kl::fieldformats {

ExportRedactor::ExportRedactor(const ExportSecrets& secrets)
{
    for (const auto& key : secrets.keys)
        m_redactor.addSecret(key);
}

std::string ExportRedactor::text(const std::string& text) const { return m_redactor.redact(validUtf8(text)); }

void ExportRedactor::redact(Json& value) const
{
    if (value.is_string()) {
        value = text(value.get<std::string>());
    } else if (value.is_array()) {
        for (auto& item : value)
            redact(item);
    } else if (value.is_object()) {
        Json out = Json::object();
        for (auto& [key, item] : value.items()) {
            redact(item);
            out[text(key)] = std::move(item);
        }
        value = std::move(out);
    }
}

} // namespace kl::fieldformats
