#pragma once
// A tab widget whose tabs give up their side padding, down to a few pixels, before the bar scrolls:
// the review inspector's ten tabs read whole in the right half of a 1366-px window (550-680 px),
// where the style's full padding put "Code Diff" and "Roofline" behind scroll arrows. A wide window
// keeps the style's padding; a pane too narrow even then scrolls as a plain tab bar does.
#include <QTabWidget>

class QProxyStyle;

namespace kl::gui {

class FittingTabWidget : public QTabWidget {
    Q_OBJECT
public:
    explicit FittingTabWidget(QWidget* parent = nullptr);

    // The horizontal space each tab now keeps around its label (the style's own when there is room).
    int tabPadding() const;
    // The least padding a tab keeps before the bar scrolls instead.
    static constexpr int kLeastPadding = 8;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void tabInserted(int index) override;
    void tabRemoved(int index) override;
    void changeEvent(QEvent* event) override;

private:
    void fitTabs();

    class Spacing;
    class Bar;
    Spacing* m_spacing;
    Bar* m_bar;
};

} // namespace kl::gui
