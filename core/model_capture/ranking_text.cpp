#include "core/model_capture/ranking_text.h"

#include "core/model/number_text.h"

namespace kl::model_capture {

namespace {

std::string format(int decimals, double value) { return fixed(value, decimals); }
std::string percent(double share) { return fixed(100.0 * share, 1) + "%"; }

std::string engineering(double value, const char* unit)
{
    if (value >= 1e9)
        return format(2, value / 1e9) + " G" + unit;
    if (value >= 1e6)
        return format(2, value / 1e6) + " M" + unit;
    if (value >= 1e3)
        return format(1, value / 1e3) + " k" + unit;
    return format(0, value) + " " + unit;
}

std::string pad(std::string text, std::size_t width)
{
    if (text.size() > width)
        text = text.substr(0, width - 1) + "~";
    return text + std::string(width - text.size() + 1, ' ');
}

} // namespace

std::string rankingText(const ModelFolder& f, int maxRows)
{
    const std::string label = rankingLabel(f.ranking);
    std::string text = "ranking (" + label + "): " + f.ranking.basis + "\n";
    text += "   #  " + pad("operator", 40) + pad("kind", 13) + pad("FLOPs", 10) + pad("bytes", 10)
        + pad(f.ranking.measured ? "us" : "est. us", 9) + pad("share", 7) + "bound\n";
    int n = 0;
    for (const auto& r : f.ranking.rows) {
        if (++n > maxRows) {
            text += "  ... " + std::to_string(f.ranking.rows.size() - std::size_t(maxRows)) + " more in model.json\n";
            break;
        }
        const std::string number = std::to_string(n);
        text += std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') + number + "  " + pad(r.label, 40)
            + pad(r.kind, 13) + pad(engineering(r.flops, ""), 10) + pad(engineering(r.bytes, "B"), 10)
            + pad(format(3, r.timeUs), 9) + pad(percent(r.share), 7) + std::string(boundName(r.bound)) + "\n";
    }
    text += "  total " + format(3, f.ranking.totalUs) + " us (" + label + ")\n";
    return text;
}

std::string problemsText(const ModelFolder& f)
{
    const std::string label = rankingLabel(f.ranking);
    double covered = 0.0;
    for (const auto& p : f.problems)
        covered += p.share;
    std::string text = "problems: " + std::to_string(f.problems.size()) + ", covering " + percent(covered)
        + " of the forward (" + label + ")\n";
    for (const auto& p : f.problems) {
        std::string ops;
        for (const auto& l : p.labels)
            ops += (ops.empty() ? "" : " + ") + l;
        text += "  " + pad(p.name, 28) + pad(percent(p.share), 7) + ops + (p.fused ? "  [fusion candidate]" : "")
            + (p.patchMode == "none" ? "  [cannot be put back: " + p.patchWhy + "]" : "") + "\n";
    }
    for (const auto& r : f.refused)
        text += "  left out " + r.name + ": [" + r.category + "] " + r.message + "\n";
    return text;
}

} // namespace kl::model_capture
