#include "widgets/pool_status_panel.h"

#include "widgets/string_conversion.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kl::gui {

namespace {
enum Column { Endpoint, Device, State, Jobs, Faults, LastError, ColumnCount };

QTableWidgetItem* item(const QString& text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto* i = new QTableWidgetItem(text);
    i->setTextAlignment(align);
    i->setToolTip(text);
    i->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return i;
}
} // namespace

PoolStatusPanel::PoolStatusPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_table(new QTableWidget(0, ColumnCount, this))
{
    m_table->setHorizontalHeaderLabels({ tr("Endpoint"), tr("Device"), tr("State"),
        //: pool status: jobs the runner finished
        tr("Jobs"), tr("Faults"), tr("Last error") });
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(LastError, QHeaderView::Stretch);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table);
    setStatus({});
}

void PoolStatusPanel::setStatus(const std::vector<pool::RunnerStatus>& runners)
{
    m_table->setRowCount(int(runners.size()));
    int usable = 0, jobs = 0;
    for (int row = 0; row < int(runners.size()); ++row) {
        const auto& r = runners[std::size_t(row)];
        const bool works = r.state == pool::RunnerState::Idle || r.state == pool::RunnerState::Busy;
        usable += works ? 1 : 0;
        jobs += r.jobsDone;
        const auto right = Qt::AlignRight | Qt::AlignVCenter;
        m_table->setItem(row, Endpoint, item(toQString(r.endpoint)));
        m_table->setItem(row, Device, item(r.device.empty() ? tr("(not described yet)") : toQString(r.device)));
        m_table->setItem(row, State, item(QString::fromLatin1(pool::runnerStateName(r.state))));
        m_table->setItem(row, Jobs, item(QString::number(r.jobsDone), right));
        m_table->setItem(row, Faults, item(QString::number(r.faults), right));
        m_table->setItem(row, LastError, item(toQString(r.lastError)));
        const bool setAside = r.state == pool::RunnerState::Quarantined || r.state == pool::RunnerState::OtherModel
            || r.state == pool::RunnerState::NoDevice;
        if (setAside)
            for (int c = 0; c < ColumnCount; ++c)
                m_table->item(row, c)->setBackground(QColor(255, 228, 225));
    }
    m_summary->setText(runners.empty()
            ? tr("No runner pool: the session has not started.")
            : tr("%1 of %2 runners usable, %3 jobs done").arg(usable).arg(runners.size()).arg(jobs));
}

QString PoolStatusPanel::summaryText() const { return m_summary->text(); }

} // namespace kl::gui
