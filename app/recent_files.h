#pragma once
// The problem files opened lately, newest first, kept in QSettings.
#include <QStringList>

namespace kl::gui {

class RecentFiles {
public:
    static constexpr int maxCount = 10;

    QStringList paths() const;
    void add(const QString& path); // moves it to the front
    void remove(const QString& path);
    void clear();
};

} // namespace kl::gui
