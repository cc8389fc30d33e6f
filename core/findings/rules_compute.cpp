// The compute side of a compute-bound kernel: how busy the tensor pipes are against speed of light, and
// whether a kernel whose FLOPs run in a tensor precision uses the tensor cores at all.
#include "core/findings/rules.h"

namespace kl::rules {

namespace {

using S = Finding::Severity;

// Whether the kernel's FLOPs, not its bytes, set its floor: the runner's speed-of-light bound, else the
// roofline against the precision's ceiling.
bool computeSide(const Telemetry& t, const FindingThresholds& th)
{
    if (t.solBound)
        return *t.solBound == kl::Bound::Compute;
    const auto r = roofline(t, th);
    return r && r->bound != Bound::Memory;
}

std::string precisionText(const Telemetry& t)
{
    return t.precision ? std::string(precisionName(*t.precision)) : std::string("tensor");
}

// "an fp16", "a bf16", "a tf32".
std::string withArticle(const std::string& name)
{
    return (name.starts_with("bf") || name.starts_with("tf") ? "a " : "an ") + name;
}

// Why the tensor cores did nothing, when they did nothing: no tensor-core instruction in the code (SASS,
// else PTX), or none executed (sm__inst_executed_pipe_tensor.sum = 0). Empty when they did work or
// nothing says.
std::string noTensorWork(const Telemetry& t)
{
    if (t.tensorInstructions)
        return t.tensorInstructions->count == 0 ? t.tensorInstructions->text() : std::string();
    if (const auto executed = t.metric(metric::kTensorInstructions); executed && *executed == 0.0)
        return std::string(metric::kTensorInstructions) + " = 0";
    return {};
}

// "an fp16 compute-bound kernel issued no tensor-core instructions".
void noTensorInstructions(Context& c, const std::string& why)
{
    const auto& t = c.t;
    const auto sol = positive(t.pctOfSol);
    auto& f = add(c, "compute.no-tensor-instructions", S::Critical, 0.95,
        withArticle(precisionText(t)) + " compute-bound kernel issued no tensor-core instructions (" + why + ")",
        "The problem's FLOPs run in " + std::string(precisionLabel(*t.precision))
            + " and its arithmetic intensity makes it compute-bound, yet the tensor cores did nothing: its "
              "ceiling is the CUDA cores', "
            + (t.precision == Precision::Fp8 || t.precision == Precision::Int8 ? "30" : "16")
            + " times lower on Hopper.");
    f.evidence["tensor_instructions"] = 0.0;
    if (sol)
        f.evidence["pct_of_sol"] = *sol;
    f.directions = { "compute the products with tensor-core fragments: WMMA (nvcuda::wmma) or mma.sync.m16n8k16 in "
                     "CUDA, tl.dot in Triton",
        "keep fp32 accumulation; stage A and B tiles in shared memory for the fragments" };
    f.tunerHints = { hint::kTensorCores };
}

// "tensor pipe 41% busy at 23% of SOL": the tensor pipes' utilisation beside speed of light.
void tensorPipe(Context& c)
{
    const auto& t = c.t;
    auto busy = t.percent(metric::kTensorPipeHmma);
    if (!busy)
        busy = t.percent(metric::kTensorPipe);
    if (!busy)
        return;
    const auto sol = positive(t.pctOfSol);
    const std::string at = sol ? " at " + num(*sol) + "% of SOL" : std::string();
    const bool fed = *busy >= c.th.tensorPipeBusyPct;
    const auto severity = fed || (sol && *sol >= c.th.computeLowPct) ? S::Info : S::Warning;
    auto& f = add(c, "compute.tensor-pipe", severity, severity == S::Info ? 0.0 : 0.8 * (1.0 - *busy / 100.0),
        "tensor pipe " + num(*busy) + "% busy" + at,
        fed ? "The tensor cores are busy most of the time: what is left is the share of issued tensor work that "
              "is useful (tile shapes, the wgmma path on Hopper) and the epilogue."
            : "The tensor cores wait between instructions: operands do not arrive fast enough from shared "
              "memory, or too few independent accumulators are in flight per warp.");
    f.evidence["tensor_pipe_pct"] = *busy;
    if (sol)
        f.evidence["pct_of_sol"] = *sol;
    if (fed) {
        f.directions = { "larger warp tiles and the asynchronous wgmma path (sm_90) to raise useful work per cycle" };
        f.tunerHints = { hint::kLargerTiles };
    } else {
        f.directions = { "stage tiles through shared memory with cp.async / TMA, several stages deep",
            "more independent accumulator fragments per warp (a larger warp tile)",
            "swizzle or pad the shared tiles so ldmatrix is conflict-free" };
        f.tunerHints = { hint::kMoreStages, hint::kLargerTiles, hint::kPadShared };
    }
}

} // namespace

void computeRules(Context& c)
{
    const auto& t = c.t;
    if (!t.precision || !isTensorPrecision(*t.precision) || !computeSide(t, c.th))
        return; // the tensor cores are beside the point: memory-bound, or FLOPs on the CUDA cores
    if (const std::string why = noTensorWork(t); !why.empty())
        noTensorInstructions(c, why); // and the idle tensor pipe says nothing more
    else
        tensorPipe(c);
}

} // namespace kl::rules
