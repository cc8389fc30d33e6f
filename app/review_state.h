#pragma once
// The review state a command line asks for (`kernelloop FILE --iteration N --inspector TAB --chart TAB
// --history TAB`, what the screenshots of each state use) and what the review workspace shows, in words.
//
// A tab is named by its label as its bar shows it: the bars are the one list of names. A name is a
// whole label, or the start of a label or of one of its words ("Stall" for "Stall reasons", "tree"
// for "Proposal tree"), in any case. A name that fits no tab, or several, is refused with the names
// the bar has; so is an iteration the session does not have.
#include <QString>
#include <QStringList>

#include <optional>

class QTabWidget;

namespace kl::gui {

class ReviewWorkspace;

// A tab's label as the bar shows it: "Registers & occupancy" for "Registers && occupancy".
QString tabLabel(const QTabWidget* tabs, int index);
QStringList tabLabels(const QTabWidget* tabs);

// The tab that `name` names in `tabs`; -1 with `refusal` set when none or several do.
struct TabChoice {
    int index = -1;
    QString refusal; // "no tab \"Metricz\" (the tabs: Source, Diff, ...)"
};
TabChoice tabNamed(const QTabWidget* tabs, const QString& name);

// What the options asked for, as typed (unset: not asked).
struct ReviewRequest {
    std::optional<QString> iteration;
    std::optional<QString> inspector;
    std::optional<QString> chart;
    std::optional<QString> history;
    bool isEmpty() const { return !iteration && !inspector && !chart && !history; }
};

// The tab names refused, one message per option ("--inspector: no tab ..."); empty when every name
// fits a tab. The tabs are there before anything is opened, so this is checked first.
QStringList refusedTabs(const ReviewWorkspace& review, const ReviewRequest& request);
// Selects the iteration and shows the named tabs in the shown session; what was refused (an iteration
// the session lacks, a name no tab has), one message per option, else empty.
QStringList applyReviewRequest(ReviewWorkspace& review, const ReviewRequest& request);

// What the review workspace shows now, one "what: value" a line, for the screenshot runs to check
// against what they asked for (tests/gui/screenshot_option.cmake):
//   iteration: 6
//   inspector: Metrics
//   inspector content: 0 characters, 9 rows, 0 series, 0 points: "Speed of Light | 8192x4096 | ..."
//   chart: Latency
//   chart content: 18 characters, 0 rows, 5 series, 57 points: "Iteration"
//   history: Iterations
//   history content: 0 characters, 41 rows, 0 series, 0 points: "1 | baseline | passed | 72.32"
//   history current row: 6 | tuner | passed | 40.22
// A page's content counts what is visible on it: the text of its labels, text panes and editors,
// the rows of its views, the series and points of its charts, and the first line of text it shows.
// These lines are not translated.
QStringList describeReview(const ReviewWorkspace& review);

} // namespace kl::gui
