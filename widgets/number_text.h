#pragma once
// Numbers as the review panels print them: fixed decimals, "–" for a value that was not measured,
// the same rounding as `kernelloop-cli history` and `show`.
#include <QDateTime>
#include <QString>

#include <cstdint>
#include <optional>

namespace kl::gui {

inline QString fixedText(const std::optional<double>& value, int decimals, const QString& suffix = {})
{
    if (!value)
        return QStringLiteral("–");
    return QString::number(*value, 'f', decimals) + suffix;
}

// "2026-12-01 14:03", UTC as the CLI prints it.
inline QString utcText(std::int64_t ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

} // namespace kl::gui
