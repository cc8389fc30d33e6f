#pragma once
// How the review panels mark who proposed a candidate and how its evaluation ended: one icon per
// proposer, one colour per verdict, the same in the tables, the tree and the charts.
#include "core/store/records.h"

#include <QColor>
#include <QIcon>
#include <QString>

#include <optional>
#include <string>

namespace kl::gui {

enum class Verdict { Passed, Failed, CompileError, NotEvaluated };

// From the result's status and category ("ok"/"passed", "failed"/"wrong-result", "compile.*").
Verdict verdictOf(const std::string& status, const std::string& category);
QColor verdictColor(Verdict verdict); // for text and chart marks
QColor verdictBackground(Verdict verdict); // a light tint for table rows

// store::proposedBy: "baseline", "inductor", "llm", "tuner", "human"; "-" when unknown.
QString proposerLabel(const store::IterationRow& row);
QIcon proposerIcon(const QString& label);

} // namespace kl::gui
