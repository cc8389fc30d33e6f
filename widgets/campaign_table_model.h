#pragma once
// A campaign's problems, one row each, as its report has them (core/campaign/campaign_report.h): the
// best kernel's figures, or the category of what failed. Each row knows its session, which the view
// opens in the review workspace.
#include "core/campaign/campaign_report.h"

#include <QAbstractTableModel>

#include <memory>

namespace kl::gui {

class CampaignTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        ProblemColumn,
        VerdictColumn,
        BestUsColumn,
        SpeedupColumn,
        VsEagerColumn,
        VsCompileColumn,
        PctOfSolColumn,
        BoundColumn,
        CandidatesColumn,
        SecondsColumn,
        SessionColumn,
        ColumnCount
    };
    enum Role { SessionIdRole = Qt::UserRole + 1 };

    explicit CampaignTableModel(QObject* parent = nullptr);

    void setReport(std::shared_ptr<const campaign::CampaignReport> report);
    const std::shared_ptr<const campaign::CampaignReport>& report() const { return m_report; }
    std::int64_t sessionAt(int row) const; // 0: the problem has no session

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const campaign::CampaignReport> m_report;
};

} // namespace kl::gui
