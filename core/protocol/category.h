#pragma once
// How an evaluation ended, as docs/runner-protocol.md names it. The runner reports most
// categories; the client adds timeout, crash, runner-lost, bad-message and cancelled when the
// process itself misbehaves or the caller gives up.
#include <optional>
#include <string_view>

namespace kl::protocol {

enum class Status {
    Ok, // verified (and timed if asked)
    Failed, // the candidate is wrong or broke
    Error, // the job could not be done (no device, bad request, lost runner, cancelled)
};

enum class Category {
    Passed,
    MissingKernel,
    LaunchError,
    TooManyResources,
    IllegalAddress,
    Trap,
    Timeout,
    OutOfBoundsWrite,
    UnwrittenOutput,
    NanOutput,
    InputModified,
    StaleOutput,
    WrongResult,
    BelowPhysicalFloor,
    Crash,
    RunnerLost,
    NoDevice,
    BadRequest,
    OutOfMemory,
    Cancelled,
    BadMessage,
};

std::string_view categoryName(Category category); // "passed", "missing-kernel", ...
std::optional<Category> parseCategory(std::string_view name);
// The status a result with this category carries (out-of-memory: error, as for our own buffers).
Status statusOf(Category category);

std::string_view statusName(Status status); // "ok", "failed", "error"
std::optional<Status> parseStatus(std::string_view name);

} // namespace kl::protocol
