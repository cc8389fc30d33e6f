#pragma once
// A rich-text page about the selected iteration (verification, findings, evidence): a
// QTextBrowser that follows the selection and renders the page its function writes.
#include "widgets/iteration_selection.h"

#include <QTextBrowser>

#include <functional>

namespace kl::gui {

class ReportView : public QTextBrowser, public IterationViewer {
    Q_OBJECT
public:
    using Page = std::function<QString(const IterationFocus& focus)>;

    ReportView(IterationSelection* selection, Page page, QString emptyText, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

private:
    Page m_page;
    QString m_emptyText;
};

// The pages (iteration_reports.cpp).
QString verificationPage(const IterationFocus& focus);
QString findingsPage(const IterationFocus& focus);
QString evidencePage(const IterationFocus& focus);

} // namespace kl::gui
