#include "core/field_formats/flashinfer_trace.h"

#include "core/field_formats/flashinfer_check.h"
#include "core/field_formats/flashinfer_definition.h"
#include "core/field_formats/flashinfer_names.h"
#include "core/field_formats/stored_problem.h"
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/report/kernel_export.h"
#include "core/store/store.h"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kl::fieldformats {

namespace {

// JSON has no NaN or infinity: written as the strings FlashInfer-Bench's own models write and read.
Json number(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "Infinity" : "-Infinity";
    return value;
}

std::string authorOf(const store::IterationRow& row)
{
    const auto by = store::proposedBy(row);
    if (by == "llm" || by == "tuner")
        return "kernelloop-" + by;
    return by.empty() ? std::string("kernelloop") : safeName(by);
}

std::string fileNameOf(const std::string& name, bool triton)
{
    const auto file = std::filesystem::path(name).filename().string();
    if (file.empty() || file == "." || file == "..")
        return triton ? "kernel.py" : "kernel.cu";
    return file;
}

std::string entryPoint(const std::string& source, const std::string& file)
{
    try {
        const auto c = parseCandidate(source, file);
        if (!c.launches.empty())
            return file + "::" + c.launches.front().kernel;
    } catch (const Error&) {
        // a candidate that no longer parses (it failed to compile): named by its file alone
    }
    return file + "::unknown";
}

Json solutionJson(const std::string& name, const std::string& definition, const std::string& author,
    const std::string& hardware, const std::string& file, const std::string& content, const std::string& description,
    Json kernelloop)
{
    const bool triton = candidateLanguageOf(file) == CandidateLanguage::Triton;
    Json spec = { { "language", triton ? "triton" : "cuda" }, { "target_hardware", Json::array({ hardware }) },
        { "entry_point", entryPoint(content, file) },
        { "dependencies", triton ? Json::array({ "triton", "torch" }) : Json::array() },
        { "destination_passing_style", true } };
    return { { "name", name }, { "definition", definition }, { "description", description }, { "author", author },
        { "spec", spec }, { "sources", Json::array({ { { "path", file }, { "content", content } } }) },
        { "kernelloop", std::move(kernelloop) } };
}

struct ProblemExport {
    Problem problem;
    store::ProblemRecord record;
    ExportedDefinition definition;
};

const protocol::CaseTiming* timingAt(const store::ResultRecord& r, const std::string& label)
{
    if (!r.timing)
        return nullptr;
    for (const auto& c : r.timing->cases)
        if (c.label == label)
            return &c;
    return nullptr;
}

// The largest errors of the cases of one size (label), or of every case (label empty).
std::optional<Json> correctnessOf(const store::ResultRecord& r, const std::string& label)
{
    if (!r.verification)
        return std::nullopt;
    double abs = 0.0, rel = 0.0;
    bool any = false;
    for (const auto& c : r.verification->cases)
        if (label.empty() || c.label == label) {
            any = true;
            abs = std::isnan(abs) || std::isnan(c.maxAbsError) ? NAN : std::max(abs, c.maxAbsError);
            rel = std::isnan(rel) || std::isnan(c.maxRelError) ? NAN : std::max(rel, c.maxRelError);
        }
    if (!any && !label.empty())
        return correctnessOf(r, {});
    return Json { { "max_relative_error", number(rel) }, { "max_absolute_error", number(abs) } };
}

std::string failingCasesText(const store::ResultRecord& r)
{
    std::ostringstream s;
    if (!r.verification)
        return {};
    for (const auto& c : r.verification->cases)
        if (!c.passed)
            s << "case " << c.label << " (" << protocol::caseKindName(c.kind) << ", trial " << c.trial
              << "): " << (c.category ? std::string(protocol::categoryName(*c.category)) : std::string("failed"))
              << ", " << c.mismatches << " of " << c.elements << " elements off, max abs error " << c.maxAbsError
              << ", max rel error " << c.maxRelError << (c.worstOutput.empty() ? "" : " in " + c.worstOutput) << "\n";
    return s.str();
}

Json evaluationOf(const std::string& status, const store::ResultRecord& r, const store::SessionRecord& session,
    const SizeSet& size, int index)
{
    Json e = Json::object();
    e["status"] = status;
    std::string log = r.category + (r.detail.empty() ? "" : ": " + r.detail) + "\n" + failingCasesText(r);
    e["log"] = log;
    std::optional<Json> correctness;
    if (status == "PASSED")
        correctness = correctnessOf(r, size.label);
    else if (status == "INCORRECT_NUMERICAL")
        correctness = correctnessOf(r, {});
    e["correctness"] = correctness ? *correctness : Json();
    Json extension
        = { { "session", session.id }, { "iteration", index }, { "category", r.category }, { "size", size.label } };
    const auto* t = status == "PASSED" ? timingAt(r, size.label) : nullptr;
    if (status == "PASSED") {
        const double latencyMs = t ? t->candidate.medianUs / 1000.0 : r.medianUs.value_or(0.0) / 1000.0;
        double referenceMs = 0.0;
        std::string referenceOf = "none";
        if (t && t->eager && t->eager->medianUs > 0) {
            referenceMs = t->eager->medianUs / 1000.0;
            referenceOf = "pytorch-eager";
        } else if (t && t->baseline && t->baseline->medianUs > 0) {
            referenceMs = t->baseline->medianUs / 1000.0;
            referenceOf = "baseline";
        }
        e["performance"] = { { "latency_ms", latencyMs }, { "reference_latency_ms", referenceMs },
            { "speedup_factor", latencyMs > 0 && referenceMs > 0 ? referenceMs / latencyMs : 0.0 } };
        extension["statistic"] = "median";
        extension["reference_latency_of"] = referenceOf;
        if (t) {
            extension["p20_us"] = t->candidate.p20Us;
            extension["p80_us"] = t->candidate.p80Us;
            extension["cv"] = t->candidate.cv;
            extension["reps"] = t->candidate.reps;
            if (t->baseline)
                extension["baseline_median_us"] = t->baseline->medianUs;
            if (t->torchCompile)
                extension["torch_compile_median_us"] = t->torchCompile->medianUs;
            if (t->pctOfCopy)
                extension["pct_of_copy"] = *t->pctOfCopy;
        }
    } else {
        e["performance"] = nullptr;
    }
    const auto device = r.device ? r.device : session.deviceInfo;
    Json libs = Json::object();
    if (!r.toolkit.empty())
        libs["nvrtc"] = r.toolkit;
    if (device && !device->runtimeToolkit.empty())
        libs["cuda"] = device->runtimeToolkit;
    if (device && !device->driverVersion.empty())
        libs["cuda_driver"] = device->driverVersion;
    e["environment"] = { { "hardware", hardwareName(device ? device->name : session.device) }, { "libs", libs } };
    e["timestamp"] = isoTimestamp(r.recordedMs > 0 ? r.recordedMs : session.startedMs);
    if (r.smClockMhz)
        extension["sm_clock_mhz"] = *r.smClockMhz;
    if (device && device->memoryClockMhz > 0)
        extension["memory_clock_mhz"] = device->memoryClockMhz;
    if (!r.endpoint.empty())
        extension["runner"] = r.endpoint;
    e["kernelloop"] = extension;
    return e;
}

// Definition names: the problem's, made unique where two different problems share one.
std::map<std::string, std::string> definitionNames(const std::map<std::string, store::ProblemRecord>& problems)
{
    std::map<std::string, int> uses;
    for (const auto& [hash, record] : problems)
        ++uses[safeName(record.name)];
    std::map<std::string, std::string> names;
    for (const auto& [hash, record] : problems) {
        const auto base = safeName(record.name);
        names[hash] = uses[base] > 1 ? base + "_" + safeName(hash.substr(0, 8)) : base;
    }
    return names;
}

} // namespace

void writeExportFile(const std::filesystem::path& path, const std::string& text)
{
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (ec || !out)
        throw Error("trace.write-failed", path.string(), {}, "cannot write the file");
}

void checkExportFolder(const std::filesystem::path& dir, bool overwrite)
{
    std::error_code ec;
    const auto status = std::filesystem::status(dir, ec);
    if (!std::filesystem::exists(status))
        return;
    if (!std::filesystem::is_directory(status))
        throw Error("trace.not-a-folder", dir.string(), {}, "not a folder: the export writes a folder of files");
    if (!overwrite && std::filesystem::directory_iterator(dir, ec) != std::filesystem::directory_iterator())
        throw Error("trace.folder-not-empty", dir.string(), {},
            "the folder is not empty (pass --force to write into it, replacing files of the same names)");
}

TraceExportSummary exportFlashInferTrace(const store::Store& store, const std::vector<std::int64_t>& sessions,
    const std::filesystem::path& dir, const TraceExportOptions& options)
{
    checkExportFolder(dir, options.overwrite);
    const ExportRedactor redactor(options.secrets);
    TraceExportSummary summary;

    std::map<std::string, store::ProblemRecord> records;
    std::vector<store::SessionRecord> sessionRecords;
    for (const auto id : sessions) {
        const auto s = store.session(id);
        if (!s)
            throw Error("store.unknown-session", store.path().string(), {}, "no session " + std::to_string(id));
        const auto record = store.problem(s->problemHash);
        if (!record)
            throw Error("store.unknown-problem", store.path().string(), {},
                "session " + std::to_string(id) + "'s problem is missing");
        records.emplace(s->problemHash, *record);
        sessionRecords.push_back(*s);
    }
    const auto names = definitionNames(records);
    std::map<std::string, ProblemExport> problems;
    for (const auto& [hash, record] : records) {
        auto problem = storedProblem(record);
        auto definition = exportDefinition(problem, record, names.at(hash));
        problems.emplace(hash, ProblemExport { std::move(problem), record, std::move(definition) });
    }

    const auto write = [&](const std::filesystem::path& relative, Json value) {
        redactor.redact(value);
        writeExportFile(dir / relative, value.dump(2) + "\n");
    };
    std::map<std::filesystem::path, std::string> lines; // JSONL files, gathered before writing
    const auto addLine = [&](const std::filesystem::path& relative, Json value) {
        redactor.redact(value);
        lines[relative] += value.dump() + "\n";
    };

    for (const auto& [hash, pe] : problems) {
        const auto& d = pe.definition;
        write(std::filesystem::path("definitions") / d.opType / (d.name + ".json"), d.json);
        summary.definitions.push_back(d.name);
        const auto workloads = std::filesystem::path("workloads") / d.opType / (d.name + ".jsonl");
        for (const auto& s : pe.problem.mainSizes)
            addLine(workloads, workloadLine(d, pe.problem, s, "main"));
        for (const auto& s : pe.problem.fuzzSizes)
            addLine(workloads, workloadLine(d, pe.problem, s, "fuzz"));
        summary.workloads += int(pe.problem.mainSizes.size() + pe.problem.fuzzSizes.size());
        if (!pe.problem.pythonReference) {
            // The CUDA reference as a solution of its own: the runnable form of the definition's reference.
            const auto file = fileNameOf(pe.problem.referencePath.filename().string(), false);
            write(std::filesystem::path("solutions") / "kernelloop-reference" / d.opType / d.name
                    / (d.name + "_reference.json"),
                solutionJson(d.name + "_reference", d.name, "kernelloop-reference", "NVIDIA_GPU", file,
                    pe.record.referenceSource,
                    "The problem's CUDA reference: plain code that is obviously correct, what every kernel is verified "
                    "against",
                    { { "role", "reference" } }));
            ++summary.solutions;
        }
    }

    for (const auto& session : sessionRecords) {
        const auto& pe = problems.at(session.problemHash);
        const auto& d = pe.definition;
        for (const auto& row : store.listIterations(session.id)) {
            const auto detail = store.iteration(session.id, row.index);
            if (!detail || !detail->candidate || !detail->result) {
                ++summary.skipped;
                continue;
            }
            const auto& r = *detail->result;
            const auto status = evaluationStatus(r.category);
            if (!status) {
                ++summary.skipped;
                continue;
            }
            const auto author = authorOf(row);
            const auto name = d.name + "_s" + std::to_string(session.id) + "_i" + std::to_string(row.index);
            const auto& c = *detail->candidate;
            const bool triton = candidateLanguageOf(c.fileName) == CandidateLanguage::Triton;
            const auto hardware = hardwareName(r.device ? r.device->name : session.device);
            Json kernelloop = { { "session", session.id }, { "iteration", row.index },
                { "proposer", store::proposerName(c.proposer) }, { "proposer_detail", c.proposerDetail },
                { "tunables", c.tunables }, { "hypothesis", c.hypothesis }, { "category", r.category } };
            if (detail->parent)
                kernelloop["parent_candidate"] = detail->parent->id;
            std::string description = "KernelLoop session " + std::to_string(session.id) + ", iteration "
                + std::to_string(row.index) + ", proposed by " + store::proposedBy(row)
                + (c.proposerDetail.empty() ? "" : " (" + c.proposerDetail + ")") + ": " + r.category
                + ". Its launches are the @kl lines of its source (raw kernels, no host entry function).";
            write(std::filesystem::path("solutions") / author / d.opType / d.name / (name + ".json"),
                solutionJson(name, d.name, author, hardware, fileNameOf(c.fileName, triton),
                    report::exportedKernelText(session.id, &session, *detail), description, kernelloop));
            ++summary.solutions;
            const auto traces = std::filesystem::path("traces") / author / d.opType / (d.name + ".jsonl");
            for (const auto& size : pe.problem.mainSizes) {
                Json trace
                    = { { "definition", d.name }, { "workload", workloadOf(d, pe.problem, size) }, { "solution", name },
                          { "evaluation", evaluationOf(std::string(*status), r, session, size, row.index) } };
                addLine(traces, std::move(trace));
                ++summary.traces;
            }
        }
    }
    for (const auto& [relative, text] : lines)
        writeExportFile(dir / relative, text);
    summary.schemaProblems = checkTraceSet(dir);
    return summary;
}

} // namespace kl::fieldformats
