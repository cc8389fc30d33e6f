#include "app/campaign_report_window.h"

#include "core/campaign/campaign_report.h"
#include "core/model/error.h"
#include "core/store/campaign_store.h"
#include "core/store/store.h"
#include "widgets/campaign_view.h"
#include "widgets/string_conversion.h"

namespace kl::gui {

CampaignView* showCampaignReport(
    const QString& storePath, QWidget* parent, std::function<void(qint64)> openSession, QString* error)
{
    std::shared_ptr<const campaign::CampaignReport> report;
    try {
        const auto path = toStdString(storePath);
        const auto campaigns = store::CampaignStore::open(path, { .readOnly = true });
        const auto all = campaigns.list();
        if (all.empty()) {
            *error = QObject::tr("%1 holds no campaign (kernelloop-cli campaign runs one)").arg(storePath);
            return nullptr;
        }
        const auto sessions = store::Store::open(path, { .readOnly = true });
        report = std::make_shared<const campaign::CampaignReport>(
            campaign::readReport(campaigns, sessions, all.front().id));
    } catch (const Error& e) {
        *error = toQString("[" + e.category() + "] " + e.message());
        return nullptr;
    }
    auto* view = new CampaignView(parent);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->setWindowTitle(QObject::tr("Campaign %1").arg(toQString(report->campaign.name)));
    view->setReport(report);
    QObject::connect(view, &CampaignView::openSessionRequested, view, std::move(openSession));
    view->resize(1000, 480);
    view->show();
    return view;
}

} // namespace kl::gui
