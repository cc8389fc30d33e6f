#include "app/review_state.h"

#include "app/review_workspace.h"
#include "widgets/charts_panel.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_selection.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QCoreApplication>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTextDocumentFragment>
#include <QTextEdit>
#include <Qsci/qsciscintilla.h>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QXYSeries>

#include <algorithm>
#include <vector>

namespace kl::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("kl::gui::ReviewState", text); }

bool nameFits(const QString& label, const QString& name)
{
    if (label.startsWith(name, Qt::CaseInsensitive))
        return true;
    const QStringList words = label.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    return std::any_of(words.begin(), words.end(),
        [&name](const QString& word) { return word.startsWith(name, Qt::CaseInsensitive); });
}

QString listed(const QStringList& names) { return names.join(QStringLiteral(", ")); }

// The option's refusal, or nothing, and the tab shown when it names one.
QString showTab(QTabWidget* tabs, const QString& option, const std::optional<QString>& name)
{
    if (!name)
        return {};
    const TabChoice choice = tabNamed(tabs, *name);
    if (choice.index < 0)
        return QStringLiteral("%1: %2").arg(option, choice.refusal);
    tabs->setCurrentIndex(choice.index);
    return {};
}

// The iterations of a session in few words: "1-13", or "1-4, 6, 9-12" where some are missing.
QString iterationRanges(const SessionView& session)
{
    std::vector<int> indices;
    for (const auto& row : session.rows)
        indices.push_back(row.index);
    std::sort(indices.begin(), indices.end());
    QStringList ranges;
    for (std::size_t i = 0; i < indices.size();) {
        std::size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
            ++j;
        ranges << (i == j ? QString::number(indices[i]) : QStringLiteral("%1-%2").arg(indices[i]).arg(indices[j]));
        i = j + 1;
    }
    return listed(ranges);
}

QString selectIteration(ReviewWorkspace& review, const QString& text)
{
    bool number = false;
    const int index = text.trimmed().toInt(&number);
    const auto session = review.selection()->session();
    if (!number)
        return tr("--iteration: \"%1\" is not an iteration number").arg(text);
    if (!session)
        return tr("--iteration %1: no session is open to select it in").arg(index);
    if (!session->row(index)) {
        if (session->rows.empty())
            return tr("--iteration %1: session %2 has no iterations").arg(index).arg(session->session.id);
        return tr("--iteration %1: session %2 has no iteration %1 (its iterations: %3)")
            .arg(index)
            .arg(session->session.id)
            .arg(iterationRanges(*session));
    }
    review.selection()->select(index);
    return {};
}

// What a page shows: its text (labels, text panes, editors, chart titles), the rows of its views and
// the series and points of its charts, as far as they are visible.
struct PageContent {
    qsizetype characters = 0;
    qsizetype rows = 0;
    qsizetype series = 0;
    qsizetype points = 0;
    QString first; // the first line of text it shows

    void addText(QString text)
    {
        text = text.trimmed();
        if (text.isEmpty())
            return;
        characters += text.size();
        if (first.isEmpty())
            first = text.section(QLatin1Char('\n'), 0, 0).simplified().left(100);
    }

    void addView(const QAbstractItemView* view)
    {
        const QAbstractItemModel* model = view->model();
        if (!model || qobject_cast<const QHeaderView*>(view))
            return;
        rows += model->rowCount(view->rootIndex());
        if (!first.isEmpty() || model->rowCount(view->rootIndex()) == 0)
            return;
        QStringList cells;
        for (int column = 0; column < std::min(model->columnCount(view->rootIndex()), 4); ++column)
            cells << model->index(0, column, view->rootIndex()).data().toString().simplified();
        first = cells.join(QStringLiteral(" | ")).left(100);
    }

    void addChart(const QChart* chart)
    {
        addText(chart->title());
        for (const QAbstractAxis* axis : chart->axes())
            addText(axis->titleText());
        for (const QAbstractSeries* each : chart->series()) {
            ++series;
            if (const auto* xy = qobject_cast<const QXYSeries*>(each))
                points += xy->count();
            else if (const auto* bars = qobject_cast<const QAbstractBarSeries*>(each))
                for (const QBarSet* set : bars->barSets())
                    points += set->count();
        }
    }

    void add(const QWidget* widget)
    {
        if (const auto* label = qobject_cast<const QLabel*>(widget))
            addText(Qt::mightBeRichText(label->text()) ? QTextDocumentFragment::fromHtml(label->text()).toPlainText()
                                                       : label->text());
        else if (const auto* text = qobject_cast<const QTextEdit*>(widget))
            addText(text->toPlainText());
        else if (const auto* plain = qobject_cast<const QPlainTextEdit*>(widget))
            addText(plain->toPlainText());
        else if (const auto* editor = qobject_cast<const QsciScintilla*>(widget))
            addText(editor->text());
        else if (const auto* view = qobject_cast<const QAbstractItemView*>(widget))
            addView(view);
        else if (const auto* chart = qobject_cast<const QChartView*>(widget))
            addChart(chart->chart());
    }

    static PageContent of(const QWidget* page)
    {
        PageContent content;
        if (!page)
            return content;
        const bool shown = page->isVisible(); // an unshown window: every part counts
        content.add(page);
        for (const QWidget* child : page->findChildren<QWidget*>())
            if (!shown || child->isVisibleTo(page->window()))
                content.add(child);
        return content;
    }

    QString text() const
    {
        return QStringLiteral("%1 characters, %2 rows, %3 series, %4 points: \"%5\"")
            .arg(characters)
            .arg(rows)
            .arg(series)
            .arg(points)
            .arg(first);
    }
};

void describeTabs(QStringList& lines, const QString& what, const QTabWidget* tabs)
{
    lines << QStringLiteral("%1: %2").arg(what, tabLabel(tabs, tabs->currentIndex()));
    lines << QStringLiteral("%1 content: %2").arg(what, PageContent::of(tabs->currentWidget()).text());
}

// The row a view marks as current, its first cells ("6 | tuner | passed | 40.00"); empty when none.
QString currentRow(const QWidget* page)
{
    const auto* view = qobject_cast<const QAbstractItemView*>(page);
    if (!view || !view->model() || !view->currentIndex().isValid())
        return {};
    const QModelIndex current = view->currentIndex();
    QStringList cells;
    for (int column = 0; column < std::min(view->model()->columnCount(current.parent()), 4); ++column)
        cells << current.siblingAtColumn(column).data().toString().simplified();
    return cells.join(QStringLiteral(" | "));
}

} // namespace

QString tabLabel(const QTabWidget* tabs, int index)
{
    QString label = tabs->tabText(index);
    QString shown;
    for (qsizetype i = 0; i < label.size(); ++i) {
        if (label[i] == QLatin1Char('&') && i + 1 < label.size())
            ++i; // "&&" is one ampersand, "&x" a mnemonic
        shown += label[i];
    }
    return shown;
}

QStringList tabLabels(const QTabWidget* tabs)
{
    QStringList labels;
    for (int i = 0; i < tabs->count(); ++i)
        labels << tabLabel(tabs, i);
    return labels;
}

TabChoice tabNamed(const QTabWidget* tabs, const QString& name)
{
    const QStringList labels = tabLabels(tabs);
    const QString wanted = name.trimmed();
    QList<int> fitting;
    for (int i = 0; i < labels.size(); ++i) {
        if (wanted.isEmpty())
            break;
        if (labels[i].compare(wanted, Qt::CaseInsensitive) == 0)
            return { i, {} };
        if (nameFits(labels[i], wanted))
            fitting << i;
    }
    if (fitting.size() == 1)
        return { fitting.front(), {} };
    if (fitting.isEmpty())
        return { -1, tr("no tab \"%1\" (the tabs: %2)").arg(name, listed(labels)) };
    QStringList several;
    for (const int i : fitting)
        several << labels[i];
    return { -1, tr("\"%1\" names several tabs: %2 (the tabs: %3)").arg(name, listed(several), listed(labels)) };
}

QStringList refusedTabs(const ReviewWorkspace& review, const ReviewRequest& request)
{
    QStringList refused;
    auto check = [&refused](const QTabWidget* tabs, const QString& option, const std::optional<QString>& name) {
        if (!name)
            return;
        if (const TabChoice choice = tabNamed(tabs, *name); choice.index < 0)
            refused << QStringLiteral("%1: %2").arg(option, choice.refusal);
    };
    check(review.inspector(), QStringLiteral("--inspector"), request.inspector);
    check(review.charts()->tabs(), QStringLiteral("--chart"), request.chart);
    check(review.history()->tabs(), QStringLiteral("--history"), request.history);
    return refused;
}

QStringList applyReviewRequest(ReviewWorkspace& review, const ReviewRequest& request)
{
    QStringList refused;
    if (request.iteration)
        refused << selectIteration(review, *request.iteration);
    refused << showTab(review.inspector(), QStringLiteral("--inspector"), request.inspector);
    refused << showTab(review.charts()->tabs(), QStringLiteral("--chart"), request.chart);
    refused << showTab(review.history()->tabs(), QStringLiteral("--history"), request.history);
    refused.removeAll(QString());
    return refused;
}

QStringList describeReview(const ReviewWorkspace& review)
{
    QStringList lines;
    lines << QStringLiteral("iteration: %1").arg(review.selection()->current());
    describeTabs(lines, QStringLiteral("inspector"), review.inspector());
    describeTabs(lines, QStringLiteral("chart"), review.charts()->tabs());
    describeTabs(lines, QStringLiteral("history"), review.history()->tabs());
    lines << QStringLiteral("history current row: %1").arg(currentRow(review.history()->tabs()->currentWidget()));
    return lines;
}

} // namespace kl::gui
