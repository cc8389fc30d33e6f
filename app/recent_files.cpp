#include "app/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace kl::gui {

namespace {

const QString& settingsKey()
{
    static const QString key = QStringLiteral("recentProblems");
    return key;
}

} // namespace

QStringList RecentFiles::paths() const { return QSettings().value(settingsKey()).toStringList(); }

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = paths();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > maxCount)
        list.removeLast();
    QSettings().setValue(settingsKey(), list);
}

void RecentFiles::remove(const QString& path)
{
    QStringList list = paths();
    list.removeAll(QFileInfo(path).absoluteFilePath());
    QSettings().setValue(settingsKey(), list);
}

void RecentFiles::clear() { QSettings().remove(settingsKey()); }

} // namespace kl::gui
