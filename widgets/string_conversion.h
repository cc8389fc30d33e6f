#pragma once
// The core speaks std::string (UTF-8); Qt speaks QString. One place converts, so that no file
// needs the casts QT_NO_CAST_FROM_ASCII forbids.
#include <QString>

#include <string>

namespace kl::gui {

inline QString toQString(const std::string& text) { return QString::fromStdString(text); }

inline std::string toStdString(const QString& text) { return text.toStdString(); }

} // namespace kl::gui
