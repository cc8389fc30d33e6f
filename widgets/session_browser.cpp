#include "widgets/session_browser.h"

#include "widgets/session_list_model.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace kl::gui {

SessionBrowser::SessionBrowser(QWidget* parent)
    : QWidget(parent)
    , m_model(new SessionListModel(this))
    , m_filter(new SessionFilterModel(this))
    , m_filterEdit(new QLineEdit(this))
    , m_view(new QTableView(this))
    , m_empty(new QLabel(this))
    , m_stack(new QStackedWidget(this))
    , m_open(new QPushButton(tr("&Open"), this))
    , m_export(new QPushButton(tr("E&xport…"), this))
    , m_delete(new QPushButton(tr("&Delete…"), this))
{
    m_filter->setSourceModel(m_model);
    //: placeholder of the session filter box
    m_filterEdit->setPlaceholderText(tr("Filter sessions (problem, device, proposer, label…)"));
    m_filterEdit->setClearButtonEnabled(true);
    connect(m_filterEdit, &QLineEdit::textChanged, m_filter, &SessionFilterModel::setFilterWords);

    m_view->setModel(m_filter);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(SessionListModel::StartedColumn, Qt::DescendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    QHeaderView* header = m_view->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The browser shares the left pane with the iteration table: every column must fit there at the
    // default window size. Long cells elide (their tooltip has the whole text); the device and the
    // best % of copy are off by default (the filter still matches the device; the iteration table
    // and the inspector show both) and come back from the header's menu.
    header->setMaximumSectionSize(120);
    // The label takes what is left (stretchLastSection would keep it at the default section size).
    header->setSectionResizeMode(SessionListModel::LabelColumn, QHeaderView::Stretch);
    m_view->setTextElideMode(Qt::ElideMiddle);
    header->setSectionHidden(SessionListModel::DeviceColumn, true);
    header->setSectionHidden(SessionListModel::BestPctOfCopyColumn, true);
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header, &QHeaderView::customContextMenuRequested, this, [this, header](const QPoint& at) {
        QMenu menu;
        for (int column = 0; column < m_model->columnCount(); ++column) {
            QAction* action = menu.addAction(m_model->headerData(column, Qt::Horizontal).toString());
            action->setCheckable(true);
            action->setChecked(!header->isSectionHidden(column));
            connect(action, &QAction::toggled, header,
                [header, column](bool shown) { header->setSectionHidden(column, !shown); });
        }
        menu.exec(header->mapToGlobal(at));
    });

    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setText(tr("<p>No session is open.</p><p>Open a store or a recorded <tt>.klsession</tt> "
                        "(File ▸ Open, or drop the file here), or run one: Session ▸ New Session "
                        "(Ctrl+Shift+N).</p>"));
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_view);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_open);
    buttons->addWidget(m_export);
    buttons->addWidget(m_delete);
    buttons->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_filterEdit);
    layout->addWidget(m_stack, 1);
    layout->addLayout(buttons);

    connect(m_open, &QPushButton::clicked, this, [this] {
        if (currentSession())
            emit openRequested(currentSession());
    });
    connect(m_view, &QTableView::activated, this, [this] {
        if (currentSession())
            emit openRequested(currentSession());
    });
    connect(m_export, &QPushButton::clicked, this, [this] {
        if (currentSession())
            emit exportRequested(currentSession());
    });
    connect(m_delete, &QPushButton::clicked, this, [this] {
        if (currentSession())
            emit deleteRequested(currentSession());
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SessionBrowser::updateActions);
    setDeleteAllowed(false);
    updateActions();
}

void SessionBrowser::setSessions(std::vector<store::SessionRow> sessions)
{
    m_model->setSessions(std::move(sessions));
    m_stack->setCurrentWidget(m_model->rowCount() > 0 ? static_cast<QWidget*>(m_view) : m_empty);
    if (m_model->rowCount() == 0)
        m_empty->setText(tr("<p>This store holds no session yet.</p><p>Run one: Session ▸ New Session "
                            "(Ctrl+Shift+N), or open a recorded <tt>.klsession</tt>.</p>"));
    updateActions();
}

void SessionBrowser::setDeleteAllowed(bool allowed, const QString& whyNot)
{
    m_deleteAllowed = allowed;
    m_delete->setToolTip(allowed ? tr("Delete the selected session from the store") : whyNot);
    updateActions();
}

void SessionBrowser::setCurrentSession(std::int64_t sessionId)
{
    const int row = m_model->rowOf(sessionId);
    if (row < 0)
        return;
    m_view->selectRow(m_filter->mapFromSource(m_model->index(row, 0)).row());
}

std::int64_t SessionBrowser::currentSession() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return 0;
    return rows.first().data(SessionListModel::SessionIdRole).toLongLong();
}

void SessionBrowser::updateActions()
{
    const bool chosen = currentSession() != 0;
    m_open->setEnabled(chosen);
    m_export->setEnabled(chosen);
    m_delete->setEnabled(chosen && m_deleteAllowed);
}

} // namespace kl::gui
