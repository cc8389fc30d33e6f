// kernelloop-cli import-kernelbench FILE.py [-o DIR] [--baseline FILE] [--force] [--timeout S]
// Turns a KernelBench problem (a torch.nn.Module Model with get_inputs() / get_init_inputs()) into a
// KernelLoop problem folder: problem.json, reference.py (a PyTorch reference around Model) and a
// baseline. The Python helper python/kernelloop/kernelbench_import.py does the introspection; this
// side writes the folder and loads it back as any problem is loaded, so what it writes is checked.
#include "cli/command.h"

#include "core/compile/python_tool.h"
#include "core/model/error.h"
#include "core/model/input_file.h"
#include "core/model/problem.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace kl::cli {

namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json; // problem.json keeps the order a person reads it in
using json = ordered_json;

struct ImportOptions {
    std::string file;
    std::string output;
    std::string baseline;
    int timeoutSeconds = 120;
    bool force = false;
};

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

// What the helper found, or its categorised refusal as an Error.
json introspect(const ImportOptions& o)
{
    const auto helper = pythonHelperPath("kernelbench_import.py", "KL_KERNELBENCH_HELPER");
    if (!fs::is_regular_file(helper))
        refuse("needs-pytorch", o.file, "the helper " + helper.string() + " is missing (set KL_KERNELBENCH_HELPER)");
    const json request = { { "file", fs::absolute(o.file).string() } };
    const auto run = runPythonTool(pythonExecutable(), helper, request.dump(), std::chrono::seconds(o.timeoutSeconds));
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
    p["baseline"] = baselineName;
    p["bytes"] = reply.at("bytes");
    return p;
}

// A Triton starting point that names the launch's arguments (inputs, outputs, sizes, scalars) and
// refuses to compile until its body is written: the problem needs some baseline to load.
std::string tritonSkeleton(const json& reply)
{
    std::string args, params, grid = "1";
    for (const auto* list : { &reply.at("inputs"), &reply.at("outputs") })
        for (const auto& t : *list) {
            args += (args.empty() ? "" : ", ") + t.at("name").get<std::string>();
            params += (params.empty() ? "" : ", ") + t.at("name").get<std::string>() + "_ptr";
        }
    for (const auto& s : reply.at("symbols")) {
        args += ", " + s.at("name").get<std::string>();
        params += ", " + s.at("name").get<std::string>();
    }
    for (const auto& s : reply.at("scalars")) {
        args += ", " + s.at("name").get<std::string>();
        params += ", " + s.at("name").get<std::string>();
    }
    const auto& out = reply.at("outputs").at(0).at("shape");
    grid.clear();
    for (const auto& d : out)
        grid += (grid.empty() ? "" : " * ") + ("(" + d.get<std::string>() + ")");
    return "# Starting point for " + reply.at("name").get<std::string>()
        + " (written by kernelloop-cli import-kernelbench): write the kernel's body so that it computes\n"
          "# what reference.py's Model does, or import again with --baseline FILE. It does not compile as it is.\n"
          "import triton\nimport triton.language as tl\n\n# @kl tunable BLOCK = 1024 in 64..8192 pow2\n"
          "# @kl launch kernel grid=(cdiv("
        + grid + ", BLOCK)) num_warps=(4) args=(" + args + ", BLOCK=BLOCK)\n\n\n@triton.jit\ndef kernel(" + params
        + ", BLOCK: tl.constexpr):\n    tl.static_assert(False, \"write this kernel: see reference.py\")\n";
}

int runImport(const ImportOptions& o)
{
    if (!fs::is_regular_file(o.file))
        refuse("no-file", o.file, "no such file");
    if (o.timeoutSeconds < 1 || o.timeoutSeconds > 3600)
        throw Error("cli.bad-option", {}, "--timeout", "give 1 to 3600 seconds");
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
    const bool triton = o.baseline.empty() || fs::path(o.baseline).extension() == ".py";
    const std::string baselineName = triton ? "baseline.py" : "baseline.cu";
    const std::string sourceName = fs::path(o.file).filename().string();
    writeFile(dir / "reference.py", reply.at("reference_source").get<std::string>());
    writeFile(dir / baselineName, o.baseline.empty() ? tritonSkeleton(reply) : baselineSource);
    writeFile(dir / "problem.json", problemJson(reply, sourceName, baselineName).dump(2) + "\n");
    const Problem problem = loadProblem(dir / "problem.json"); // the same checks as any problem's

    std::cout << "imported " << sourceName << " into " << (dir / "problem.json").string() << "\n  sizes: ";
    for (const auto& s : reply.at("symbols"))
        std::cout << s.at("name").get<std::string>() << "=" << s.at("main") << " ";
    std::cout << "(main), " << problem.fuzzSizes.size() << " fuzz size sets\n  inputs:";
    for (const auto& t : problem.inputs)
        std::cout << " " << t.name;
    std::cout << "  outputs:";
    for (const auto& t : problem.outputs)
        std::cout << " " << t.name;
    std::cout << "\n  bytes: " << problem.bytesExpression << "\n";
    for (const auto& dropped : reply.at("dropped_fuzz"))
        std::cout << "  left out fuzz sizes " << dropped.at("sizes").dump() << ": "
                  << dropped.at("reason").get<std::string>() << "\n";
    if (o.baseline.empty())
        std::cout << "  baseline.py is a Triton skeleton with the launch's arguments: write its kernel, or import "
                     "again with --baseline FILE\n";
    return Ok;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<ImportOptions>();
    auto* sub = app.add_subcommand(
        "import-kernelbench", "Turn a KernelBench problem (Model, get_inputs, get_init_inputs) into a problem folder");
    sub->add_option("file", options->file, "the KernelBench problem (.py)")->required();
    sub->add_option("-o,--output", options->output, "the folder to write (default: the file's name)");
    sub->add_option("--baseline", options->baseline, "a starting candidate (.py Triton or .cu CUDA) to copy in");
    sub->add_option("--timeout", options->timeoutSeconds, "seconds the import may take (default 120)");
    sub->add_flag("--force", options->force, "replace a problem already in the folder");
    return [options] { return runImport(*options); };
});

} // namespace

} // namespace kl::cli
