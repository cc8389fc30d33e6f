#pragma once
// The sessions of the open store: filter, open, export, delete. It lists rows and asks; the app
// opens, writes and deletes.
#include "core/store/records.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QTableView;

namespace kl::gui {

class SessionFilterModel;
class SessionListModel;

class SessionBrowser : public QWidget {
    Q_OBJECT
public:
    explicit SessionBrowser(QWidget* parent = nullptr);

    void setSessions(std::vector<store::SessionRow> sessions);
    // Delete needs a writable store; a read-only view says why it is off.
    void setDeleteAllowed(bool allowed, const QString& whyNot = {});
    void setCurrentSession(std::int64_t sessionId);
    std::int64_t currentSession() const; // 0: none

    SessionListModel* model() const { return m_model; }
    SessionFilterModel* filterModel() const { return m_filter; }
    QTableView* view() const { return m_view; }
    QLineEdit* filterEdit() const { return m_filterEdit; }
    QPushButton* deleteButton() const { return m_delete; }

signals:
    void openRequested(std::int64_t sessionId);
    void exportRequested(std::int64_t sessionId);
    void deleteRequested(std::int64_t sessionId);

private:
    void updateActions();

    SessionListModel* m_model;
    SessionFilterModel* m_filter;
    QLineEdit* m_filterEdit;
    QTableView* m_view;
    QLabel* m_empty;
    QStackedWidget* m_stack;
    QPushButton* m_open;
    QPushButton* m_export;
    QPushButton* m_delete;
    bool m_deleteAllowed = false;
};

} // namespace kl::gui
