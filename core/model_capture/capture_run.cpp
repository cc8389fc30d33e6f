#include "core/model_capture/capture_run.h"

#include "core/compile/python_tool.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/model_capture/capture_json.h"
#include "core/model_capture/ranking_text.h"

#include <fstream>

namespace kl::model_capture {

namespace {

namespace fs = std::filesystem;

void writeFile(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        throw Error("model.cannot-write", path.string(), {}, "cannot write the file");
}

} // namespace

std::string runModelHelper(const std::string& request, const std::string& file, int timeoutSeconds)
{
    const auto helper = pythonHelperPath("model_capture.py", "KL_MODEL_HELPER");
    if (!fs::is_regular_file(helper))
        throw Error("model.missing-helper", file, {}, missingHelperMessage(helper, "KL_MODEL_HELPER"));
    const auto run = runPythonTool(pythonExecutable(), helper, request, std::chrono::seconds(timeoutSeconds));
    if (!run.started)
        throw Error("model.missing-package", file, {},
            "cannot run Python: " + run.stderrText + " (set KL_PYTHON to a Python with PyTorch)");
    if (run.timedOut)
        throw Error("model.timeout", file, {},
            "the model took over " + std::to_string(timeoutSeconds) + " s (--timeout gives it longer)");
    if (run.reply.empty() && run.exitStatus == 128 + 9)
        throw Error("model.killed", file, {},
            "the helper was killed (signal 9; most often the kernel's out-of-memory killer: the model at its own "
            "sizes does not fit this machine's memory)");
    if (run.reply.empty())
        throw Error("model.helper-died", file, {},
            "the helper ended (status " + std::to_string(run.exitStatus) + ") without a reply: "
                + run.stderrText.substr(run.stderrText.size() > 2000 ? run.stderrText.size() - 2000 : 0));
    return run.reply;
}

ModelRun captureModel(const ModelOptions& o)
{
    if (!fs::is_regular_file(o.file))
        throw Error("model.no-file", o.file, {}, "no such file");
    if (o.timeoutSeconds < 1 || o.timeoutSeconds > 3600)
        throw Error("model.bad-option", o.file, "--timeout", "give 1 to 3600 seconds");
    if (o.top && (*o.top < 1 || *o.top > 64))
        throw Error("model.bad-option", o.file, "--top", "give 1 to 64 operators");
    const fs::path dir = o.output.empty() ? fs::path(fs::path(o.file).stem()) : fs::path(o.output);
    if (fs::exists(dir / "model.json") && !o.force)
        throw Error("model.exists", (dir / "model.json").string(), {},
            "the folder already holds a captured model; --force replaces it");
    CaptureRequest request { fs::absolute(o.file).string(), o.seed, o.evalMode };
    ModelRun run;
    run.dir = dir;
    run.capture = decodeCapture(runModelHelper(captureRequestJson(request), o.file, o.timeoutSeconds), o.file);
    const Ranking ranking = estimateRanking(run.capture);
    const auto groups = chooseProblems(run.capture, ranking, o.top);
    ProblemsReply problems;
    if (!groups.empty())
        problems = decodeProblems(
            runModelHelper(problemsRequestJson(request, run.capture.method, groups), o.file, o.timeoutSeconds), o.file);
    std::error_code made;
    fs::create_directories(dir, made);
    if (made)
        throw Error("model.cannot-write", dir.string(), {}, made.message());
    ModelFolder& folder = run.folder;
    folder.model = run.capture.model;
    folder.method = run.capture.method;
    folder.note = run.capture.note;
    folder.ranking = ranking;
    folder.refused = problems.refused;
    for (const auto& draft : problems.problems) {
        const ProblemGroup* group = nullptr;
        for (const auto& g : groups)
            if (g.name == draft.name)
                group = &g;
        if (!group)
            continue;
        const fs::path pdir = dir / draft.name;
        fs::create_directories(pdir, made);
        writeFile(pdir / "reference.py", draft.referenceSource);
        writeFile(pdir / "problem.json", problemJson(draft, *group, run.capture));
        try {
            loadProblem(pdir / "problem.json"); // the same checks as any problem's
        } catch (const Error& e) {
            folder.refused.push_back({ draft.name, e.category(), e.message() });
            fs::remove_all(pdir, made);
            continue;
        }
        FolderProblem p;
        p.name = draft.name;
        p.ops = draft.ops;
        for (const auto& id : draft.ops)
            if (const auto* op = run.capture.find(id))
                p.labels.push_back(op->label);
        p.fused = group->fused;
        p.share = group->share;
        p.timeUs = group->timeUs;
        p.inputs = draft.inputs;
        p.outputs = draft.outputs;
        p.patchMode = draft.patchMode;
        p.patchWhy = draft.patchWhy;
        p.patchSpec = draft.patchSpec;
        folder.problems.push_back(std::move(p));
    }
    writeModelFolder(dir, folder);
    writeFile(dir / "ranking.txt", rankingText(folder, 1 << 20) + "\n" + problemsText(folder));
    return run;
}

} // namespace kl::model_capture
