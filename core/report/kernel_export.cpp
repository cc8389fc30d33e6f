#include "core/report/kernel_export.h"

#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/report/size_figures.h"
#include "core/store/store.h"

#include <cstdio>
#include <regex>
#include <sstream>

namespace kl::report {

namespace {
std::string number(const std::optional<double>& v, int decimals) { return figureText(v, decimals); }
} // namespace

// A Triton candidate's tunables are fixed by making the chosen values the `# @kl tunable`
// defaults (Python has no #define); the line is otherwise kept as written.
std::string withTunableDefaults(const std::string& source, const TunableValues& chosen)
{
    std::istringstream in(source);
    std::ostringstream out;
    std::string line;
    static const std::regex tunable(R"(^(\s*#\s*@kl\s+tunable\s+)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)(-?[0-9]+)(.*)$)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, tunable))
            if (const auto it = chosen.find(m[2].str()); it != chosen.end())
                line = m[1].str() + m[2].str() + m[3].str() + std::to_string(it->second) + m[5].str();
        out << line << "\n";
    }
    return out.str();
}

std::string exportedKernelText(std::int64_t sessionId, const store::SessionRecord* session,
    const store::IterationDetail& d, const std::string& fixedSizes)
{
    const bool triton = d.candidate && candidateLanguageOf(d.candidate->fileName) == CandidateLanguage::Triton;
    std::ostringstream text;
    text << "// Exported by KernelLoop from session " << sessionId << ", iteration " << d.row.index << " ("
         << (session ? session->problemName : std::string()) << ")\n";
    if (session)
        text << "// Measured on " << session->device << "\n";
    if (d.result && d.result->medianUs) {
        const auto& r = *d.result;
        const auto sizes = figures::figuresOf(d).sizes;
        if (sizes.size() > 1) {
            // Each main size on its own line: a median and percentiles of two sizes never share one.
            text << "// Per main size, against the problem's baseline timed in the same job:\n";
            for (const auto& f : sizes)
                text << "//   " << sizeFiguresText(f) << "\n";
            text << "// Speedup " << aggregateSpeedupText(r.speedup, sizes.size()) << ";";
        } else {
            const auto sol = sizes.empty() ? std::string() : solText(sizes.front());
            text << "// Median " << number(r.medianUs, 2) << " us (p20 " << number(r.p20Us, 2) << ", p80 "
                 << number(r.p80Us, 2) << "), " << number(r.gbps, 0) << " GB/s, " << number(r.pctOfCopy, 1)
                 << "% of a same-size device copy, " << (sol.empty() ? std::string() : sol + ", ")
                 << number(r.speedup, 2) << "x the problem's baseline timed in the same job;";
        }
        text << " CUDA events, L2 flushed before every run, SM clock " << number(r.smClockMhz, 0) << " MHz, NVRTC "
             << r.toolkit << ".\n";
        for (const auto& f : sizes)
            if (const auto contenders = contendersText(f); !contenders.empty())
                text << "// Against the PyTorch reference timed in the same job (medians), " << f.size << ": "
                     << contenders << ".\n";
    }
    if (d.result && fixedSizes.empty())
        text << "// Verified against the problem's reference at its main, fuzz and padded sizes: " << d.result->category
             << ".\n";
    else if (d.result)
        text << "// Verified against the problem's reference at its main sizes only (fixed sizes: " << fixedSizes
             << "): " << d.result->category << ".\n";
    if (triton) {
        text << "// The launch rule is in the # @kl lines below; the chosen tunables are their defaults.\n";
        // Python comments: the header is the same text after "#".
        std::string out;
        std::istringstream header(text.str());
        for (std::string line; std::getline(header, line);)
            out += "#" + line.substr(2) + "\n";
        if (d.candidate)
            out += "\n" + withTunableDefaults(d.candidate->source, d.candidate->tunables);
        return out;
    }
    text << "// The launch rule is in the // @kl lines below; the chosen tunables are fixed here:\n";
    if (d.candidate) {
        for (const auto& [k, v] : d.candidate->tunables)
            text << "#ifndef " << k << "\n#define " << k << " " << v << "\n#endif\n";
        text << "\n" << d.candidate->source;
    }
    return text.str();
}

ExportedKernel exportKernel(const store::Store& store, std::int64_t session, int iteration)
{
    int chosen = iteration;
    if (chosen == 0) {
        const auto best = bestIteration(store, session);
        if (!best)
            throw Error("session.no-best", store.path().string(), {},
                "session " + std::to_string(session) + " has no passing candidate");
        chosen = *best;
    }
    const auto d = store.iteration(session, chosen);
    if (!d || !d->candidate)
        throw Error("store.no-such-iteration", store.path().string(), {},
            "no candidate at iteration " + std::to_string(chosen));
    const auto record = store.session(session);
    const auto problem = record ? store.problem(record->problemHash) : std::nullopt;
    return { session, chosen,
        exportedKernelText(
            session, record ? &*record : nullptr, *d, problem ? problemFixedSizesOf(problem->json) : std::string()) };
}

} // namespace kl::report
