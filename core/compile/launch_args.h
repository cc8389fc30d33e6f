#pragma once
// Launch arguments against the kernel's parameters, offline: the PTX's .entry lists each
// parameter with its type, so a launch line with one argument too few (which crashed the runner
// at its first launch) or an i64 where the kernel takes an int is refused before any GPU sees it.
#include "core/compile/compiler.h"
#include "core/model/launch_plan.h"

#include <optional>
#include <string>
#include <vector>

namespace kl {

// The parameters of entry `loweredName` in `ptx`, in order; nullopt when the PTX has no such
// entry (then nothing can be said offline).
std::optional<std::vector<KernelParameter>> ptxEntryParameters(const std::string& ptx, const std::string& loweredName);

// Bytes one planned argument occupies: 8 for a buffer (a device pointer), else its type's size.
int argumentBytes(const PlannedArg& arg);

// Throws kl::Error("plan.args-mismatch", the launch's line) when a launch's argument count or
// sizes differ from its kernel's parameters, naming both lists. `plan` is the candidate's plan at
// any size set (argument kinds and types do not depend on sizes).
void checkLaunchArgs(const Candidate& candidate, const LaunchPlan& plan, const CompileResult& compiled);

} // namespace kl
