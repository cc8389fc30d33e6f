#pragma once
// The evidence behind one iteration's numbers that the stored rows do not spell out: how close each
// output had to be (the tolerance of its dtype, the problem's or the default), and whether each
// timed size's median stays above the memory floor of a same-size device copy timed in the same job.
// For the GUI's evidence panel (and any text report); no Qt.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kl::review {

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
    enum class Verdict { Above, WithinSlack, Below, NoVerdict };
    Verdict verdict = Verdict::NoVerdict;
};

// Per timed case of a stored timing JSON (ResultRecord::timing), core/verify's physical-floor check.
std::vector<SizeFloor> floorChecks(const nlohmann::json& timing);
// "above the floor (41.20 us ≥ 38.50 us, a same-size device copy)", or the flag when below.
std::string floorText(const SizeFloor& floor);

} // namespace kl::review
