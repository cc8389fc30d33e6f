// buildEvaluateRequest: launch plans (core/model/launch_plan.h) for each case and program,
// written in the protocol's terms with kernels renamed to the symbols in the cubins.
#include "core/lines/tensor_instructions.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/launch_plan.h"
#include "core/runnerclient/evaluate_job.h"

namespace kl {

namespace {

using protocol::CaseKind;

std::string lineOf(int line) { return "line " + std::to_string(line); }

// Rethrows a planning error with the case it happened at, keeping its category and location.
[[noreturn]] void rethrowAt(const Error& e, const std::string& role, const CasePlan& c)
{
    throw Error(e.category(), e.file(), e.where(),
        e.message() + " (" + role + ", " + std::string(protocol::caseKindName(c.kind)) + " size " + c.label + ")");
}

const KernelResources* findKernel(const CompileResult& compiled, const std::string& name)
{
    for (const auto& k : compiled.kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

protocol::Program toProgram(const LaunchPlan& plan, const CompiledCandidate& program)
{
    const auto& candidate = program.tuned.candidate;
    protocol::Program out;
    for (const auto& b : plan.buffers)
        if (b.role == PlannedBuffer::Role::Scratch)
            out.scratch.push_back(protocol::Scratch { b.name, b.dtype, b.elements(), b.zeroed });
    for (std::size_t i = 0; i < plan.launches.size(); ++i) {
        const auto& l = plan.launches[i];
        const int line = i < candidate.launches.size() ? candidate.launches[i].line : 0;
        const auto* kernel = findKernel(program.compiled, l.kernel);
        if (!kernel || kernel->loweredName.empty())
            throw Error("request.missing-kernel", candidate.fileName, lineOf(line),
                "launch of " + l.kernel + ": the compiled module has no kernel of that name");
        protocol::Launch launch;
        launch.kernel = kernel->loweredName;
        launch.grid = l.grid;
        launch.block = l.block;
        launch.sharedBytes = l.sharedBytes + kernel->launchSharedBytes;
        for (const auto& a : l.args) {
            if (a.kind == PlannedArg::Kind::Buffer) {
                launch.args.emplace_back(protocol::BufferArg { a.buffer });
                continue;
            }
            try {
                launch.args.emplace_back(protocol::makeScalarArg(a.type, a.value));
            } catch (const Error& e) {
                throw Error(e.category(), candidate.fileName, lineOf(line), l.kernel + ": argument " + e.message());
            }
        }
        // Triton's own trailing pointers: a scratch buffer per program where its compiler asks for
        // one, else null (an 8-byte zero).
        for (const auto& extra : kernel->implicitParameters) {
            if (extra.bytesPerProgram <= 0) {
                launch.args.emplace_back(protocol::makeScalarArg(DType::I64, 0.0));
                continue;
            }
            const std::string name = "kl_" + extra.name + "_" + std::to_string(i);
            out.scratch.push_back(protocol::Scratch { name, DType::U8, extra.bytesPerProgram * l.blocks(), false });
            launch.args.emplace_back(protocol::BufferArg { name });
        }
        out.launches.push_back(std::move(launch));
    }
    return out;
}

std::vector<protocol::Buffer> toBuffers(const Problem& problem, const LaunchPlan& plan)
{
    std::vector<protocol::Buffer> buffers;
    for (const auto& b : plan.buffers) {
        if (b.role == PlannedBuffer::Role::Scratch)
            continue;
        protocol::Buffer buffer { b.name, b.role, b.dtype, b.rows, b.rowLength, b.rowStride, std::nullopt };
        if (b.role == PlannedBuffer::Role::Input)
            buffer.distribution = problem.tensor(b.name)->distribution;
        buffers.push_back(std::move(buffer));
    }
    return buffers;
}

} // namespace

const CompiledCandidate* EvaluateJob::firstCompileFailure() const
{
    for (const auto* p : { &reference, &candidate })
        if (!p->compiled.ok)
            return p;
    if (baseline && !baseline->compiled.ok)
        return &*baseline;
    return nullptr;
}

std::vector<CasePlan> planCases(const Problem& problem)
{
    std::vector<CasePlan> cases;
    for (const auto& s : problem.mainSizes)
        cases.push_back(CasePlan { s.label, CaseKind::Main, &s, false, true });
    for (const auto& s : problem.fuzzSizes)
        cases.push_back(CasePlan { s.label, CaseKind::Fuzz, &s, false, false });
    if (problem.hasRowPadding()) {
        // The first main size catches stride bugs at scale; the fuzz sizes at the odd shapes.
        if (!problem.mainSizes.empty())
            cases.push_back(CasePlan {
                problem.mainSizes.front().label, CaseKind::Padded, &problem.mainSizes.front(), true, false });
        for (const auto& s : problem.fuzzSizes)
            cases.push_back(CasePlan { s.label, CaseKind::Padded, &s, true, false });
    }
    return cases;
}

protocol::EvaluateRequest buildEvaluateRequest(
    const Problem& problem, const EvaluateJob& job, const protocol::EvaluateOptions& options, std::string id)
{
    if (const auto* failed = job.firstCompileFailure())
        throw Error("request.not-compiled", failed->tuned.candidate.fileName, "",
            "cannot evaluate before it compiles: " + failed->compiled.summary);

    protocol::EvaluateRequest request;
    request.id = std::move(id);
    request.options = options;
    request.modules.reference.cubin = job.reference.compiled.cubin;
    if (problem.pythonReference) {
        protocol::PythonReference python { problem.pythonReference->source, problem.pythonReference->fileName, {} };
        for (const auto& s : problem.scalars)
            python.scalars[s.name] = s.value;
        request.pythonReference = std::move(python);
    }
    request.modules.candidate.cubin = job.candidate.compiled.cubin;
    if (job.baseline)
        request.modules.baseline = protocol::Module { job.baseline->compiled.cubin };
    for (const auto& t : problem.outputs)
        request.tolerances[t.dtype] = problem.tolerance(t.dtype);

    const auto plan = [&](const CompiledCandidate& program, const CasePlan& c, const char* role) {
        try {
            return planLaunches(problem, program.tuned.candidate, *c.sizes, program.tuned.tunables, c.padded);
        } catch (const Error& e) {
            rethrowAt(e, role, c);
        }
    };

    // The ceiling the FLOPs are held to: the problem's, or its inputs' tensor precision where the
    // candidate's PTX issues tensor-core instructions (a floor it could otherwise beat).
    const auto tensor = lines::countTensorInstructions({}, job.candidate.compiled.ptx);
    const ComputeCeiling ceiling = problem.computeCeiling(tensor && tensor->count > 0);
    for (const auto& c : planCases(problem)) {
        protocol::Case out;
        out.label = c.label;
        out.kind = c.kind;
        out.timed = c.timed;
        out.bytes = problem.bytes(*c.sizes);
        out.flops = problem.flops(*c.sizes);
        out.compute = ceiling.precision;
        out.computeReason = ceiling.reason;
        const auto candidatePlan = plan(job.candidate, c, "candidate");
        out.buffers = toBuffers(problem, candidatePlan);
        if (problem.pythonReference) { // the worker sees each tensor in its own shape
            for (const auto* list : { &problem.inputs, &problem.outputs })
                for (const auto& t : *list)
                    for (const auto& dim : t.shape)
                        out.shapes[t.name].push_back(evaluateInteger(dim, c.sizes->symbols(), problem.file.string()));
        } else {
            out.programs.reference = toProgram(plan(job.reference, c, "reference"), job.reference);
        }
        out.programs.candidate = toProgram(candidatePlan, job.candidate);
        // The baseline is only timed, so it is only planned where timing happens: a baseline
        // constraint that fails at a fuzz size is no concern of the candidate's.
        if (job.baseline && c.timed)
            out.programs.baseline = toProgram(plan(*job.baseline, c, "baseline"), *job.baseline);
        request.cases.push_back(std::move(out));
    }
    return request;
}

} // namespace kl
