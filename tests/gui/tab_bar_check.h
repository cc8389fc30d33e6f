#pragma once
// Whether a tab bar shows every label whole, for the tests of screens as people have them.
#include <QStringList>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>
#include <QToolButton>

namespace kl::test {

// Each tab of the bar whose label is not drawn whole inside the visible bar, and why; empty when all are.
inline QStringList cutTabs(QTabWidget* tabs)
{
    QTest::qWait(50); // the bar lays out on the event loop
    QTabBar* bar = tabs->tabBar();
    QStringList cut;
    for (const QToolButton* arrow : bar->findChildren<QToolButton*>())
        if (arrow->isVisible())
            cut << QStringLiteral("the bar scrolls (%1 px wide)").arg(bar->width());
    for (int i = 0; i < bar->count(); ++i) {
        const QRect rect = bar->tabRect(i);
        const int label = bar->fontMetrics().horizontalAdvance(bar->tabText(i));
        if (rect.left() < 0 || rect.right() >= bar->width() || rect.width() < label)
            cut << QStringLiteral("\"%1\" at %2..%3 (label %4 px) in a %5 px bar")
                       .arg(bar->tabText(i))
                       .arg(rect.left())
                       .arg(rect.right())
                       .arg(label)
                       .arg(bar->width());
    }
    return cut;
}

} // namespace kl::test
