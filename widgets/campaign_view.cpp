#include "widgets/campaign_view.h"

#include "core/campaign/report_export.h"
#include "widgets/campaign_table_model.h"
#include "widgets/number_text.h"
#include "widgets/string_conversion.h"

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSvgRenderer>
#include <QTableView>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

QString shareText(const campaign::FastP& f, int timed, int done)
{
    if (timed == 0 && done > 0)
        return CampaignView::tr("– (not timed)");
    return QStringLiteral("%1/%2 (%3%)").arg(f.fast).arg(f.of).arg(100.0 * f.share(), 0, 'f', 1);
}

QString summaryText(const campaign::CampaignReport& r)
{
    const auto& c = r.figures;
    const QString x = QStringLiteral("x");
    return CampaignView::tr("<b>%1</b>: %2%3 — %4 problems, %5 done, %6 failed<br>"
                            "fast<sub>1.0</sub>: %7 vs eager, %8 vs torch.compile; "
                            "fast<sub>1.2</sub>: %9 vs eager, %10 vs torch.compile<br>"
                            "geometric mean: %11 vs eager (%12 problems), %13 vs torch.compile (%14)")
        .arg(toQString(r.campaign.name).toHtmlEscaped(), toQString(r.campaign.status),
            r.device.empty() ? QString() : QStringLiteral(" on ") + toQString(r.device).toHtmlEscaped())
        .arg(c.problems)
        .arg(c.done)
        .arg(c.failed)
        .arg(shareText(c.fastEager1, c.withEager, c.done), shareText(c.fastCompile1, c.withCompile, c.done),
            shareText(c.fastEager12, c.withEager, c.done), shareText(c.fastCompile12, c.withCompile, c.done),
            fixedText(c.geomeanVsEager, 2, x))
        .arg(c.withEager)
        .arg(fixedText(c.geomeanVsCompile, 2, x))
        .arg(c.withCompile);
}

} // namespace

CampaignView::CampaignView(QWidget* parent)
    : QWidget(parent)
    , m_model(new CampaignTableModel(this))
    , m_summary(new QLabel(this))
    , m_view(new QTableView(this))
{
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (const auto session = m_model->sessionAt(index.row()))
            emit openSessionRequested(session);
    });
    auto* save = new QPushButton(tr("Save Plot…"), this);
    connect(save, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getSaveFileName(
            this, tr("Save Plot"), QStringLiteral("campaign.png"), tr("PNG images (*.png);;SVG images (*.svg)"));
        if (!file.isEmpty())
            savePlot(file);
    });
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(save);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_view, 1);
    layout->addLayout(buttons);
}

void CampaignView::setReport(std::shared_ptr<const campaign::CampaignReport> report)
{
    m_summary->setText(report ? summaryText(*report) : QString());
    m_model->setReport(std::move(report));
    m_view->resizeColumnsToContents();
}

QString CampaignView::savePlot(const QString& file) const
{
    const auto& report = m_model->report();
    if (!report)
        return tr("no campaign is shown");
    const QByteArray svg = QByteArray::fromStdString(campaign::distributionSvg(*report));
    QFile out(file);
    if (!file.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) {
        if (!out.open(QIODevice::WriteOnly) || out.write(svg) != svg.size())
            return tr("cannot write %1").arg(file);
        return {};
    }
    QSvgRenderer renderer(svg);
    QImage image(renderer.defaultSize() * 2, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    renderer.render(&painter);
    painter.end();
    return image.save(file, "PNG") ? QString() : tr("cannot write %1").arg(file);
}

} // namespace kl::gui
