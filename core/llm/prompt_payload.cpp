#include "core/llm/prompt_payload.h"

#include "core/lines/line_heat.h"
#include "core/model/number_text.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

namespace kl {

namespace {

std::string number(double value, int decimals = 1) { return fixed(value, decimals); }

std::string bytesText(std::int64_t bytes)
{
    if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator)
{
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

std::string bullets(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& item : items)
        out += "- " + item + "\n";
    return out;
}

std::string fenced(const std::string& text, const std::string& language = {})
{
    std::string out = "```" + language + "\n" + text;
    if (!text.empty() && text.back() != '\n')
        out += "\n";
    return out + "```\n";
}

// The info string of the candidate's code blocks: the reply parser looks for the same.
std::string codeFence(CandidateLanguage language) { return language == CandidateLanguage::Triton ? "python" : "cuda"; }

std::string sizeText(const SizeSet& sizes)
{
    std::vector<std::string> parts;
    for (const auto& [name, value] : sizes.values)
        parts.push_back(name + "=" + std::to_string(value));
    return joined(parts, ", ");
}

std::string tensorText(const TensorSpec& t, const char* role)
{
    std::string text
        = t.name + ": " + role + " " + std::string(dtypeName(t.dtype)) + " [" + joined(t.shape, ", ") + "]";
    if (!t.rowPadding.empty() && t.rowPadding != "0")
        text += ", rows padded by " + t.rowPadding + " elements (row stride is stride_" + t.name
            + ", not the row length)";
    return text;
}

std::string problemSection(const ProblemFacts& p)
{
    std::ostringstream out;
    out << "Problem: " << p.name << (p.arch.empty() ? "" : " (target " + p.arch + ")") << "\n";
    if (!p.operation.empty())
        out << "Operation: " << p.operation << "\n";
    if (!p.tensors.empty())
        out << "Tensors (pointers passed to the kernel):\n" << bullets(p.tensors);
    if (!p.scalars.empty())
        out << "Scalars:\n" << bullets(p.scalars);
    if (!p.mainSizes.empty())
        out << "Sizes that are timed: " << joined(p.mainSizes, "; ") << "\n";
    if (!p.fuzzSizes.empty())
        out << "Sizes that must also verify (odd, prime, tiny, larger than a block): " << joined(p.fuzzSizes, "; ")
            << "\n";
    if (!p.tolerances.empty())
        out << "Tolerances against the reference: " << joined(p.tolerances, "; ") << "\n";
    if (!p.bytes.empty())
        out << "Bytes moved per call: " << p.bytes << (p.flops.empty() ? "" : "; FLOPs: " + p.flops) << "\n";
    return out.str();
}

// Every tensor's shape and strides (in elements, row-major, rows padded as the problem says) at one
// size; a size the expressions cannot evaluate says so rather than failing the prompt.
std::string concreteTensors(const Problem& problem, const SizeSet& sizes)
{
    std::string out = (sizes.label.empty() ? sizeText(sizes) : sizes.label) + ":";
    const auto symbols = sizes.symbols();
    for (const auto* list : { &problem.inputs, &problem.outputs })
        for (const auto& t : *list) {
            std::vector<std::int64_t> shape;
            try {
                for (const auto& d : t.shape)
                    shape.push_back(std::int64_t(evaluate(d, symbols)));
            } catch (const std::exception&) {
                out += " " + t.name + " (shape not evaluable);";
                continue;
            }
            std::vector<std::string> dims, strides(shape.size());
            std::int64_t stride = 1;
            for (std::size_t i = shape.size(); i-- > 0;) {
                strides[i] = std::to_string(stride);
                stride *= shape[i];
            }
            for (auto d : shape)
                dims.push_back(std::to_string(d));
            out += " " + t.name + " " + std::string(dtypeName(t.dtype)) + " shape [" + joined(dims, ", ")
                + "] strides [" + joined(strides, ", ") + "]" + (list == &problem.inputs ? " (input)" : " (output)")
                + ";";
        }
    out.pop_back();
    return out;
}

std::string specificationSection(const ProblemFacts& p)
{
    std::ostringstream out;
    if (!p.referenceSource.empty())
        out << "The reference (" << (p.referenceFile.empty() ? "reference.py" : p.referenceFile)
            << ", PyTorch): your kernel must compute what `reference(...)` returns, for the tensors and scalars "
               "named below (its keyword arguments).\n\n"
            << fenced(p.referenceSource, "python") << "\n";
    if (!p.concreteTensors.empty())
        out << "Tensors at each timed size (elements; contiguous unless the problem pads rows, then a row's "
               "stride is stride_<name>):\n"
            << bullets(p.concreteTensors);
    out << "There is no kernel yet: write the first one. Pass every input and output tensor and the size "
           "symbols your kernel needs in `args`, by the names above; the outputs are written by the kernel "
           "(they are poisoned before each run, so every element must be written).\n";
    return out.str();
}

std::string candidateSection(const CandidateFacts& c, const std::string& fence)
{
    std::ostringstream out;
    if (!c.launches.empty())
        out << "Launches:\n" << bullets(c.launches);
    if (!c.tunables.empty())
        out << "Tunables:\n" << bullets(c.tunables);
    if (!c.constraints.empty())
        out << "Constraints:\n" << bullets(c.constraints);
    if (!c.chosen.empty()) {
        std::vector<std::string> values;
        for (const auto& [name, value] : c.chosen)
            values.push_back(name + "=" + std::to_string(value));
        out << "Measured with: " << joined(values, ", ") << "\n";
    }
    out << "\n" << fenced(c.source, fence);
    return out.str();
}

std::string stateSection(const MeasuredState& s)
{
    std::vector<std::string> lines;
    lines.push_back("iteration: " + std::to_string(s.iteration));
    if (s.currentMicros) {
        std::string line = "latency: " + number(*s.currentMicros, 2) + " us";
        if (s.baselineMicros)
            line += " (baseline " + number(*s.baselineMicros, 2) + " us)";
        if (s.speedup)
            line += ", speedup " + number(*s.speedup, 2) + "x over the baseline";
        lines.push_back(line);
    } else if (s.baselineMicros) {
        lines.push_back("baseline latency: " + number(*s.baselineMicros, 2) + " us");
    }
    if (!s.correctness.empty())
        lines.push_back("correctness: " + s.correctness);
    if (s.gigabytesPerSecond) {
        std::string line = "achieved bandwidth: " + number(*s.gigabytesPerSecond, 0) + " GB/s";
        if (s.percentOfCeiling)
            line += " (" + number(*s.percentOfCeiling, 0) + "% of a same-size copy)";
        lines.push_back(line);
    }
    if (s.percentOfSol)
        lines.push_back("speed of light: " + number(*s.percentOfSol, 0) + "% of the floor"
            + (s.solBound.empty() ? std::string() : " (" + s.solBound + "-bound)")
            + "; the floor is the larger of a same-size copy and the FLOPs at the precision's ceiling");
    std::vector<std::string> resources;
    if (s.registers)
        resources.push_back(std::to_string(*s.registers) + " registers/thread");
    if (s.sharedBytes)
        resources.push_back(bytesText(*s.sharedBytes) + " shared memory/block");
    if (s.spillBytes)
        resources.push_back(bytesText(*s.spillBytes) + " spilled");
    if (!resources.empty())
        lines.push_back("resources: " + joined(resources, ", "));
    if (s.occupancy) {
        std::string line = "theoretical occupancy: " + number(*s.occupancy * 100.0, 0) + "%";
        if (!s.occupancyLimiter.empty())
            line += " (limited by " + s.occupancyLimiter + ")";
        if (s.achievedOccupancy)
            line += ", achieved " + number(*s.achievedOccupancy * 100.0, 0) + "%";
        lines.push_back(line);
    }
    if (!s.primaryStall.empty())
        lines.push_back("primary warp stall: " + s.primaryStall);
    std::string out = bullets(lines);
    if (!s.hotLines.empty()) {
        out += "- hottest source lines (PC sampling: share of the kernel's samples, dominant warp state; lines under "
            + number(lines::kPromptLineMinShare * 100.0, 0) + "% left out):\n";
        for (const auto& line : s.hotLines)
            out += "  - " + line + "\n";
    }
    return out;
}

std::string findingsSection(const std::vector<FindingFacts>& findings)
{
    std::ostringstream out;
    for (const auto& f : findings) {
        out << "- [" << (f.severity.empty() ? "info" : f.severity) << "] " << (f.id.empty() ? "" : f.id + ": ")
            << f.summary << "\n";
        if (!f.evidence.empty())
            out << "  evidence: " << f.evidence << "\n";
        if (!f.direction.empty())
            out << "  direction: " << f.direction << "\n";
    }
    return out.str();
}

std::string hardwareSection(const HardwareFacts& h)
{
    std::vector<std::string> lines;
    if (!h.device.empty())
        lines.push_back("device: " + h.device + (h.arch.empty() ? "" : " (" + h.arch + ")"));
    if (h.smCount > 0)
        lines.push_back("SMs: " + std::to_string(h.smCount));
    if (h.l2Bytes > 0)
        lines.push_back("L2 cache: " + bytesText(h.l2Bytes));
    if (h.sharedPerSmBytes > 0)
        lines.push_back("shared memory per SM: " + bytesText(h.sharedPerSmBytes)
            + (h.sharedPerBlockOptInBytes > 0
                    ? " (up to " + bytesText(h.sharedPerBlockOptInBytes) + " per block with opt-in)"
                    : ""));
    if (h.registersPerSm > 0)
        lines.push_back("registers per SM: " + std::to_string(h.registersPerSm));
    if (h.maxWarpsPerSm > 0)
        lines.push_back("max warps per SM: " + std::to_string(h.maxWarpsPerSm));
    if (h.dramGigabytesPerSecond)
        // Two copy ceilings reach the model: this one (a large copy, once per device) and, in the
        // measured state and findings, a copy of the same bytes as the problem. Each says which.
        lines.push_back("memory ceiling: " + number(*h.dramGigabytesPerSecond, 0)
            + " GB/s, measured with a 2 GiB device-to-device copy (percentages of copy elsewhere compare with a "
              "copy of the same size as the problem's buffers)");
    if (h.smClockMhz)
        lines.push_back("SM clock: " + number(*h.smClockMhz, 0) + " MHz");
    for (const auto& ceiling : h.computeCeilings)
        lines.push_back(ceiling);
    for (const auto& note : h.notes)
        lines.push_back(note);
    return bullets(lines);
}

std::string historySection(const std::vector<IterationFacts>& recent)
{
    std::ostringstream out;
    for (const auto& it : recent) {
        out << "- iteration " << it.iteration << (it.proposer.empty() ? "" : " (" + it.proposer + ")") << ": "
            << it.outcome;
        if (it.micros)
            out << ", " << number(*it.micros, 2) << " us";
        if (it.speedup)
            out << ", " << number(*it.speedup, 2) << "x";
        out << "\n";
        if (!it.hypothesis.empty())
            out << "  hypothesis: " << it.hypothesis << "\n";
        if (!it.change.empty())
            out << "  change: " << it.change << "\n";
        if (!it.report.empty())
            out << "  report:\n" << fenced(it.report);
    }
    return out.str();
}

std::string examplesSection(const std::vector<ExampleFacts>& examples, const std::string& fence)
{
    std::ostringstream out;
    for (const auto& e : examples) {
        out << "Example from problem " << e.problem << (e.summary.empty() ? "" : " (" + e.summary + ")") << ":\n";
        out << fenced(e.source, fence) << "\n";
    }
    return out.str();
}

std::string failureSection(const FailureFacts& f, const std::string& fence)
{
    std::ostringstream out;
    out << "Failure: " << f.category << "\n";
    if (!f.report.empty())
        out << fenced(f.report);
    if (!f.source.empty())
        out << "\nThe candidate that failed:\n" << fenced(f.source, fence);
    return out.str();
}

} // namespace

ProblemFacts describeProblem(const Problem& problem)
{
    ProblemFacts facts;
    facts.name = problem.name;
    facts.language = problem.language();
    facts.operation = problem.description;
    facts.arch = problem.arch;
    for (const auto& t : problem.inputs)
        facts.tensors.push_back(tensorText(t, "input"));
    for (const auto& t : problem.outputs)
        facts.tensors.push_back(tensorText(t, "output"));
    for (const auto& s : problem.scalars)
        facts.scalars.push_back(s.name + ": " + std::string(dtypeName(s.dtype)) + " = " + shortNumber(s.value));
    for (const auto& sizes : problem.mainSizes)
        facts.mainSizes.push_back((sizes.label.empty() ? "" : sizes.label + ": ") + sizeText(sizes));
    for (const auto& sizes : problem.fuzzSizes)
        facts.fuzzSizes.push_back(sizeText(sizes));
    for (const auto& [type, tolerance] : problem.tolerances)
        facts.tolerances.push_back(std::string(dtypeName(type)) + ": atol " + shortNumber(tolerance.atol) + ", rtol "
            + shortNumber(tolerance.rtol));
    facts.bytes = problem.bytesExpression;
    facts.flops = problem.flopsExpression;
    if (problem.pythonReference) {
        facts.referenceSource = problem.pythonReference->source;
        facts.referenceFile = std::filesystem::path(problem.pythonReference->fileName).filename().string();
    }
    for (const auto& sizes : problem.mainSizes)
        facts.concreteTensors.push_back(concreteTensors(problem, sizes));
    return facts;
}

CandidateFacts describeCandidate(const Candidate& candidate, const TunableValues& chosen)
{
    CandidateFacts facts;
    facts.source = candidate.source;
    facts.chosen = chosen;
    // The declarations as written: the model should see the exact syntax it must keep.
    std::istringstream in(candidate.source);
    std::string line;
    while (std::getline(in, line)) {
        const auto marker = line.find("@kl ");
        const auto comment = line.find_first_of("/#");
        if (marker == std::string::npos || comment == std::string::npos || comment > marker)
            continue;
        std::string directive = line.substr(marker + 4);
        if (directive.rfind("launch", 0) == 0)
            facts.launches.push_back(directive.substr(7));
        else if (directive.rfind("tunable", 0) == 0)
            facts.tunables.push_back(directive.substr(8));
        else if (directive.rfind("constraint", 0) == 0)
            facts.constraints.push_back(directive.substr(11));
    }
    return facts;
}

std::map<std::string, std::string> promptSections(const PromptPayload& p)
{
    std::map<std::string, std::string> s;
    // Without trailing newlines: the templates place each section on a line of its own.
    const auto put = [&](const char* name, std::string text) {
        while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
            text.pop_back();
        if (!text.empty())
            s[name] = std::move(text);
    };
    const bool triton = p.problem.language == CandidateLanguage::Triton;
    const auto fence = codeFence(p.problem.language);
    put("language", triton ? "Triton" : "CUDA");
    put("code_fence", fence);
    put("directive", triton ? "# @kl" : "// @kl");
    put("compiler", triton ? "Triton's compiler" : "NVRTC");
    if (triton)
        put("triton", "yes");
    put("problem_name", p.problem.name);
    put("problem", problemSection(p.problem));
    if (!p.best.source.empty())
        put("best_candidate", candidateSection(p.best, fence));
    std::vector<std::string> kernels;
    for (const auto& launch : p.best.launches)
        kernels.push_back(launch.substr(0, launch.find(' ')));
    put("kernel_names", joined(kernels, ", "));
    put("iteration", std::to_string(p.state.iteration));
    put("state", stateSection(p.state));
    put("findings", findingsSection(p.findings));
    put("hardware", hardwareSection(p.hardware));
    put("history", historySection(p.recent));
    put("steering", p.steering);
    put("rejections", bullets(p.rejections));
    put("examples", examplesSection(p.examples, fence));
    put("plan", p.plan);
    if (p.failure)
        put("failure", failureSection(*p.failure, fence));
    if (p.firstKernel)
        put("specification", specificationSection(p.problem));
    return s;
}

} // namespace kl
