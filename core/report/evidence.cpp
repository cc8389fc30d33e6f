#include "core/report/evidence.h"

#include "core/model/dtype.h"
#include "core/model/number_text.h"
#include "core/model/problem.h"
#include "core/store/problem_outputs.h"
#include "core/verify/speed_of_light.h"

#include <algorithm>
#include <cstdio>

namespace kl::report {

namespace {

std::string micros(double value) { return fixed(value, 2) + " us"; }

} // namespace

std::vector<OutputTolerance> outputTolerances(const std::string& problemJson)
{
    std::vector<OutputTolerance> tolerances;
    for (const store::StoredOutput& output : store::storedOutputs(problemJson)) {
        const std::optional<DType> type = parseDType(output.dtype);
        if (!type)
            continue;
        auto known = std::find_if(
            tolerances.begin(), tolerances.end(), [&](const OutputTolerance& t) { return t.dtype == output.dtype; });
        if (known != tolerances.end()) {
            known->outputs.push_back(output.name);
            continue;
        }
        OutputTolerance t;
        t.dtype = output.dtype;
        t.outputs.push_back(output.name);
        const Tolerance fallback = defaultTolerance(*type);
        t.atol = fallback.atol;
        t.rtol = fallback.rtol;
        if (output.toleranceGiven) {
            t.atol = output.atol.value_or(0.0);
            t.rtol = output.rtol.value_or(0.0);
            t.fromProblem = true;
        }
        tolerances.push_back(std::move(t));
    }
    return tolerances;
}

std::string toleranceText(const OutputTolerance& tolerance)
{
    std::string names;
    for (const std::string& name : tolerance.outputs)
        names += (names.empty() ? "" : ", ") + name;
    return names + " (" + tolerance.dtype + "): |actual - expected| <= " + shortNumber(tolerance.atol) + " + "
        + shortNumber(tolerance.rtol) + " * |expected| ("
        + (tolerance.fromProblem ? "the problem's" : "the default for " + tolerance.dtype) + ")";
}

std::vector<SizeFloor> floorChecks(const protocol::Timing& timing)
{
    std::vector<SizeFloor> floors;
    for (const protocol::CaseTiming& timed : timing.cases) {
        SizeFloor floor;
        floor.size = timed.label;
        floor.medianUs = timed.candidate.medianUs;
        if (timed.copy)
            floor.copyUs = timed.copy->medianUs;
        const double ceiling = timed.ceilingTflops.value_or(0.0);
        if (const double computeUs = verify::computeFloorMicros(timed.flops, ceiling);
            computeUs > 0.0 && timed.compute) {
            floor.computeUs = computeUs;
            floor.ceiling = std::string(precisionLabel(*timed.compute));
        }
        const bool copyCounts = floor.copyUs && *floor.copyUs >= verify::kFloorMinimumMicros;
        const bool belowCopy = copyCounts && verify::checkPhysicalFloor(floor.medianUs, *floor.copyUs).below;
        floor.belowCompute
            = floor.computeUs && verify::checkComputeFloor(floor.medianUs, timed.flops, ceiling, floor.ceiling).below;
        const double highest = std::max(copyCounts ? *floor.copyUs : 0.0, floor.computeUs.value_or(0.0));
        if (belowCopy || floor.belowCompute)
            floor.verdict = SizeFloor::Verdict::Below;
        else if (highest > 0.0)
            floor.verdict = floor.medianUs >= highest ? SizeFloor::Verdict::Above : SizeFloor::Verdict::WithinSlack;
        floors.push_back(std::move(floor));
    }
    return floors;
}

std::vector<SizeFloor> floorChecks(const store::ResultRecord& result)
{
    return result.timing ? floorChecks(*result.timing) : std::vector<SizeFloor> {};
}

std::string floorText(const SizeFloor& floor)
{
    if (!floor.copyUs && !floor.computeUs)
        return "no floor check: no same-size copy was timed in this job";
    auto against
        = [&](double us) { return micros(floor.medianUs) + (floor.medianUs >= us ? " >= " : " < ") + micros(us); };
    std::string versus;
    if (floor.copyUs)
        versus = against(*floor.copyUs) + ", a same-size device copy";
    if (floor.computeUs)
        versus += (versus.empty() ? "" : "; ") + against(*floor.computeUs) + ", its FLOPs at the " + floor.ceiling
            + " ceiling";
    switch (floor.verdict) {
    case SizeFloor::Verdict::Above:
        return "above the floor (" + versus + ")";
    case SizeFloor::Verdict::WithinSlack:
        return "at the floor, within the " + std::to_string(int(verify::kFloorSlack * 100 + 0.5)) + "% timing slack ("
            + versus + ")";
    case SizeFloor::Verdict::Below:
        if (floor.belowCompute)
            return "BELOW THE FLOOR: faster than the " + floor.ceiling
                + " ceiling allows, a skipped-work bug or a wrong FLOP count or precision (" + versus + ")";
        return "BELOW THE FLOOR: faster than memory allows, a skipped-work bug or a wrong byte count (" + versus + ")";
    case SizeFloor::Verdict::NoVerdict:
        break;
    }
    return "no floor verdict: the copy takes " + micros(*floor.copyUs) + ", mostly launch overhead (" + versus + ")";
}

} // namespace kl::report
