#include "widgets/diagnostics_model.h"

#include "widgets/string_conversion.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <QFontDatabase>

#include <algorithm>

namespace kl::gui {

DiagnosticEntry DiagnosticEntry::fromCompiler(const CompilerDiagnostic& diagnostic)
{
    DiagnosticEntry entry;
    entry.severity = diagnostic.severity == "warning" ? Severity::Warning : Severity::Error;
    entry.category = toQString(compileErrorKindName(diagnostic.kind));
    entry.file = toQString(diagnostic.file);
    entry.line = diagnostic.line;
    entry.column = diagnostic.column;
    entry.message = toQString(diagnostic.message);
    return entry;
}

DiagnosticEntry DiagnosticEntry::fromError(const Error& error)
{
    DiagnosticEntry entry;
    entry.category = toQString(error.category());
    entry.file = toQString(error.file());
    entry.where = toQString(error.where());
    entry.message = toQString(error.message());
    // Candidate errors say "line N": keep the number so a double click can jump there.
    if (entry.where.startsWith(QStringLiteral("line ")))
        entry.line = entry.where.mid(5).toInt();
    return entry;
}

DiagnosticsModel::DiagnosticsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void DiagnosticsModel::setEntries(std::vector<DiagnosticEntry> entries)
{
    beginResetModel();
    m_entries = std::move(entries);
    endResetModel();
}

void DiagnosticsModel::clear() { setEntries({}); }

int DiagnosticsModel::errorCount() const
{
    return static_cast<int>(std::count_if(m_entries.begin(), m_entries.end(),
        [](const DiagnosticEntry& entry) { return entry.severity == DiagnosticEntry::Severity::Error; }));
}

int DiagnosticsModel::warningCount() const
{
    return static_cast<int>(std::count_if(m_entries.begin(), m_entries.end(),
        [](const DiagnosticEntry& entry) { return entry.severity == DiagnosticEntry::Severity::Warning; }));
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const DiagnosticEntry& entry = m_entries[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn:
            switch (entry.severity) {
            case DiagnosticEntry::Severity::Error:
                return tr("error");
            case DiagnosticEntry::Severity::Warning:
                return tr("warning");
            case DiagnosticEntry::Severity::Note:
                return tr("note");
            }
            return {};
        case CategoryColumn:
            return entry.category;
        case LocationColumn: {
            const QString file = QFileInfo(entry.file).fileName();
            QString location = file;
            if (entry.line > 0) {
                location += QLatin1Char(':') + QString::number(entry.line);
                if (entry.column > 0)
                    location += QLatin1Char(':') + QString::number(entry.column);
            } else if (!entry.where.isEmpty()) {
                location += file.isEmpty() ? entry.where : QStringLiteral(" (") + entry.where + QLatin1Char(')');
            }
            return location;
        }
        case MessageColumn:
            return entry.message;
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == LocationColumn)
            return entry.file;
        return entry.message;
    case Qt::ForegroundRole:
        if (index.column() == SeverityColumn) {
            return QBrush(entry.severity == DiagnosticEntry::Severity::Error ? QColor(0xb0, 0x1c, 0x1c)
                    : entry.severity == DiagnosticEntry::Severity::Warning   ? QColor(0x9a, 0x62, 0x00)
                                                                             : QColor(0x40, 0x40, 0x40));
        }
        return {};
    case Qt::FontRole:
        if (index.column() == CategoryColumn || index.column() == LocationColumn)
            return QFontDatabase::systemFont(QFontDatabase::FixedFont);
        return {};
    case LineRole:
        return entry.line;
    case CategoryRole:
        return entry.category;
    default:
        return {};
    }
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case SeverityColumn:
        //: column header: error, warning or note
        return tr("Severity");
    case CategoryColumn:
        //: column header: the error's stable category, e.g. "syntax" or "problem.missing-field"
        return tr("Category");
    case LocationColumn:
        return tr("Location");
    case MessageColumn:
        return tr("Message");
    default:
        return {};
    }
}

} // namespace kl::gui
