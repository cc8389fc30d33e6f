#pragma once
// The runner pool while a session runs: one row per endpoint with its device, state, jobs done,
// faults and last error, from RunnerPool::status() values (the owner polls the pool and hands the
// rows in; this widget knows nothing of the loop). A quarantined or other-model runner's row is
// tinted, so a lost host stands out.
#include "core/pool/runner_pool.h"

#include <QWidget>

#include <vector>

class QLabel;
class QTableWidget;

namespace kl::gui {

class PoolStatusPanel : public QWidget {
    Q_OBJECT
public:
    explicit PoolStatusPanel(QWidget* parent = nullptr);

    void setStatus(const std::vector<pool::RunnerStatus>& runners);
    QTableWidget* table() const { return m_table; }
    QString summaryText() const; // "2 of 3 runners usable, 14 jobs done"

private:
    QLabel* m_summary;
    QTableWidget* m_table;
};

} // namespace kl::gui
