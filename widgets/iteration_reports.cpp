// The rich-text pages of the selected iteration: its verification report, its findings and the
// evidence behind its numbers. Values are read from the stored result as `show` prints them.
#include "core/report/evidence.h"
#include "core/report/tensor_ceiling.h"
#include "core/report/verification_report.h"
#include "widgets/html_text.h"
#include "widgets/number_text.h"
#include "widgets/report_view.h"
#include "widgets/verdict_style.h"

#include <QCoreApplication>

#include <algorithm>

#include <set>

namespace kl::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("kl::gui::IterationReports", text); }

QString verdictLine(const store::IterationDetail& detail)
{
    const Verdict verdict = verdictOf(detail.row.status, detail.row.category);
    const QString category = html(detail.row.category.empty() ? detail.row.state : detail.row.category);
    QString line
        = QStringLiteral("<p><b>") + htmlColored(category, verdictColor(verdict).name()) + QStringLiteral("</b>");
    if (detail.result && !detail.result->detail.empty())
        line += QStringLiteral(" — ") + html(detail.result->detail);
    return line + QStringLiteral("</p>");
}

} // namespace

QString verificationPage(const IterationFocus& focus)
{
    const store::IterationDetail& detail = *focus.detail;
    QString page = verdictLine(detail);
    const auto report = detail.result ? report::verificationReport(*detail.result) : std::nullopt;
    if (!report) {
        return page + QStringLiteral("<p><i>") + tr("Not verified: the candidate stopped before verification.")
            + QStringLiteral("</i></p>");
    }
    page += QStringLiteral("<table cellspacing=0 cellpadding=3 border=1 style=\"border-color:#ccc;\"><tr>");
    for (const char* head : { "Size", "Kind", "Trial", "Elements", "Max abs error", "Max rel error", "Mismatches",
             "NaN", "Unwritten", "Verdict" })
        page += QStringLiteral("<th>") + tr(head) + QStringLiteral("</th>");
    page += QStringLiteral("</tr>");
    QString windows;
    for (const report::VerifiedCase& c : *report) {
        page += QStringLiteral("<tr>");
        page += QStringLiteral("<td>") + html(c.size) + QStringLiteral("</td>");
        page += QStringLiteral("<td>") + html(c.kind) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.trial) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.elements) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.maxAbsError, 'g', 3) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.maxRelError, 'g', 3) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.mismatches) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.nan) + QStringLiteral("</td>");
        page += QStringLiteral("<td align=right>") + QString::number(c.unwritten) + QStringLiteral("</td>");
        const QString verdict = c.passed ? tr("passed") : html(c.verdict);
        page += QStringLiteral("<td>")
            + htmlColored(verdict, verdictColor(c.passed ? Verdict::Passed : Verdict::Failed).name())
            + QStringLiteral("</td></tr>");
        if (!c.passed && !c.windowStart.empty()) {
            windows += QStringLiteral("<p><b>") + html(c.worstOutput) + QStringLiteral("</b> at ") + html(c.size)
                + QStringLiteral(", from ") + html(report::listText(c.windowStart)) + QStringLiteral(":<br><tt>")
                + tr("expected") + QStringLiteral(" ") + html(report::listText(c.expected)) + QStringLiteral("<br>")
                + tr("got") + QStringLiteral("&nbsp;&nbsp;&nbsp;&nbsp; ") + html(report::listText(c.actual))
                + QStringLiteral("</tt></p>");
        }
    }
    return page + QStringLiteral("</table>") + windows;
}

QString findingsPage(const IterationFocus& focus)
{
    const store::IterationDetail& detail = *focus.detail;
    if (detail.findings.empty())
        return QStringLiteral("<p><i>")
            + (detail.result && detail.row.category == "passed"
                    ? tr("No findings: no rule found anything to say about this candidate's numbers.")
                    : tr("No findings: findings are drawn only for candidates that passed and were timed."))
            + QStringLiteral("</i></p>");
    QString page;
    for (const store::FindingRecord& f : detail.findings) {
        const QString color = f.severity == "warning"           ? QStringLiteral("#b86000")
            : f.severity == "error" || f.severity == "critical" ? QStringLiteral("#b01c1c")
                                                                : QStringLiteral("#1f6fb4");
        page += QStringLiteral("<p><b>")
            + htmlColored(QStringLiteral("[") + html(f.severity) + QStringLiteral("]"), color) + QStringLiteral(" ")
            + html(f.message) + QStringLiteral("</b><br><span style=\"color:#666;\">") + html(f.ruleId)
            + QStringLiteral("</span></p>");
        if (const auto items = store::evidenceItems(f); !items.empty()) {
            page += QStringLiteral("<table cellpadding=1 style=\"margin-left:16px;\">");
            for (const auto& [key, value] : items)
                page += htmlRow(html(key), html(value));
            page += QStringLiteral("</table>");
        }
        if (!f.directions.empty()) {
            page += QStringLiteral("<ul>");
            for (const std::string& direction : f.directions)
                page += QStringLiteral("<li>") + html(direction) + QStringLiteral("</li>");
            page += QStringLiteral("</ul>");
        }
    }
    return page;
}

QString evidencePage(const IterationFocus& focus)
{
    const store::IterationDetail& detail = *focus.detail;
    QString page = verdictLine(detail) + QStringLiteral("<table cellpadding=2>");
    if (detail.candidate) {
        const store::CandidateRecord& c = *detail.candidate;
        page += htmlRow(tr("Proposed by"),
            html(std::string(store::proposerName(c.proposer)))
                + (c.proposerDetail.empty() ? QString()
                                            : QStringLiteral(" (") + html(c.proposerDetail) + QLatin1Char(')')));
        if (c.predictedSpeedup || detail.row.speedup)
            page += htmlRow(tr("Predicted / measured"),
                fixedText(c.predictedSpeedup, 2, QStringLiteral("×")) + QStringLiteral(" / ")
                    + fixedText(detail.row.speedup, 2, QStringLiteral("×")) + QStringLiteral(" ") + tr("vs baseline"));
    }
    for (const store::DecisionRecord& d : detail.decisions)
        page += htmlRow(
            tr("Decision"), html(std::string(store::decisionName(d.kind))) + QStringLiteral(": ") + html(d.reason));
    if (detail.result) {
        const store::ResultRecord& r = *detail.result;
        if (const auto report = report::verificationReport(r); report && !report->empty()) {
            std::set<std::string> sizes;
            int trials = 0;
            for (const report::VerifiedCase& c : *report) {
                sizes.insert(c.size);
                trials = std::max(trials, c.trial + 1);
            }
            QStringList labels;
            for (const std::string& s : sizes)
                labels.append(html(s));
            //: evidence: %1 number of sizes, %2 their labels, %3 trials per size
            page += htmlRow(tr("Sizes verified"),
                tr("%1 (%2), %3 trial(s) each, fresh random inputs")
                    .arg(sizes.size())
                    .arg(labels.join(QStringLiteral(", ")))
                    .arg(trials));
        }
        if (focus.session)
            for (const report::OutputTolerance& t : report::outputTolerances(focus.session->problemJson))
                page += htmlRow(tr("Tolerance"), html(report::toleranceText(t)));
        if (r.medianUs)
            page += htmlRow(tr("Median (p20–p80)"),
                fixedText(r.medianUs, 2) + QStringLiteral(" µs (") + fixedText(r.p20Us, 2) + QStringLiteral("–")
                    + fixedText(r.p80Us, 2) + QStringLiteral(" µs), cv ") + fixedText(r.cv, 3));
        if (const auto& timing = r.timing) {
            for (const protocol::CaseTiming& c : timing->cases) {
                const QString size = html(c.label);
                page += htmlRow(tr("Repetitions at ") + size,
                    QString::number(c.candidate.reps)
                        + tr(" timed runs, cold L2 (flushed before each run), CUDA events"));
                if (c.baseline)
                    page += htmlRow(tr("Baseline in the same job"),
                        fixedText(c.baseline->medianUs, 2) + QStringLiteral(" µs (p20 ")
                            + fixedText(c.baseline->p20Us, 2) + QStringLiteral(", p80 ")
                            + fixedText(c.baseline->p80Us, 2) + QStringLiteral(")"));
                page += htmlRow(tr("Bandwidth"),
                    fixedText(c.gbps, 0) + QStringLiteral(" GB/s, ") + fixedText(c.pctOfCopy, 1)
                        + tr(" % of a same-size device copy (")
                        + fixedText(c.copy ? std::optional<double>(c.copy->medianUs) : std::nullopt, 2)
                        + QStringLiteral(" µs)"));
            }
            for (const report::SizeFloor& floor : report::floorChecks(r)) {
                const QString text = html(report::floorText(floor));
                page += htmlRow(tr("Floor check at ") + html(floor.size),
                    floor.verdict == report::SizeFloor::Verdict::Below ? htmlColored(text, QStringLiteral("#b01c1c"))
                                                                       : text);
            }
        }
        page += htmlRow(tr("SM clock"), fixedText(r.smClockMhz, 0, QStringLiteral(" MHz")));
        // Where FLOPs bind, the tensor ceiling the device was measured at beside the theoretical one.
        const bool computeBound = std::any_of(r.sizes.begin(), r.sizes.end(),
            [](const store::SizeResult& size) { return size.solBound == Bound::Compute; });
        if (const auto& device = r.device; computeBound && device)
            if (const auto ceiling = report::tensorCeilingOf(*device))
                page += htmlRow(tr("Tensor ceiling"), html(report::tensorCeilingText(*ceiling)));
        if (!r.toolkit.empty())
            page += htmlRow(tr("Toolkit"), QStringLiteral("NVRTC ") + html(r.toolkit));
        if (r.fromCache)
            page += htmlRow(tr("Cache"), tr("result reused from an earlier identical evaluation"));
    }
    page += QStringLiteral("</table>");
    if (detail.candidate && !detail.candidate->hypothesis.empty())
        page += QStringLiteral("<p><b>") + tr("Hypothesis")
            + QStringLiteral("</b></p><p style=\"white-space:pre-wrap;\">") + html(detail.candidate->hypothesis)
            + QStringLiteral("</p>");
    return page;
}

} // namespace kl::gui
