#pragma once
// A campaign's report in the workbench: fast_p and geometric means over the campaign above a table of
// its problems (CampaignTableModel); a double-click on a problem asks to open its session, where every
// figure of the row comes from. The distribution plot saves as PNG or SVG (core writes the SVG).
#include "core/campaign/campaign_report.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTableView;

namespace kl::gui {

class CampaignTableModel;

class CampaignView : public QWidget {
    Q_OBJECT
public:
    explicit CampaignView(QWidget* parent = nullptr);

    void setReport(std::shared_ptr<const campaign::CampaignReport> report);
    // Writes the distribution plot: PNG (rendered here) for a .png file, else SVG. Empty or the error.
    QString savePlot(const QString& file) const;

    CampaignTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QLabel* summary() const { return m_summary; }

signals:
    void openSessionRequested(qint64 sessionId);

private:
    CampaignTableModel* m_model;
    QLabel* m_summary;
    QTableView* m_view;
};

} // namespace kl::gui
