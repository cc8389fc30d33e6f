#pragma once
// Small pieces of the rich text the review panels render (QTextBrowser's HTML subset).
#include "widgets/string_conversion.h"

#include <QString>

#include <string>

namespace kl::gui {

inline QString html(const std::string& text) { return toQString(text).toHtmlEscaped(); }

// A two-column key/value table row.
inline QString htmlRow(const QString& key, const QString& value)
{
    return QStringLiteral("<tr><td style=\"padding-right:12px; color:#555;\">") + key + QStringLiteral("</td><td>")
        + value + QStringLiteral("</td></tr>");
}

inline QString htmlColored(const QString& text, const QString& color)
{
    return QStringLiteral("<span style=\"color:") + color + QStringLiteral(";\">") + text + QStringLiteral("</span>");
}

} // namespace kl::gui
