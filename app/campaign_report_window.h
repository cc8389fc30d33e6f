#pragma once
// The Review menu's Campaign Report: the newest campaign of the open store in a window of its own
// (widgets/campaign_view.h); a double-click on a problem opens its session in the review workspace.
#include <QString>

#include <functional>

class QWidget;

namespace kl::gui {

class CampaignView;

// Reads the report from the store at `storePath` (read-only) and shows it in a new window owned by
// `parent`. Null with `error` set when the store cannot be read or holds no campaign.
CampaignView* showCampaignReport(
    const QString& storePath, QWidget* parent, std::function<void(qint64)> openSession, QString* error);

} // namespace kl::gui
