#include "core/report/size_figures.h"

#include "core/figures/contenders.h"

#include <cstdio>

namespace kl::report {

std::string figureText(const std::optional<double>& v, int decimals)
{
    if (!v)
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
    return buf;
}

std::string contendersText(const figures::SizeFigures& f)
{
    figures::Contenders c;
    c.size = f.size;
    c.eagerUs = f.eagerUs;
    c.torchCompileUs = f.torchCompileUs;
    c.speedupVsEager = f.speedupVsEager;
    c.speedupVsCompile = f.speedupVsCompile;
    c.torchCompileError = f.torchCompileError;
    return figures::contendersText(c);
}

std::string solText(const std::optional<double>& pctOfSol, const std::optional<Bound>& bound,
    const std::optional<Precision>& compute, const std::optional<CeilingReason>& reason)
{
    if (!pctOfSol)
        return {};
    std::string why = bound ? std::string(boundName(*bound)) : std::string();
    if (compute)
        why += (why.empty() ? "" : "; ") + std::string("ceiling ") + ceilingText(*compute, reason);
    return figureText(pctOfSol, 1) + "% of SOL" + (why.empty() ? std::string() : " (" + why + ")");
}

std::string solText(const figures::SizeFigures& f)
{
    return solText(f.pctOfSol, f.solBound, f.compute, f.computeReason);
}

std::string sizeFiguresText(const figures::SizeFigures& f)
{
    const auto contenders = contendersText(f);
    const auto sol = solText(f);
    return (f.size.empty() ? std::string("(unnamed size)") : f.size) + ": median " + figureText(f.medianUs, 2)
        + " us (p20 " + figureText(f.p20Us, 2) + ", p80 " + figureText(f.p80Us, 2) + "), " + figureText(f.gbps, 0)
        + " GB/s, " + figureText(f.pctOfCopy, 1) + "% of copy, " + (sol.empty() ? std::string() : sol + ", ")
        + (f.speedup ? figureText(f.speedup, 2) + "x" : std::string("-"))
        + (contenders.empty() ? std::string() : "; " + contenders);
}

std::string aggregateSpeedupText(const std::optional<double>& speedup, std::size_t sizes)
{
    if (!speedup)
        return "-";
    auto text = figureText(speedup, 2) + "x";
    if (sizes > 1)
        text += " (geometric mean over " + std::to_string(sizes) + " main sizes)";
    return text;
}

} // namespace kl::report
