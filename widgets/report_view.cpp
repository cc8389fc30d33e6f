#include "widgets/report_view.h"

namespace kl::gui {

ReportView::ReportView(IterationSelection* selection, Page page, QString emptyText, QWidget* parent)
    : QTextBrowser(parent)
    , m_page(std::move(page))
    , m_emptyText(std::move(emptyText))
{
    setOpenLinks(false);
    follow(selection, this, this);
}

void ReportView::showSession(const std::shared_ptr<const SessionView>&) { }

void ReportView::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    if (!focus || !focus->detail) {
        setHtml(QStringLiteral("<p><i>") + m_emptyText.toHtmlEscaped() + QStringLiteral("</i></p>"));
        return;
    }
    setHtml(m_page(*focus));
}

} // namespace kl::gui
