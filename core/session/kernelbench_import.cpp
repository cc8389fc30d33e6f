#include "core/session/kernelbench_import.h"

#include "core/compile/python_tool.h"
#include "core/compile/warm_python_tool.h"
#include "core/model/error.h"
#include "core/model/input_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

namespace kl::session {

namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json; // problem.json keeps the order a person reads it in
using json = ordered_json;

[[noreturn]] void refuse(const std::string& category, const std::string& file, const std::string& message)
{
    throw Error("kernelbench." + category, file, {}, message);
}

void writeFile(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        throw Error("kernelbench.cannot-write", path.string(), {}, "cannot write the file");
}

// One warm helper per interpreter and helper path: a folder of files pays Python's start and torch's
// import once (about 3 s on 2 cores), each file runs in a forked child with its own time limit.
PythonToolRun runHelper(const fs::path& helper, const std::string& request, std::chrono::seconds limit)
{
    const std::string python = pythonExecutable();
    if (const char* warm = std::getenv("KL_KERNELBENCH_WARM"); warm && std::string_view(warm) == "0")
        return runPythonTool(python, helper, request, limit);
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, std::unique_ptr<WarmPythonTool>> tools;
    WarmPythonTool* tool = nullptr;
    {
        std::lock_guard lock(mutex);
        auto& slot = tools[{ python, helper.string() }];
        if (!slot)
            slot = std::make_unique<WarmPythonTool>(python, helper, 1);
        tool = slot.get();
    }
    return tool->run(request, limit);
}

// What the helper found, or its categorised refusal as an Error.
json introspect(const KernelBenchImport& o)
{
    const auto helper = pythonHelperPath("kernelbench_import.py", "KL_KERNELBENCH_HELPER");
    if (!fs::is_regular_file(helper))
        refuse("missing-helper", o.file, missingHelperMessage(helper, "KL_KERNELBENCH_HELPER"));
    const json request = { { "file", fs::absolute(o.file).string() } };
    const auto run = runHelper(helper, request.dump(), std::chrono::seconds(o.timeoutSeconds));
    if (!run.started)
        refuse(
            "needs-pytorch", o.file, "needs PyTorch: " + run.stderrText + " (set KL_PYTHON to a Python with PyTorch)");
    if (run.timedOut)
        refuse("timeout", o.file,
            "importing and running the Model took over " + std::to_string(o.timeoutSeconds)
                + " s (a loop at import time or in forward?); --timeout gives it longer");
    json reply;
    try {
        reply = json::parse(run.reply);
    } catch (const json::exception&) {
        // The user's module can end the interpreter itself (os._exit, a crash in an extension).
        refuse("helper-died", o.file,
            "the import ended (status " + std::to_string(run.exitStatus) + ") without a reply: "
                + run.stderrText.substr(run.stderrText.size() > 2000 ? run.stderrText.size() - 2000 : 0));
    }
    if (!reply.value("ok", false)) {
        const auto& error = reply.at("error");
        refuse(error.value("category", "unknown"), o.file, error.value("message", "refused"));
    }
    auto reference = run.files.find("reference.py");
    if (reference == run.files.end())
        throw std::runtime_error("the KernelBench helper wrote no reference.py");
    reply["reference_source"] = reference->second;
    return reply;
}

std::string sizesLabel(const json& symbols)
{
    std::string label;
    for (const auto& s : symbols)
        label += (label.empty() ? "" : "x") + std::to_string(s.at("main").get<std::int64_t>());
    return label;
}

// problem.json from the helper's reply: one main size (KernelBench's), the fuzz sizes it kept.
ordered_json problemJson(const json& reply, const std::string& sourceName, const std::string& baselineName)
{
    ordered_json p;
    p["name"] = reply.at("name");
    p["description"] = "Imported from the KernelBench problem " + sourceName
        + " by kernelloop-cli import-kernelbench: compute what its Model.forward does (reference.py, PyTorch); "
          "the Model's parameters are inputs. PyTorch eager is the time to beat (\"vs eager\").";
    p["arch"] = "sm_90";
    ordered_json sizes;
    sizes["symbols"] = ordered_json::array();
    ordered_json main = { { "label", sizesLabel(reply.at("symbols")) } };
    for (const auto& s : reply.at("symbols")) {
        sizes["symbols"].push_back(s.at("name"));
        main[s.at("name").get<std::string>()] = s.at("main");
    }
    sizes["main"] = ordered_json::array({ main });
    sizes["fuzz"] = ordered_json::array();
    // The Model's own constraints found by the import (a multiple of its groups, at least its kernel):
    // every size set of the problem must satisfy them, as every one the import chose does.
    if (reply.contains("constraints") && !reply["constraints"].empty())
        sizes["constraints"] = reply["constraints"];
    // No size rule: verified at KernelBench's sizes only, and the problem says why (check, history, export).
    if (reply.contains("fixed_sizes") && reply["fixed_sizes"].is_string())
        sizes["fixed"] = reply["fixed_sizes"];
    for (const auto& f : reply.at("fuzz")) {
        ordered_json set;
        for (const auto& s : reply.at("symbols"))
            set[s.at("name").get<std::string>()] = f.at(s.at("name").get<std::string>());
        sizes["fuzz"].push_back(set);
    }
    p["sizes"] = sizes;
    p["inputs"] = ordered_json::array();
    for (const auto& t : reply.at("inputs"))
        p["inputs"].push_back({ { "name", t.at("name") }, { "dtype", t.at("dtype") }, { "shape", t.at("shape") },
            { "distribution", t.at("distribution") } });
    p["outputs"] = ordered_json::array();
    json tolerances = json::object();
    for (const auto& t : reply.at("outputs")) {
        p["outputs"].push_back({ { "name", t.at("name") }, { "dtype", t.at("dtype") }, { "shape", t.at("shape") } });
        // float32 as KernelBench computes it, summed in another order by a kernel: 1e-4, not fp32's 1e-5.
        if (t.at("dtype") == "f32")
            tolerances["f32"] = { { "atol", 1e-4 }, { "rtol", 1e-4 } };
    }
    if (!reply.at("scalars").empty())
        p["scalars"] = reply.at("scalars");
    if (!tolerances.empty())
        p["tolerances"] = tolerances;
    p["reference"] = "reference.py";
    if (!baselineName.empty())
        p["baseline"] = baselineName;
    p["bytes"] = reply.at("bytes");
    // Matrix products and convolutions counted on meta tensors (python/kernelloop/flop_count.py); absent
    // where they could not be written over the symbols.
    if (reply.contains("flops") && reply["flops"].is_string())
        p["flops"] = reply["flops"];
    return p;
}

} // namespace

ImportedProblem importKernelBench(const KernelBenchImport& o)
{
    if (!fs::is_regular_file(o.file))
        refuse("no-file", o.file, "no such file");
    if (o.timeoutSeconds < 1 || o.timeoutSeconds > 3600)
        throw Error("kernelbench.bad-timeout", o.file, "timeout", "give 1 to 3600 seconds");
    std::string baselineSource;
    if (!o.baseline.empty())
        baselineSource = readInputFile(o.baseline, 4 * 1024 * 1024, "baseline");
    const json reply = introspect(o);
    const fs::path dir = o.output.empty() ? fs::path(reply.at("name").get<std::string>()) : fs::path(o.output);
    if (fs::exists(dir / "problem.json") && !o.force)
        throw Error("kernelbench.exists", (dir / "problem.json").string(), {},
            "the folder already holds a problem; --force replaces it");
    std::error_code made;
    fs::create_directories(dir, made);
    if (made)
        throw Error("kernelbench.cannot-write", dir.string(), {}, made.message());
    const std::string baselineName = o.baseline.empty() ? std::string()
        : fs::path(o.baseline).extension() == ".py"     ? std::string("baseline.py")
                                                        : std::string("baseline.cu");
    const std::string sourceName = fs::path(o.file).filename().string();
    writeFile(dir / "reference.py", reply.at("reference_source").get<std::string>());
    if (!baselineName.empty())
        writeFile(dir / baselineName, baselineSource);
    writeFile(dir / "problem.json", problemJson(reply, sourceName, baselineName).dump(2) + "\n");
    const Problem problem = loadProblem(dir / "problem.json"); // the same checks as any problem's
    ImportedProblem imported { dir / "problem.json", problem, {}, {} };
    for (const auto& dropped : reply.at("dropped_fuzz"))
        imported.droppedFuzz.emplace_back(dropped.at("sizes").dump(), dropped.at("reason").get<std::string>());
    if (reply.contains("notes"))
        for (const auto& note : reply["notes"])
            imported.notes.push_back(note.get<std::string>());
    return imported;
}

// The .py files to import: each file given, and the .py files directly in each folder given (sorted).
std::vector<std::string> kernelBenchFiles(const std::vector<std::string>& given)
{
    std::vector<std::string> files;
    for (const auto& g : given) {
        std::error_code error;
        if (!fs::is_directory(g, error)) {
            files.push_back(g);
            continue;
        }
        std::vector<std::string> inFolder;
        for (const auto& entry : fs::directory_iterator(g, error))
            if (entry.is_regular_file() && entry.path().extension() == ".py")
                inFolder.push_back(entry.path().string());
        if (error)
            throw Error("kernelbench.unreadable", g, {}, error.message());
        std::sort(inFolder.begin(), inFolder.end());
        files.insert(files.end(), inFolder.begin(), inFolder.end());
    }
    return files;
}

ImportedProblem problemFromPyTorchFile(const std::string& file)
{
    const fs::path dir = fs::path(file).parent_path() / fs::path(file).stem();
    std::error_code error;
    if (fs::is_regular_file(dir / "problem.json", error))
        return { dir / "problem.json", loadProblem(dir / "problem.json"), {}, {} };
    KernelBenchImport o;
    o.file = file;
    o.output = dir.string();
    return importKernelBench(o);
}

} // namespace kl::session
