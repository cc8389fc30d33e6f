#include "core/compile/inductor_kernel.h"

#include "core/compile/python_tool.h"
#include "core/model/error.h"
#include "core/model/expression.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace kl {

namespace {

using json = nlohmann::json;

// Every symbol differs from `a` and none is 0 or 1 (which torch.compile specialises even with
// dynamic shapes, compiling a kernel of its own for them).
bool allDiffer(const SizeSet& a, const SizeSet& b)
{
    for (const auto& [name, value] : a.values) {
        const auto other = b.values.find(name);
        if (other == b.values.end() || other->second == value || other->second < 2)
            return false;
    }
    return true;
}

double elements(const SizeSet& s)
{
    double n = 1;
    for (const auto& [name, value] : s.values)
        n *= double(value);
    return n;
}

json shapeAt(const TensorSpec& t, const SizeSet& sizes, const Problem& problem)
{
    json shape = json::array();
    for (const auto& d : t.shape)
        shape.push_back(std::llround(evaluate(d, sizes.symbols(), problem.file.string(), t.name)));
    return shape;
}

} // namespace

std::vector<const SizeSet*> inductorSizes(const Problem& problem)
{
    std::vector<const SizeSet*> sizes;
    if (problem.mainSizes.empty())
        return sizes;
    sizes.push_back(&problem.mainSizes.front());
    if (problem.mainSizes.size() > 1 && allDiffer(problem.mainSizes[0], problem.mainSizes[1])) {
        sizes.push_back(&problem.mainSizes[1]);
        return sizes;
    }
    // The largest such fuzz size: Inductor's choices there are nearest to the main size's.
    const SizeSet* second = nullptr;
    for (const auto& f : problem.fuzzSizes)
        if (allDiffer(problem.mainSizes.front(), f) && (!second || elements(f) > elements(*second)))
            second = &f;
    if (second) {
        sizes.push_back(second);
        return sizes;
    }
    if (!problem.fuzzSizes.empty())
        sizes.push_back(&problem.fuzzSizes.front());
    else if (problem.mainSizes.size() > 1)
        sizes.push_back(&problem.mainSizes[1]);
    return sizes;
}

std::string inductorRequest(const Problem& problem)
{
    if (!problem.pythonReference)
        throw Error("problem.no-pytorch-reference", problem.file.string(), "reference",
            "torch.compile's kernel needs a PyTorch reference (reference.py); this problem's is CUDA");
    const auto sizes = inductorSizes(problem);
    if (sizes.size() < 2)
        throw Error("inductor.one-size", problem.file.string(), "sizes",
            "the kernel's size arguments are read at two sizes: give a second main size or a fuzz size");
    json request = { { "reference", std::filesystem::absolute(problem.pythonReference->fileName).string() },
        { "problem", problem.name } };
    request["sizes"] = json::array();
    for (const auto* s : sizes)
        request["sizes"].push_back(s->values);
    request["tensors"] = json::array();
    for (const auto* list : { &problem.inputs, &problem.outputs })
        for (const auto& t : *list) {
            json shapes = json::array();
            for (const auto* s : sizes)
                shapes.push_back(shapeAt(t, *s, problem));
            request["tensors"].push_back({ { "name", t.name }, { "role", list == &problem.inputs ? "input" : "output" },
                { "dtype", std::string(dtypeName(t.dtype)) }, { "shapes", shapes } });
        }
    request["scalars"] = json::object();
    for (const auto& s : problem.scalars)
        request["scalars"][s.name] = s.value;
    return request.dump();
}

InductorKernel readInductorReply(const std::string& replyJson, const Problem& problem)
{
    json reply;
    try {
        reply = json::parse(replyJson);
    } catch (const json::exception&) {
        throw Error("inductor.failed", problem.file.string(), {}, "the Inductor helper gave no readable reply");
    }
    if (!reply.value("ok", false)) {
        const auto error = reply.value("error", json::object());
        throw Error("inductor." + error.value("category", std::string("failed")), problem.file.string(), {},
            error.value("message", std::string("the Inductor helper refused")));
    }
    InductorKernel out;
    const auto fileName = (problem.dir / "inductor.py").string();
    out.candidate = parseCandidate(reply.value("candidate", std::string()), fileName);
    if (out.candidate.launches.size() != 1)
        throw Error("inductor.launches", fileName, {}, "the converted kernel has no single launch");
    for (const auto& note : reply.value("notes", json::array()))
        out.notes.push_back(note.get<std::string>());
    return out;
}

InductorKernel inductorKernel(const Problem& problem, std::chrono::seconds limit)
{
    const auto request = inductorRequest(problem);
    const auto helper = pythonHelperPath("inductor_kernel.py", "KL_INDUCTOR_HELPER");
    if (!std::filesystem::is_regular_file(helper))
        throw Error("inductor.missing-helper", helper.string(), {}, missingHelperMessage(helper, "KL_INDUCTOR_HELPER"));
    const auto run = runPythonTool(pythonExecutable(), helper, request, limit);
    if (!run.started)
        throw Error("inductor.needs-inductor", problem.file.string(), {},
            "cannot start Python for torch.compile: " + run.stderrText + " (set KL_PYTHON)");
    if (run.timedOut)
        throw Error("inductor.timeout", problem.file.string(), {},
            "torch.compile took over " + std::to_string(limit.count()) + " s");
    if (run.reply.empty())
        throw Error("inductor.failed", problem.file.string(), {},
            "the Inductor helper ended (status " + std::to_string(run.exitStatus) + ") without a reply: "
                + run.stderrText.substr(run.stderrText.size() > 2000 ? run.stderrText.size() - 2000 : 0));
    return readInductorReply(run.reply, problem);
}

} // namespace kl
