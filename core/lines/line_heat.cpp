#include "core/lines/line_heat.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace kl::lines {

namespace {

std::string_view lastComponent(std::string_view path)
{
    const auto slash = path.find_last_of("/\\");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string percent(double fraction)
{
    char text[16];
    std::snprintf(text, sizeof text, "%.0f%%", 100.0 * fraction);
    return text;
}

} // namespace

std::string HotLine::dominantStall() const { return stalls.empty() ? std::string() : stalls.front().stall; }

double HotLine::dominantShare() const
{
    return stalls.empty() || samples <= 0 ? 0.0 : static_cast<double>(stalls.front().samples) / samples;
}

const HotLine* LineHeat::line(int number, std::string_view file) const
{
    for (const HotLine& l : lines)
        if (l.line == number && (file.empty() || lastComponent(l.file) == lastComponent(file)))
            return &l;
    return nullptr;
}

LineHeat lineHeat(const PcSampling& sampling, std::string_view file)
{
    struct Sums {
        std::int64_t samples = 0;
        std::map<std::string, std::int64_t> stalls;
        std::set<std::uint64_t> pcs;
    };
    std::map<std::pair<std::string, int>, Sums> byLine;
    LineHeat heat;
    for (const PcSample& pc : sampling.pcs) {
        const std::int64_t n = pc.samples();
        heat.samples += n;
        if (pc.line <= 0) {
            heat.unmappedSamples += n;
            continue;
        }
        if (!file.empty() && lastComponent(pc.file) != lastComponent(file))
            continue;
        Sums& sums = byLine[{ pc.file, pc.line }];
        sums.samples += n;
        sums.pcs.insert(pc.pcOffset);
        for (const auto& [stall, count] : pc.stalls)
            if (!isNotIssuedSubset(stall) && count > 0)
                sums.stalls[stall] += count;
    }
    for (auto& [where, sums] : byLine) {
        HotLine l;
        l.file = where.first;
        l.line = where.second;
        l.samples = sums.samples;
        l.share = heat.samples > 0 ? static_cast<double>(sums.samples) / heat.samples : 0.0;
        for (const auto& [stall, count] : sums.stalls)
            l.stalls.push_back({ stall, count });
        std::stable_sort(l.stalls.begin(), l.stalls.end(),
            [](const StallCount& a, const StallCount& b) { return a.samples > b.samples; });
        l.pcOffsets.assign(sums.pcs.begin(), sums.pcs.end());
        heat.lines.push_back(std::move(l));
    }
    std::stable_sort(heat.lines.begin(), heat.lines.end(), [](const HotLine& a, const HotLine& b) {
        return a.samples != b.samples ? a.samples > b.samples : a.line < b.line;
    });
    return heat;
}

std::string sourceLine(const std::string& source, int line)
{
    if (line <= 0)
        return {};
    std::istringstream in(source);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (n != line)
            continue;
        const auto first = text.find_first_not_of(" \t\r");
        if (first == std::string::npos)
            return {};
        const auto last = text.find_last_not_of(" \t\r");
        return text.substr(first, last - first + 1);
    }
    return {};
}

std::string stallMeaning(std::string_view stall)
{
    static const std::map<std::string_view, std::string_view> meanings {
        { "long_scoreboard", "waits for a global, local or texture memory load it depends on" },
        { "short_scoreboard", "waits for a shared-memory access or a special-function result (MIO)" },
        { "mio_throttle", "the shared-memory/MIO instruction queue is full (often bank conflicts)" },
        { "lg_throttle", "the global/local memory instruction queue is full (too many narrow loads)" },
        { "barrier", "waits at __syncthreads for the other warps of its block" },
        { "membar", "waits for a memory fence" },
        { "math_pipe_throttle", "the arithmetic pipe it needs is busy" },
        { "wait", "waits a fixed latency on an earlier instruction" },
        { "not_selected", "was ready but another warp issued" },
        { "selected", "issued an instruction" },
        { "dispatch_stall", "the dispatcher could not issue" },
        { "branch_resolving", "waits for a branch target to resolve" },
        { "no_instructions", "has no instruction fetched (instruction cache miss)" },
        { "no_instruction", "has no instruction fetched (instruction cache miss)" },
        { "drain", "waits for its memory stores to drain at exit" },
        { "sleeping", "sleeps (nanosleep or a yield)" },
        { "tex_throttle", "the texture queue is full" },
        { "imc_miss", "waits for an immediate-constant cache miss" },
        { "gmma", "waits for a warpgroup matrix instruction" },
        { "misc", "is stalled for a miscellaneous reason" },
    };
    const auto it = meanings.find(stall);
    return it == meanings.end() ? "is stalled (" + std::string(stall) + ")" : std::string(it->second);
}

std::string hotLineText(const HotLine& line, const std::string& source)
{
    std::string text = "line " + std::to_string(line.line) + ": " + percent(line.share) + " of samples";
    if (!line.stalls.empty())
        text += ", " + line.dominantStall() + " " + percent(line.dominantShare()) + " (the warp "
            + stallMeaning(line.dominantStall()) + ")";
    if (const std::string code = sourceLine(source, line.line); !code.empty())
        text += " — " + code;
    return text;
}

std::vector<std::string> hotLineTexts(
    const PcSampling& sampling, const std::string& source, std::size_t count, double minShare)
{
    std::vector<std::string> texts;
    if (sampling.status != SamplingStatus::Ok)
        return texts;
    const LineHeat heat = lineHeat(sampling);
    // Hottest first: the first line under the share ends the list.
    for (std::size_t i = 0; i < heat.lines.size() && i < count && heat.lines[i].share >= minShare; ++i)
        texts.push_back(hotLineText(heat.lines[i], source));
    return texts;
}

std::string samplingCostText(const PcSampling& sampling)
{
    std::string out = "sampling phase: ";
    if (sampling.milliseconds > 0) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.1f ms", sampling.milliseconds);
        out += ms;
    } else {
        out += "cost not recorded";
    }
    out += ", " + std::to_string(sampling.runs) + (sampling.runs == 1 ? " run" : " runs") + "; CUPTI counted "
        + std::to_string(sampling.totalSamples) + " samples (" + std::to_string(sampling.otherSamples)
        + " in other kernels, " + std::to_string(sampling.droppedSamples) + " dropped)";
    if (sampling.hardwareBufferFull)
        out += ", hardware buffer full";
    return out;
}

std::string hotLinesReport(
    const PcSampling& sampling, const std::string& source, std::size_t count, std::string_view file)
{
    if (sampling.status != SamplingStatus::Ok) {
        std::string why = "no line samples: PC sampling " + std::string(samplingStatusName(sampling.status));
        if (!sampling.reason.empty())
            why += " (" + sampling.reason + ")";
        if (!sampling.detail.empty())
            why += ": " + sampling.detail;
        return why + "\n";
    }
    const LineHeat heat = lineHeat(sampling, file);
    std::string out = std::to_string(heat.samples) + " samples in the candidate";
    if (!sampling.caseLabel.empty())
        out += " at " + sampling.caseLabel;
    if (sampling.periodLog2 > 0)
        out += ", one per 2^" + std::to_string(sampling.periodLog2) + " cycles";
    out += ", " + std::to_string(sampling.droppedSamples) + " dropped";
    if (heat.unmappedSamples > 0)
        out += ", " + std::to_string(heat.unmappedSamples) + " without a source line";
    out += "\n" + samplingCostText(sampling) + "\n";
    if (heat.lines.empty())
        return out + "no sample maps to a source line (was the candidate compiled with -lineinfo?)\n";
    for (std::size_t i = 0; i < heat.lines.size() && i < count; ++i) {
        const HotLine& l = heat.lines[i];
        char head[64];
        std::snprintf(head, sizeof head, "  %5d  %5.1f%%  ", l.line, 100.0 * l.share);
        out += head;
        std::string stalls;
        for (std::size_t s = 0; s < l.stalls.size() && s < 3; ++s)
            stalls += (s ? ", " : "") + l.stalls[s].stall + " "
                + percent(static_cast<double>(l.stalls[s].samples) / std::max<std::int64_t>(l.samples, 1));
        out += stalls;
        if (const std::string code = sourceLine(source, l.line); !code.empty())
            out += "\n         " + code;
        out += "\n";
    }
    return out;
}

} // namespace kl::lines
