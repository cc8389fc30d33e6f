#pragma once
// The evidence behind one iteration's numbers that the stored rows do not spell out: how close each
// output had to be (the tolerance of its dtype, the problem's or the default), and whether each
// timed size's median stays above its floor: a same-size device copy timed in the same job, and its FLOPs
// at the ceiling of their precision.
// For the GUI's evidence panel (and any text report); no Qt.
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::report {

struct OutputTolerance {
    std::string dtype; // "f16", as the problem file spells it
    std::vector<std::string> outputs; // the outputs of that dtype, in the problem's order
    double atol = 0.0;
    double rtol = 0.0;
    bool fromProblem = false; // false: core/model's default for the dtype
};

// One entry per dtype among the outputs of a stored problem JSON (ProblemRecord::json), in first-seen
// order. An unparsable JSON or unknown dtype gives no entry for it: the panel then says nothing
// rather than a wrong number.
std::vector<OutputTolerance> outputTolerances(const std::string& problemJson);
// "y (f16): |actual − expected| ≤ 0.01 + 0.01·|expected| (the problem's)"
std::string toleranceText(const OutputTolerance& tolerance);

struct SizeFloor {
    std::string size; // the timed case's label
    double medianUs = 0.0;
    std::optional<double> copyUs; // the same-size copy, timed in the same job
    // Its FLOPs at the theoretical ceiling of the precision they run in, at the timing's SM clock (the
    // runner's ceiling_tflops): a hard limit, unlike the measured mma.sync ceiling, which wgmma beats.
    std::optional<double> computeUs;
    std::string ceiling; // "FP16 tensor", with computeUs
    enum class Verdict { Above, WithinSlack, Below, NoVerdict };
    Verdict verdict = Verdict::NoVerdict;
    bool belowCompute = false; // Below because of the compute floor (else the copy's)
};

// Per timed case, core/verify's floor checks: a median under max(the same-size copy, FLOPs ÷ ceiling),
// by more than the timing slack, is below the physical floor.
std::vector<SizeFloor> floorChecks(const protocol::Timing& timing);
// The same for a stored result's timing; none when it has none.
std::vector<SizeFloor> floorChecks(const store::ResultRecord& result);
// "above the floor (41.20 us >= 38.50 us, a same-size device copy)", or the flag when below.
std::string floorText(const SizeFloor& floor);

} // namespace kl::report
