#include "widgets/fitting_tab_widget.h"

#include <QEvent>
#include <QProxyStyle>
#include <QTabBar>

#include <algorithm>

namespace kl::gui {

// The application's style but for the padding around a tab's label: the style measures a tab and
// places its label with this one metric, so a smaller value narrows the tab without cutting its text.
class FittingTabWidget::Spacing : public QProxyStyle {
public:
    int padding = -1; // -1: the style's own

    int pixelMetric(PixelMetric metric, const QStyleOption* option, const QWidget* widget) const override
    {
        if (metric == PM_TabBarTabHSpace && padding >= 0)
            return padding;
        return QProxyStyle::pixelMetric(metric, option, widget);
    }
};

// A tab bar that says what a tab measures at the padding in force.
class FittingTabWidget::Bar : public QTabBar {
public:
    using QTabBar::QTabBar;
    using QTabBar::tabSizeHint;
};

FittingTabWidget::FittingTabWidget(QWidget* parent)
    : QTabWidget(parent)
    , m_spacing(new Spacing)
    , m_bar(new Bar(this))
{
    m_spacing->setParent(this);
    m_bar->setStyle(m_spacing);
    setTabBar(m_bar);
}

int FittingTabWidget::tabPadding() const { return m_spacing->pixelMetric(QStyle::PM_TabBarTabHSpace, nullptr, m_bar); }

void FittingTabWidget::fitTabs()
{
    Bar* bar = m_bar;
    const int before = m_spacing->padding;
    m_spacing->padding = -1;
    const int full = m_spacing->pixelMetric(QStyle::PM_TabBarTabHSpace, nullptr, bar);
    int needed = 0;
    for (int i = 0; i < count(); ++i)
        needed += bar->tabSizeHint(i).width();
    int padding = full;
    if (needed > width() && count() > 0) {
        const int over = needed - width();
        padding = std::max(std::min(kLeastPadding, full), full - (over + count() - 1) / count());
    }
    m_spacing->padding = padding == full ? -1 : padding;
    if (m_spacing->padding != before)
        bar->setIconSize(bar->iconSize()); // the bar measures its tabs anew
}

void FittingTabWidget::resizeEvent(QResizeEvent* event)
{
    fitTabs(); // before the base lays the bar out at the new width
    QTabWidget::resizeEvent(event);
}

void FittingTabWidget::tabInserted(int index)
{
    QTabWidget::tabInserted(index);
    fitTabs();
}

void FittingTabWidget::tabRemoved(int index)
{
    QTabWidget::tabRemoved(index);
    fitTabs();
}

void FittingTabWidget::changeEvent(QEvent* event)
{
    QTabWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        fitTabs();
}

} // namespace kl::gui
