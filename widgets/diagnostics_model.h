#pragma once
// Everything that went wrong or deserves a look, one row each: compiler errors and warnings,
// and categorised input errors (a malformed problem, a bad directive, a broken constraint).
#include "core/compile/compiler.h"
#include "core/model/error.h"

#include <QAbstractTableModel>

#include <vector>

namespace kl::gui {

struct DiagnosticEntry {
    enum class Severity { Error, Warning, Note };
    Severity severity = Severity::Error;
    QString category; // "syntax", "problem.missing-field", ...
    QString file;
    QString where; // "line 12", a field path, or empty
    int line = 0; // 1-based candidate line, 0 when the entry is not about a source line
    int column = 0;
    QString message;

    static DiagnosticEntry fromCompiler(const CompilerDiagnostic& diagnostic);
    static DiagnosticEntry fromError(const Error& error);
};

class DiagnosticsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn, CategoryColumn, LocationColumn, MessageColumn, ColumnCount };
    enum Role { LineRole = Qt::UserRole + 1, CategoryRole };

    explicit DiagnosticsModel(QObject* parent = nullptr);

    void setEntries(std::vector<DiagnosticEntry> entries);
    void clear();
    const std::vector<DiagnosticEntry>& entries() const { return m_entries; }
    int errorCount() const;
    int warningCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<DiagnosticEntry> m_entries;
};

} // namespace kl::gui
