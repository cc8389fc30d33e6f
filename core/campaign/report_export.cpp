#include "core/campaign/report_export.h"

#include "core/report/size_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kl::campaign {

namespace {

using report::figureText;

std::string times(const std::optional<double>& v) { return v ? figureText(v, 2) + "x" : std::string("-"); }

std::string boundText(const ProblemRow& r) { return r.bound ? std::string(boundName(*r.bound)) : std::string("-"); }

// "FP32 CUDA cores: not a matrix product"; empty where the runner named no ceiling.
std::string ceilingOf(const ProblemRow& r)
{
    return r.compute ? ceilingText(*r.compute, r.computeReason) : std::string();
}

std::string verdict(const ProblemRow& r)
{
    return r.status == "failed" && !r.category.empty() ? "failed: " + r.category : r.status;
}

std::string sessionText(const ProblemRow& r)
{
    if (!r.sessionId)
        return "-";
    return "session " + std::to_string(r.sessionId)
        + (r.bestIteration ? ", iteration " + std::to_string(r.bestIteration) : std::string());
}

// `timed`: problems where the contender was timed; when kernels passed but none was timed against it, fast_p
// says nothing (a CUDA reference has no PyTorch contender).
std::string share(const FastP& f, int timed, int done)
{
    if (timed == 0 && done > 0)
        return "- (not timed)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d/%d (%.1f%%)", f.fast, f.of, 100.0 * f.share());
    return buf;
}

std::string mean(const std::optional<double>& v, int over)
{
    return v ? times(v) + " over " + std::to_string(over) : std::string("- (none timed)");
}

std::string oneLine(std::string text)
{
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::replace(text.begin(), text.end(), '|', '/');
    return text;
}

std::string csvField(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string number(const std::optional<double>& v, int decimals = 6)
{
    return v ? figureText(v, decimals) : std::string();
}

nlohmann::json orNull(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json fastJson(const FastP& f)
{
    return { { "threshold", f.threshold }, { "fast", f.fast }, { "of", f.of }, { "share", f.share() } };
}

std::string headline(const CampaignReport& r)
{
    const auto& c = r.figures;
    return std::to_string(c.problems) + " problems: " + std::to_string(c.done) + " done, " + std::to_string(c.failed)
        + " failed" + (c.unfinished ? ", " + std::to_string(c.unfinished) + " not finished" : std::string());
}

} // namespace

std::string reportTable(const CampaignReport& report)
{
    std::ostringstream out;
    const auto& c = report.figures;
    out << "campaign " << report.campaign.id << " \"" << report.campaign.name << "\": " << report.campaign.status
        << (report.device.empty() ? std::string() : ", on " + report.device) << "\n"
        << "recipe: " << report.campaign.recipe << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "%3s %-24s %-34s %10s %9s %9s %9s %6s %-7s %5s %8s  %s\n", "#", "problem",
        "verdict", "best us", "vs base", "vs eager", "vs compile", "%SOL", "bound", "cands", "time s", "session");
    out << line;
    for (const auto& r : report.rows) {
        std::snprintf(line, sizeof line, "%3d %-24s %-34s %10s %9s %9s %9s %6s %-7s %5d %8s  %s\n", r.position + 1,
            r.name.substr(0, 24).c_str(), verdict(r).substr(0, 34).c_str(), figureText(r.medianUs, 2).c_str(),
            times(r.speedup).c_str(), times(r.vsEager).c_str(), times(r.vsCompile).c_str(),
            figureText(r.pctOfSol, 1).c_str(), boundText(r).c_str(), r.candidates, figureText(r.seconds, 1).c_str(),
            sessionText(r).c_str());
        out << line;
        if (r.status == "failed" && !r.detail.empty())
            out << "      " << oneLine(r.detail).substr(0, 160) << "\n";
        else if (r.pctOfSol && r.compute)
            out << "      %SOL against the ceiling " << ceilingOf(r) << "\n";
    }
    out << headline(report) << "\n";
    out << "fast_1.0: " << share(c.fastEager1, c.withEager, c.done) << " vs eager, "
        << share(c.fastCompile1, c.withCompile, c.done) << " vs torch.compile\n";
    out << "fast_1.2: " << share(c.fastEager12, c.withEager, c.done) << " vs eager, "
        << share(c.fastCompile12, c.withCompile, c.done) << " vs torch.compile\n";
    out << "geometric mean: " << mean(c.geomeanVsEager, c.withEager) << " vs eager, "
        << mean(c.geomeanVsCompile, c.withCompile) << " vs torch.compile, " << mean(c.geomeanSpeedup, c.withSpeedup)
        << " vs baseline\n";
    return out.str();
}

std::string reportMarkdown(const CampaignReport& report)
{
    std::ostringstream out;
    const auto& c = report.figures;
    out << "## Campaign " << report.campaign.name << "\n\n"
        << "Status " << report.campaign.status << (report.device.empty() ? std::string() : " on " + report.device)
        << "; every problem ran `" << report.campaign.recipe << "`. " << headline(report) << ".\n\n"
        << "| | vs PyTorch eager | vs torch.compile |\n|---|---|---|\n"
        << "| fast_1.0 | " << share(c.fastEager1, c.withEager, c.done) << " | "
        << share(c.fastCompile1, c.withCompile, c.done) << " |\n"
        << "| fast_1.2 | " << share(c.fastEager12, c.withEager, c.done) << " | "
        << share(c.fastCompile12, c.withCompile, c.done) << " |\n"
        << "| geometric mean | " << mean(c.geomeanVsEager, c.withEager) << " | "
        << mean(c.geomeanVsCompile, c.withCompile) << " |\n\n"
        << "fast_p: the share of all " << c.problems
        << " problems whose kernel passed verification and is more than p times as fast as the contender, timed "
           "in the same job (a failed problem counts as not fast); geometric means over the problems where the "
           "contender was timed.\n\n"
        << "| # | problem | verdict | best us | vs baseline | vs eager | vs torch.compile | % SOL | bound | "
           "candidates | time s | figures from |\n"
        << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : report.rows)
        out << "| " << r.position + 1 << " | " << oneLine(r.name) << " | " << oneLine(verdict(r)) << " | "
            << figureText(r.medianUs, 2) << " | " << times(r.speedup) << (r.baselineIsEager ? " (eager)" : "") << " | "
            << times(r.vsEager) << " | " << times(r.vsCompile) << " | " << figureText(r.pctOfSol, 1) << " | "
            << boundText(r) << (r.pctOfSol && r.compute ? " (ceiling " + oneLine(ceilingOf(r)) + ")" : std::string())
            << " | " << r.candidates << " | " << figureText(r.seconds, 1) << " | " << sessionText(r) << " |\n";
    bool failures = false;
    for (const auto& r : report.rows)
        if (r.status == "failed") {
            if (!failures)
                out << "\nFailures:\n";
            failures = true;
            out << "- " << oneLine(r.name) << ": `" << r.category << "` " << oneLine(r.detail).substr(0, 300) << "\n";
        }
    out << "\nEach row's figures are its session's best iteration as `kernelloop-cli history --session N` shows it.\n";
    return out.str();
}

std::string reportCsv(const CampaignReport& report)
{
    std::ostringstream out;
    out << "position,problem,name,status,category,session,iteration,endpoint,median_us,speedup,vs_eager,"
           "vs_torch_compile,pct_of_sol,sol_bound,sol_ceiling,candidates,seconds,detail\r\n";
    for (const auto& r : report.rows)
        out << r.position + 1 << "," << csvField(r.problem) << "," << csvField(r.name) << "," << r.status << ","
            << csvField(r.category) << "," << (r.sessionId ? std::to_string(r.sessionId) : "") << ","
            << (r.bestIteration ? std::to_string(r.bestIteration) : "") << "," << csvField(r.endpoint) << ","
            << number(r.medianUs) << "," << number(r.speedup) << "," << number(r.vsEager) << "," << number(r.vsCompile)
            << "," << number(r.pctOfSol) << "," << (r.bound ? boundText(r) : "") << "," << csvField(ceilingOf(r)) << ","
            << r.candidates << "," << figureText(r.seconds, 3) << "," << csvField(r.detail) << "\r\n";
    return out.str();
}

nlohmann::json reportJson(const CampaignReport& report)
{
    const auto& c = report.figures;
    nlohmann::json problems = nlohmann::json::array();
    for (const auto& r : report.rows)
        problems.push_back({ { "position", r.position + 1 }, { "problem", r.problem }, { "name", r.name },
            { "status", r.status }, { "category", r.category }, { "detail", r.detail },
            { "session", r.sessionId ? nlohmann::json(r.sessionId) : nlohmann::json(nullptr) },
            { "iteration", r.bestIteration ? nlohmann::json(r.bestIteration) : nlohmann::json(nullptr) },
            { "endpoint", r.endpoint }, { "median_us", orNull(r.medianUs) }, { "speedup", orNull(r.speedup) },
            { "baseline_is_eager", r.baselineIsEager }, { "vs_eager", orNull(r.vsEager) },
            { "vs_torch_compile", orNull(r.vsCompile) }, { "torch_compile_error", r.torchCompileError },
            { "pct_of_sol", orNull(r.pctOfSol) },
            { "sol_bound", r.bound ? nlohmann::json(std::string(boundName(*r.bound))) : nlohmann::json(nullptr) },
            { "sol_ceiling", r.compute ? nlohmann::json(ceilingOf(r)) : nlohmann::json(nullptr) },
            { "candidates", r.candidates }, { "seconds", r.seconds } });
    return { { "campaign",
                 { { "id", report.campaign.id }, { "name", report.campaign.name }, { "status", report.campaign.status },
                     { "recipe", report.campaign.recipe }, { "device", report.device } } },
        { "figures",
            { { "problems", c.problems }, { "done", c.done }, { "failed", c.failed }, { "unfinished", c.unfinished },
                { "fast_1_vs_eager", fastJson(c.fastEager1) }, { "fast_1.2_vs_eager", fastJson(c.fastEager12) },
                { "fast_1_vs_torch_compile", fastJson(c.fastCompile1) },
                { "fast_1.2_vs_torch_compile", fastJson(c.fastCompile12) },
                { "geomean_vs_eager", orNull(c.geomeanVsEager) }, { "geomean_vs_eager_over", c.withEager },
                { "geomean_vs_torch_compile", orNull(c.geomeanVsCompile) },
                { "geomean_vs_torch_compile_over", c.withCompile }, { "geomean_speedup", orNull(c.geomeanSpeedup) },
                { "geomean_speedup_over", c.withSpeedup } } },
        { "problems", problems } };
}

namespace {
std::string xmlText(const std::string& text)
{
    std::string out;
    for (const char ch : text) {
        switch (ch) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += ch;
        }
    }
    return out;
}

std::string px(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}
} // namespace

std::string distributionSvg(const CampaignReport& report)
{
    const bool compile = report.figures.withCompile > 0;
    struct Bar {
        const ProblemRow* row;
        std::optional<double> value;
    };
    std::vector<Bar> bars;
    for (const auto& r : report.rows)
        bars.push_back({ &r, r.status == "done" ? (compile ? r.vsCompile : r.vsEager) : std::nullopt });
    std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) {
        if (a.value.has_value() != b.value.has_value())
            return a.value.has_value();
        return a.value && *a.value > *b.value;
    });
    double lo = std::log2(0.5), hi = std::log2(2.0);
    for (const auto& b : bars)
        if (b.value && *b.value > 0) {
            lo = std::min(lo, std::floor(std::log2(*b.value)));
            hi = std::max(hi, std::ceil(std::log2(*b.value)));
        }
    const double width = std::max(480.0, 90.0 + 28.0 * double(bars.size())), height = 360, left = 60, right = 20,
                 top = 40, bottom = 110;
    const double plotH = height - top - bottom;
    const auto y = [&](double v) { return top + plotH * (hi - std::log2(v)) / (hi - lo); };
    const double step = (width - left - right) / std::max<std::size_t>(1, bars.size());
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width) << "\" height=\"" << px(height)
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"" << px(left) << "\" y=\"20\" font-size=\"14\">" << xmlText(report.campaign.name)
        << ": speedup over " << (compile ? "torch.compile" : "PyTorch eager") << " per problem (log scale)</text>\n";
    for (double e = lo; e <= hi; e += 1.0) {
        const double v = std::exp2(e);
        svg << "<line x1=\"" << px(left) << "\" x2=\"" << px(width - right) << "\" y1=\"" << px(y(v)) << "\" y2=\""
            << px(y(v)) << "\" stroke=\"#ddd\"/>\n<text x=\"" << px(left - 6) << "\" y=\"" << px(y(v) + 4)
            << "\" text-anchor=\"end\">" << figureText(v, v < 1 ? 2 : 0) << "x</text>\n";
    }
    for (const double t : { 1.0, 1.2 })
        svg << "<line x1=\"" << px(left) << "\" x2=\"" << px(width - right) << "\" y1=\"" << px(y(t)) << "\" y2=\""
            << px(y(t)) << "\" stroke=\""
            << (t == 1.0 ? "#333" : "#888")
            // An empty dash array is not valid SVG (ImageMagick refuses the whole picture): solid lines have none.
            << (t == 1.0 ? "\"" : "\" stroke-dasharray=\"4 3\"") << "/>\n<text x=\"" << px(width - right) << "\" y=\""
            << px(y(t) - 3) << "\" text-anchor=\"end\">fast_" << (t == 1.0 ? "1" : "1.2") << "</text>\n";
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const auto& b = bars[i];
        const double x = left + step * double(i) + step * 0.15, w = step * 0.7;
        const std::string label = xmlText(b.row->name);
        if (b.value && *b.value > 0) {
            const double top1 = std::min(y(*b.value), y(1.0)), bottom1 = std::max(y(*b.value), y(1.0));
            const char* colour = *b.value > 1.2 ? "#2e7d32" : *b.value > 1.0 ? "#f9a825" : "#c62828";
            svg << "<rect x=\"" << px(x) << "\" y=\"" << px(top1) << "\" width=\"" << px(w) << "\" height=\""
                << px(std::max(1.0, bottom1 - top1)) << "\" fill=\"" << colour << "\"><title>" << label << ": "
                << times(b.value) << " (" << xmlText(sessionText(*b.row)) << ")</title></rect>\n";
        } else {
            svg << "<text x=\"" << px(x + w / 2) << "\" y=\"" << px(height - bottom - 4)
                << "\" text-anchor=\"middle\" fill=\"#c62828\">x<title>" << label << ": " << xmlText(verdict(*b.row))
                << "</title></text>\n";
        }
        svg << "<text transform=\"translate(" << px(x + w / 2) << "," << px(height - bottom + 12) << ") rotate(45)\">"
            << label << "</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

} // namespace kl::campaign
