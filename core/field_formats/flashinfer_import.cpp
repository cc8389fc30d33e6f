#include "core/field_formats/flashinfer_import.h"

#include "core/field_formats/export_redaction.h"
#include "core/field_formats/flashinfer_check.h"
#include "core/field_formats/flashinfer_names.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/model/error.h"
#include "core/model/expression.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kl::fieldformats {

namespace {

constexpr std::size_t kMaxMainSizes = 64, kMaxFuzzSizes = 512;

std::string readText(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool definesTopLevel(const std::string& code, const std::string& function)
{
    std::istringstream in(code);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("def " + function + "(", 0) == 0)
            return true;
    return false;
}

struct Dataset {
    std::filesystem::path root;
    std::filesystem::path definitionFile; // when one was named by its file
};

Dataset datasetOf(const std::filesystem::path& source)
{
    std::error_code ec;
    if (std::filesystem::is_regular_file(source, ec)) {
        // definitions/<op_type>/<name>.json: the dataset is two folders up.
        const auto root = source.parent_path().parent_path().parent_path();
        return { root, source };
    }
    if (!std::filesystem::is_directory(source / "definitions", ec))
        throw Error("trace.not-a-dataset", source.string(), {},
            "not a FlashInfer Trace dataset: no definitions/ folder (give the dataset's folder or a definition's "
            ".json)");
    return { source, {} };
}

std::vector<std::filesystem::path> filesUnder(const std::filesystem::path& dir, const std::string& ext)
{
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        return files;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ext)
            files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

Json pickDefinition(const Dataset& set, const std::string& wanted, std::filesystem::path& file)
{
    std::vector<std::pair<std::filesystem::path, Json>> found;
    const auto candidates = set.definitionFile.empty() ? filesUnder(set.root / "definitions", ".json")
                                                       : std::vector { set.definitionFile };
    for (const auto& f : candidates) {
        auto j = Json::parse(readText(f), nullptr, false);
        if (j.is_discarded() || !j.is_object())
            throw Error("trace.bad-definition", f.string(), {}, "not a JSON object");
        if (wanted.empty() || textOf(j, "name") == wanted)
            found.emplace_back(f, std::move(j));
    }
    if (found.empty() && wanted.empty())
        throw Error("trace.no-definition", set.root.string(), {}, "the dataset holds no definition");
    if (found.empty())
        throw Error("trace.unknown-definition", set.root.string(), {}, "no definition named \"" + wanted + "\"");
    if (found.size() > 1) {
        std::string names;
        for (const auto& [f, j] : found)
            names += (names.empty() ? "" : ", ") + textOf(j, "name");
        throw Error("trace.which-definition", set.root.string(), {},
            "the dataset holds several definitions (" + names + "): name one with --definition");
    }
    file = found.front().first;
    return found.front().second;
}

// This definition's workload lines, from every workloads/**.jsonl (workload-only traces).
std::vector<Json> workloadsOf(const Dataset& set, const std::string& name)
{
    std::vector<Json> lines;
    for (const auto& f : filesUnder(set.root / "workloads", ".jsonl")) {
        std::istringstream in(readText(f));
        for (std::string line; std::getline(in, line);) {
            const auto t = Json::parse(line, nullptr, false);
            if (!t.is_discarded() && textOf(t, "definition") == name)
                lines.push_back(t);
        }
    }
    return lines;
}

std::string kernelLoopDTypeName(const std::string& flashInfer, const std::string& where, const std::string& file)
{
    const auto t = kernelLoopDType(flashInfer);
    if (!t)
        throw Error("trace.unsupported-dtype", file, where,
            "KernelLoop has no tensors of " + flashInfer
                + " (float16, bfloat16, float32, int8, int32, int64 are shared)");
    return std::string(dtypeName(*t));
}

// The problem JSON of a KernelLoop-exported problem whose reference is CUDA: the definition cannot say it
// (its reference is a stub), the export's "kernelloop" field kept it whole.
bool importCudaProblem(const Json& extension, const std::filesystem::path& out, ImportedProblem& imported)
{
    const auto& problem = fieldOf(extension, "problem");
    const auto referenceFile = textOf(extension, "reference_file");
    if (!problem.is_object() || referenceFile.empty() || referenceFile.ends_with(".py"))
        return false;
    writeExportFile(out / "problem.json", problem.dump(2) + "\n");
    writeExportFile(out / std::filesystem::path(referenceFile).filename(), textOf(extension, "reference_source"));
    if (const auto baseline = textOf(extension, "baseline_file"); !baseline.empty())
        writeExportFile(out / std::filesystem::path(baseline).filename(), textOf(extension, "baseline_source"));
    imported.problemFile = out / "problem.json";
    imported.mainSizes = int(fieldOf(fieldOf(problem, "sizes"), "main").size());
    imported.fuzzSizes = int(fieldOf(fieldOf(problem, "sizes"), "fuzz").size());
    imported.notes.push_back("the reference is CUDA C++: the problem is the one the export's kernelloop field kept");
    return true;
}

} // namespace

ImportedProblem importFlashInferTrace(const std::filesystem::path& source, const TraceImportOptions& options)
{
    const auto set = datasetOf(source);
    std::filesystem::path file;
    const Json d = pickDefinition(set, options.definition, file);
    const auto fileName = file.string();
    if (const auto problems = checkDefinition(d, file.filename().string()); !problems.empty()) {
        std::string text;
        for (std::size_t i = 0; i < problems.size() && i < 3; ++i)
            text += (i ? "; " : "") + problems[i];
        throw Error(
            "trace.bad-definition", fileName, {}, "the definition does not pass the FlashInfer Trace schema: " + text);
    }
    ImportedProblem imported;
    imported.definition = textOf(d, "name");
    const auto out = options.output.empty() ? std::filesystem::path(safeName(imported.definition)) : options.output;
    {
        std::error_code ec;
        if (std::filesystem::exists(out, ec)
            && (!std::filesystem::is_directory(out, ec)
                || (!options.overwrite
                    && std::filesystem::directory_iterator(out, ec) != std::filesystem::directory_iterator())))
            throw Error("trace.output-exists", out.string(), {},
                "the problem folder exists and is not empty (pass --force to write into it)");
    }
    const auto& extension = fieldOf(d, "kernelloop");
    const auto& kept = fieldOf(extension, "problem"); // what an export of ours kept of the problem
    if (importCudaProblem(extension, out, imported))
        return imported;

    const auto& axes = fieldOf(d, "axes");
    const auto& inputs = fieldOf(d, "inputs");
    const auto& outputs = fieldOf(d, "outputs");
    std::vector<std::string> symbols;
    std::map<std::string, std::int64_t> constants;
    for (const auto& [name, axis] : axes.items()) {
        symbols.push_back(name);
        if (textOf(axis, "type") == "const")
            constants[name] = fieldOf(axis, "value").get<std::int64_t>();
    }

    // Size sets from the workloads: const axes everywhere, var axes as each workload binds them.
    std::vector<std::pair<Json, std::string>> sizes; // size set, role
    std::set<std::map<std::string, std::int64_t>> seen;
    std::map<std::string, Json> scalarValues;
    const auto workloads = workloadsOf(set, imported.definition);
    bool fromFiles = false;
    for (const auto& line : workloads) {
        const auto& w = fieldOf(line, "workload");
        if (const auto problems = checkTrace(line, true, &d, "workload"); !problems.empty())
            throw Error("trace.bad-workload", fileName, textOf(w, "uuid"), problems.front());
        std::map<std::string, std::int64_t> values = constants;
        for (const auto& [name, v] : fieldOf(w, "axes").items())
            values[name] = v.get<std::int64_t>();
        for (const auto& [name, in] : fieldOf(w, "inputs").items()) {
            if (textOf(in, "type") == "scalar" && !scalarValues.count(name))
                scalarValues[name] = fieldOf(in, "value");
            if (textOf(in, "type") == "safetensors")
                fromFiles = true;
        }
        if (!seen.insert(values).second)
            continue;
        Json size = Json::object();
        const auto label = textOf(fieldOf(line, "kernelloop"), "size");
        if (!label.empty())
            size["label"] = label;
        for (const auto& s : symbols)
            size[s] = values[s];
        sizes.emplace_back(std::move(size), textOf(fieldOf(line, "kernelloop"), "role"));
    }
    bool anyVar = constants.size() < symbols.size();
    if (sizes.empty() && anyVar)
        throw Error("trace.no-workload", fileName, {},
            "the definition's var axes get values from its workloads, and workloads/ holds none for "
                + imported.definition);
    if (sizes.empty()) {
        Json size = Json::object();
        for (const auto& s : symbols)
            size[s] = constants[s];
        sizes.emplace_back(std::move(size), "main");
    }
    if (fromFiles)
        imported.notes.push_back("inputs the workloads read from safetensors files are drawn by KernelLoop instead");
    Json main = Json::array(), fuzz = Json::array();
    for (auto& [size, role] : sizes) {
        if (role != "fuzz" && main.size() < kMaxMainSizes)
            main.push_back(std::move(size));
        else if (fuzz.size() < kMaxFuzzSizes)
            fuzz.push_back(std::move(size));
    }
    if (main.empty()) // every workload marked fuzz: the first is timed
        main.push_back(fuzz[0]), fuzz.erase(fuzz.begin());
    if (sizes.size() > main.size() + fuzz.size())
        imported.notes.push_back("more workloads than KernelLoop verifies: the first " + std::to_string(main.size())
            + " are main sizes, " + std::to_string(fuzz.size()) + " fuzz sizes");

    // Tensors and scalars; KernelLoop's distributions and padded rows where an export of ours kept them.
    std::map<std::string, Json> keptTensors;
    for (const char* part : { "inputs", "outputs" })
        for (const auto& t : fieldOf(kept, part))
            keptTensors[textOf(t, "name")] = t;
    Json problemInputs = Json::array(), problemOutputs = Json::array(), scalars = Json::array();
    std::vector<std::string> inputOrder;
    std::string bytes;
    const auto tensorOf = [&](const std::string& name, const Json& spec, bool input) {
        const auto dtype
            = kernelLoopDTypeName(textOf(spec, "dtype"), std::string(input ? "inputs." : "outputs.") + name, fileName);
        Json t = { { "name", name }, { "dtype", dtype }, { "shape", fieldOf(spec, "shape") } };
        if (fieldOf(spec, "shape").empty())
            throw Error("trace.unsupported-shape", fileName, (input ? "inputs." : "outputs.") + name,
                "a 0-D tensor (shape []) has no KernelLoop form: give it shape null (a scalar) or one axis");
        const auto keptTensor = keptTensors.find(name);
        if (keptTensor != keptTensors.end()) {
            for (const char* f : { "distribution", "row_padding" })
                if (keptTensor->second.contains(f))
                    t[f] = keptTensor->second[f];
        } else if (input && (dtype == "i8" || dtype == "i32" || dtype == "i64")) {
            t["distribution"] = { { "kind", "integers" }, { "low", 0 }, { "high", 16 } };
            imported.notes.push_back(
                "integer input " + name + " drawn from integers(0, 16): say its range in problem.json");
        }
        std::string term = std::to_string(dtypeSize(*parseDType(dtype)));
        for (const auto& a : fieldOf(spec, "shape"))
            term += " * " + a.get<std::string>();
        bytes += (bytes.empty() ? "" : " + ") + term;
        return t;
    };
    for (const auto& [name, spec] : inputs.items()) {
        inputOrder.push_back(name);
        if (fieldOf(spec, "shape").is_null()) {
            const auto dtype = kernelLoopDTypeName(textOf(spec, "dtype"), "inputs." + name, fileName);
            const auto value = scalarValues.find(name);
            if (value == scalarValues.end() || !value->second.is_number())
                throw Error("trace.no-scalar-value", fileName, "inputs." + name,
                    "a scalar input needs its value from a workload (type scalar, a number)");
            scalars.push_back({ { "name", name }, { "dtype", dtype }, { "value", value->second } });
        } else {
            problemInputs.push_back(tensorOf(name, spec, true));
        }
    }
    for (const auto& [name, spec] : outputs.items()) {
        if (fieldOf(spec, "shape").is_null())
            throw Error("trace.scalar-output", fileName, "outputs." + name,
                "KernelLoop's outputs are tensors: a scalar output (shape null) has no buffer to verify");
        problemOutputs.push_back(tensorOf(name, spec, false));
    }

    // The reference: the definition's code and the reference(**tensors, **scalars) KernelLoop calls.
    const auto code = textOf(d, "reference");
    const auto keptSource = textOf(extension, "reference_source");
    std::string reference;
    if (!keptSource.empty() && textOf(extension, "reference_file").ends_with(".py") && code.rfind(keptSource, 0) == 0) {
        reference = keptSource; // an export of ours: the reference as written, before the run(...) it added
    } else {
        if (code.find("raise NotImplementedError") != std::string::npos
            && code.find("is CUDA C++") != std::string::npos)
            throw Error("trace.no-reference", fileName, "reference",
                "the definition's reference is a stub for a CUDA reference whose source it does not carry");
        std::string names;
        for (const auto& n : inputOrder)
            names += "\"" + n + "\", ";
        const std::string header = "# Imported by kernelloop-cli import-trace from the FlashInfer Trace definition "
            + imported.definition
            + ":\n# its reference, then the reference(**tensors, **scalars) KernelLoop's worker calls.\n";
        const std::string call
            = "\n\ndef reference(**tensors):\n"
              "    # run(...) takes the inputs in the definition's order and returns the outputs in theirs.\n"
              "    return _kl_definition_run(*(tensors[name] for name in ("
            + names + ")))\n";
        if (!definesTopLevel(code, "reference")) {
            reference
                = header + code + "\n\n_kl_definition_run = run" + call; // as written, for people and models to read
        } else {
            // The code has a reference of its own (an export of KernelLoop's without its kernelloop field): it
            // runs in a module of its own, so that the two do not call each other.
            reference = header
                + "import types as _kl_types\n\n_kl_definition = "
                  "_kl_types.ModuleType(\"flashinfer_definition\")\nexec(compile("
                + Json(code).dump() + ", \"<definition " + imported.definition
                + ">\", \"exec\"), _kl_definition.__dict__)\n_kl_definition_run = _kl_definition.run" + call;
        }
    }

    Json problem = Json::object();
    problem["name"] = safeName(imported.definition);
    problem["description"] = textOf(d, "description").empty() ? "FlashInfer Trace definition " + imported.definition
                                                              : textOf(d, "description");
    for (const char* f : { "arch", "language" })
        if (kept.contains(f))
            problem[f] = kept[f];
    Json constraints = Json::array();
    for (const auto& c : fieldOf(d, "constraints")) {
        // FlashInfer's constraints are Python; those that read as KernelLoop expressions at every size are kept.
        bool holds = c.is_string();
        for (const auto& group : { &main, &fuzz })
            for (const auto& s : *group) {
                Symbols values;
                for (const auto& sym : symbols)
                    values[sym] = double(s[sym].get<std::int64_t>());
                try {
                    holds = holds && evaluate(c.get<std::string>(), values) != 0.0;
                } catch (const Error&) {
                    holds = false;
                }
            }
        if (holds)
            constraints.push_back(c);
        else
            imported.notes.push_back("constraint \"" + (c.is_string() ? c.get<std::string>() : std::string("?"))
                + "\" left out: it does not read as a KernelLoop expression that holds at every size");
    }
    problem["sizes"] = { { "symbols", symbols }, { "main", main }, { "fuzz", fuzz }, { "constraints", constraints } };
    problem["inputs"] = problemInputs;
    problem["outputs"] = problemOutputs;
    if (!scalars.empty())
        problem["scalars"] = scalars;
    if (kept.contains("tolerances"))
        problem["tolerances"] = kept["tolerances"];
    problem["reference"] = "reference.py";
    const auto baselineFile = textOf(extension, "baseline_file");
    if (!baselineFile.empty() && !textOf(extension, "baseline_source").empty()) {
        problem["baseline"] = std::filesystem::path(baselineFile).filename().string();
        writeExportFile(out / std::filesystem::path(baselineFile).filename(), textOf(extension, "baseline_source"));
    }
    problem["bytes"] = kept.contains("bytes") ? kept["bytes"] : Json(bytes);
    for (const char* f : { "flops", "compute" })
        if (kept.contains(f))
            problem[f] = kept[f];
    writeExportFile(out / "reference.py", reference);
    writeExportFile(out / "problem.json", problem.dump(2) + "\n");
    imported.problemFile = out / "problem.json";
    imported.mainSizes = int(main.size());
    imported.fuzzSizes = int(fuzz.size());
    return imported;
}

} // namespace kl::fieldformats
