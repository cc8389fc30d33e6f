// kernelloop-cli check PROBLEM [--candidate FILE] [--arch sm_90] [--set NAME=VALUE]... [--json]
// The static report without a GPU: compile with NVRTC, then registers, shared memory, stack,
// spills, barriers, theoretical occupancy and its limiter, grid and waves at every main size.
#include "cli/command.h"
#include "cli/option_values.h"
#include "cli/table_text.h"

#include "core/compile/static_report.h"
#include "core/lines/tensor_instructions.h"
#include "core/model/error.h"
#include "core/model/precision.h"
#include "core/report/static_severity.h"
#include "core/verify/speed_of_light.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace kl::cli {

namespace {

struct CheckOptions {
    std::string problem;
    std::string candidate;
    std::string arch;
    std::vector<std::string> sets;
    bool json = false;
    bool candidateGiven = false; // "--candidate ''" is a mistake, not "the baseline"
    bool archGiven = false;
};

// The reference is verified at every size set, padded too where rows are padded: its launch
// expressions must hold there, as the candidate's must.
void planReferenceEverywhere(const Problem& problem)
{
    const bool padded = problem.hasRowPadding();
    const auto tunables = problem.reference.defaults();
    for (const auto* list : { &problem.mainSizes, &problem.fuzzSizes })
        for (const auto& sizes : *list) {
            planLaunches(problem, problem.reference, sizes, tunables);
            if (padded)
                planLaunches(problem, problem.reference, sizes, tunables, true);
        }
}

std::string bytes(std::int64_t n) { return std::to_string(n) + " B"; }

std::string dims(const std::array<std::int64_t, 3>& d)
{
    std::string text = std::to_string(d[0]);
    const int used = d[2] > 1 ? 3 : d[1] > 1 ? 2 : 1;
    for (int i = 1; i < used; ++i)
        text += "x" + std::to_string(d[static_cast<std::size_t>(i)]);
    return text;
}

std::string fixed(double value, int decimals)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(decimals) << value;
    return out.str();
}

// A plain text table: numbers right-aligned, names (columns listed in `left`) left-aligned.
class Table {
public:
    Table(std::vector<std::string> header, std::vector<std::size_t> left)
        : m_left(std::move(left))
    {
        m_rows.push_back(std::move(header));
    }
    void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }

    void print(std::ostream& out) const
    {
        std::vector<std::size_t> widths(m_rows[0].size(), 0);
        for (const auto& row : m_rows)
            for (std::size_t c = 0; c < row.size(); ++c)
                widths[c] = std::max(widths[c], row[c].size());
        for (const auto& row : m_rows) {
            std::string line;
            for (std::size_t c = 0; c < row.size(); ++c) {
                const auto pad = std::string(widths[c] - row[c].size(), ' ');
                const bool left = std::find(m_left.begin(), m_left.end(), c) != m_left.end();
                line += (c ? "  " : "") + (left ? row[c] + pad : pad + row[c]);
            }
            out << line.substr(0, line.find_last_not_of(' ') + 1) << "\n";
        }
    }

private:
    std::vector<std::size_t> m_left;
    std::vector<std::vector<std::string>> m_rows;
};

void printDiagnostics(std::ostream& out, const CompileResult& compile)
{
    for (const auto& d : compile.diagnostics) {
        std::string where = d.file.empty() ? std::string("nvrtc") : d.file;
        if (d.line > 0)
            where += ":" + std::to_string(d.line) + (d.column > 0 ? ":" + std::to_string(d.column) : "");
        out << where << ": " << d.severity;
        if (d.kind != CompileErrorKind::None)
            out << " [" << compileErrorKindName(d.kind) << "]";
        out << ": " << d.message << "\n";
    }
}

void printReport(std::ostream& out, const StaticReport& r)
{
    out << r.problem << ": " << r.candidate << " for " << r.device.name << " (" << r.arch << ")";
    if (!r.tunables.empty()) {
        out << ",";
        for (const auto& [name, value] : r.tunables)
            out << " " << name << "=" << value;
    }
    out << "\ncompiled in " << fixed(r.compile.compileMillis, 0) << " ms (NVRTC " << r.compile.nvrtcVersion << ")\n\n";

    Table kernels(
        { "kernel", "registers/thread", "static smem", "stack frame", "spill stores", "spill loads", "barriers" },
        { 0 });
    for (const auto& k : r.compile.kernels)
        kernels.add({ k.name, std::to_string(k.registers), bytes(k.staticSharedBytes), bytes(k.stackFrameBytes),
            bytes(k.spillStoreBytes), bytes(k.spillLoadBytes), std::to_string(k.barriers) });
    kernels.print(out);
    out << "\n";

    Table launches({ "size", "kernel", "grid", "block", "dynamic smem", "threads/block", "blocks/SM", "occupancy",
                       "limited by", "waves" },
        { 0, 1, 8 });
    for (const auto& l : r.launches) {
        const auto& o = l.occupancy;
        // Dynamic: the launch rule's plus what Triton's compiler sizes (its metadata's "shared").
        const std::int64_t dynamicShared = l.launch.sharedBytes + l.resources.launchSharedBytes;
        launches.add({ l.sizes.label, l.kernel, dims(l.launch.grid), dims(l.launch.block), bytes(dynamicShared),
            std::to_string(l.launch.threadsPerBlock()), std::to_string(o.blocksPerSm),
            fixed(100.0 * o.theoretical, 1) + " %", o.error.empty() ? occupancyLimiterName(o.limiter) : "-",
            o.error.empty() ? fixed(l.waves, 2) : "-" });
    }
    launches.print(out);
    for (const auto& l : r.launches) // the same severities the GUI's report table colours (core/report)
        for (const auto& line : report::staticSeverityLines(l))
            out << line << "\n";
    for (const auto& l : r.launches)
        if (l.needsSharedOptIn && l.occupancy.error.empty())
            out << "note: " << l.kernel << " at " << l.sizes.label << " uses " << bytes(l.sharedBytes)
                << " of shared memory: above " << bytes(r.device.sharedPerBlock) << " it must opt in\n";
}

// Per main size: bytes, FLOPs, arithmetic intensity, the precision the FLOPs run in and why
// (Problem::computeCeiling(): the problem's "compute", whether it is a matrix product, the kernel's
// tensor-core instructions in `tensor`), and which floor of speed of light binds on the architecture's
// nominal device (core/model/precision.h) before anything is measured.
void printSpeedOfLight(std::ostream& out, const Problem& problem, const std::string& arch,
    const std::optional<lines::TensorInstructions>& tensor = std::nullopt)
{
    const ComputeCeiling computeCeiling = problem.computeCeiling(tensor && tensor->count > 0);
    const Precision precision = computeCeiling.precision;
    const auto rate = flopsPerSmPerClock(arch, precision);
    const auto device = nominalDevice(arch);
    out << "\nspeed of light: FLOPs in " << ceilingText(precision, computeCeiling.reason);
    if (computeCeiling.reason == CeilingReason::TensorInstructions)
        out << " (" << tensor->text() << ")";
    if (computeCeiling.reason != CeilingReason::Declared)
        out << " (set \"compute\" to say otherwise)";
    if (rate && device)
        out << ", " << fixed(*rate, 0) << " FLOP/SM/clock on " << arch << "; floors on a nominal " << device->name
            << " (" << device->smCount << " SMs, " << fixed(device->smClockMhz, 0) << " MHz, copy "
            << fixed(device->copyGbps, 0) << " GB/s)";
    out << "\n";
    const double ceiling = device ? ceilingTflops(precision, arch, device->smCount, device->smClockMhz) : 0.0;
    Table sizes({ "size", "bytes", "FLOPs", "FLOP/byte", "ridge", "memory floor", "compute floor", "binds" }, { 0 });
    for (const auto& s : problem.mainSizes) {
        const double bytes = problem.bytes(s);
        const double flops = problem.flops(s);
        const auto b = verify::balanceOf(bytes, flops, ceiling, device ? device->copyGbps : 0.0);
        sizes.add({ s.label, fixed(bytes / 1e6, 1) + " MB", flops > 0 ? fixed(flops / 1e9, 2) + " G" : "-",
            flops > 0 ? fixed(b.intensity, 1) : "-", b.ridge > 0 ? fixed(b.ridge, 1) : "-",
            b.memoryUs > 0 ? fixed(b.memoryUs, 2) + " us" : "-", b.computeUs > 0 ? fixed(b.computeUs, 2) + " us" : "-",
            b.memoryUs > 0 || b.computeUs > 0 ? std::string(boundName(b.bound)) : "-" });
    }
    sizes.print(out);
    if (problem.flopsExpression.empty())
        out << "note: the problem declares no \"flops\": speed of light is the copy alone\n";
    else if (ceiling <= 0.0)
        out << "note: no " << precisionLabel(precision) << " path on " << arch
            << ": speed of light is the copy alone\n";
}

// A problem with no kernel yet: what a session of it will do, in place of a kernel's static report.
void printNoKernelPlan(bool json, const Problem& problem, const std::string& arch)
{
    const std::string language = candidateLanguageName(problem.language());
    if (json) {
        nlohmann::json plan { { "problem", problem.name }, { "kernel", nullptr }, { "baseline", "eager" },
            { "language", language } };
        if (!problem.fixedSizes.empty())
            plan["fixed_sizes"] = problem.fixedSizes;
        std::cout << plan.dump(2) << "\n";
        return;
    }
    std::cout << problem.name << ": no kernel yet. PyTorch eager (" << problem.referencePath.filename().string()
              << ") is the baseline, timed in every job beside each candidate; torch.compile is timed too.\n"
              << "  tune --proposer llm (or llm+tuner): the model writes the first kernel (" << language
              << "; --language cuda|triton) from the reference, the tensors and the tolerances; a failing one goes to "
                 "the debugger; the first to pass verification is the incumbent.\n"
              << "  tune (the tuner alone, or --start inductor): starts from the Triton kernel torch.compile writes "
                 "for the reference, with its block sizes and warps as tunables.\n"
              << "  tune --start FILE: starts from a kernel of your own.\n";
    printSpeedOfLight(std::cout, problem, arch);
}

int runCheck(const CheckOptions& o)
{
    if (o.candidateGiven && o.candidate.empty())
        throw Error("cli.bad-option", {}, "--candidate", "an empty file name; leave --candidate out for the baseline");
    if (o.archGiven && o.arch.empty())
        throw Error(
            "cli.bad-option", {}, "--arch", "an empty architecture; give one such as sm_90, or leave --arch out");
    const auto problem = loadProblem(o.problem);
    planReferenceEverywhere(problem);
    if (!problem.fixedSizes.empty() && !o.json) // no fuzz sizes: say so before anything else is read
        std::cout << "fixed sizes: " << problem.fixedSizes << "\n";
    if (!o.candidateGiven && !problem.hasBaselineKernel()) {
        printNoKernelPlan(o.json, problem, o.archGiven ? o.arch : problem.arch);
        return Ok;
    }
    const auto candidate = o.candidateGiven ? loadCandidate(o.candidate) : problem.baseline;
    CompileOptions options;
    options.arch = o.archGiven ? o.arch : problem.arch;
    options.includeDir = problem.dir;
    const auto device = DeviceLimits::forArch(options.arch);
    const auto report = analyseCandidate(problem, candidate, parseSets(o.sets), options, device);

    if (o.json)
        std::cout << staticReportJson(report).dump(2) << "\n";
    if (!report.compile.ok) {
        if (!o.json) // the problem's side stands without a kernel that compiles (a Triton skeleton)
            printSpeedOfLight(std::cout, problem, options.arch, lines::countTensorInstructions({}, report.compile.ptx));
        printDiagnostics(std::cerr, report.compile);
        std::cerr << "error [compile." << compileErrorKindName(report.compile.kind) << "] " << report.compile.summary
                  << "\n";
        return Failure;
    }
    if (!o.json) {
        printReport(std::cout, report);
        printSpeedOfLight(std::cout, problem, options.arch, lines::countTensorInstructions({}, report.compile.ptx));
        printDiagnostics(std::cout, report.compile); // warnings
    }
    if (!report.ok()) {
        std::cerr << "error [compile.too-many-resources] " << report.firstProblem() << "\n";
        return Failure;
    }
    return Ok;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<CheckOptions>();
    auto* sub = app.add_subcommand("check", "Compile a candidate (no GPU needed) and print its static report");
    sub->add_option("problem", options->problem, "the problem file (JSON)")->required();
    auto* candidate
        = sub->add_option("--candidate", options->candidate, "a candidate source (default: the problem's baseline)");
    auto* arch = sub->add_option("--arch", options->arch, "target architecture, e.g. sm_90 (default: the problem's)");
    sub->add_option("--set", options->sets, "a tunable's value, NAME=VALUE (repeatable)");
    sub->add_flag("--json", options->json, "print the report as JSON");
    return [options, candidate, arch] {
        options->candidateGiven = candidate->count() > 0;
        options->archGiven = arch->count() > 0;
        if (!options->json)
            return runCheck(*options);
        try {
            return runCheck(*options);
        } catch (const Error& e) {
            // Machine-readable on stdout, human-readable on stderr as for every command.
            std::cout << nlohmann::json {
                { "ok", false },
                { "error",
                    { { "category", e.category() }, { "file", e.file() }, { "where", e.where() },
                        { "message", e.message() } } }
            }.dump(2) << "\n";
            throw;
        }
    };
});

} // namespace

} // namespace kl::cli
