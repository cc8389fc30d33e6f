#pragma once
// What can be known about a candidate without a GPU: the compile, and for every launch at every
// main size its grid, block, shared memory, theoretical occupancy and waves. Telemetry for the
// proposers (the loop's compile step, docs/formats.md "Walk-through") and the "check" command.
#include "core/compile/compiler.h"
#include "core/compile/occupancy.h"
#include "core/model/launch_plan.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kl {

struct StaticReport {
    std::string problem; // the problem's name
    std::string candidate; // the candidate's file name
    std::string arch; // what it was compiled for
    DeviceLimits device;
    TunableValues tunables; // defaults with the overrides applied: what was compiled
    CompileResult compile;

    struct PerLaunch {
        std::string kernel;
        SizeSet sizes;
        PlannedLaunch launch; // grid, block, dynamic shared memory at these sizes
        KernelResources resources; // from the compile (empty when it failed)
        std::int64_t sharedBytes = 0; // static + dynamic, what occupancy was computed with
        bool needsSharedOptIn = false; // above the 48 KiB default: cuFuncSetAttribute before launch
        Occupancy occupancy;
        double waves = 0.0; // blocks / (blocks per SM × SMs); a tail wave shows as a fraction
        std::int64_t wholeWaves = 0; // waves rounded up
    };
    std::vector<PerLaunch> launches; // main sizes in order, launches in order within each; empty if the compile failed

    // Compiled, and every launch can run (occupancy has no error).
    bool ok() const;
    // The first reason it is not ok, one line; empty when ok().
    std::string firstProblem() const;
};

// Compiles `candidate` with `tunables` (the candidate's defaults overridden by these) for
// options.arch, with includes from problem.dir when options.includeDir is empty. Throws kl::Error
// for input errors: "candidate.unknown-tunable", "candidate.value-not-allowed", "plan.constraint"
// and the other plan.* categories (planned at every main and fuzz size, padded too where the problem
// pads rows, before compiling), and "plan.args-mismatch" after compiling when a launch's arguments
// do not match its kernel's parameters. A candidate that does not compile is not an exception:
// report.compile says why.
StaticReport analyseCandidate(const Problem& problem, const Candidate& candidate, const TunableValues& tunables,
    const CompileOptions& options, const DeviceLimits& device);

// JSON for --json and for the store: snake_case, sizes in bytes, occupancy 0..1.
nlohmann::json staticReportJson(const StaticReport& report);
nlohmann::json compileResultJson(const CompileResult& result); // without the cubin and PTX
nlohmann::json kernelResourcesJson(const KernelResources& resources);
nlohmann::json occupancyJson(const Occupancy& occupancy);

} // namespace kl
