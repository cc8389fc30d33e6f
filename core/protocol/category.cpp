#include "core/protocol/category.h"

#include <array>
#include <utility>

namespace kl::protocol {

namespace {
struct CategoryInfo {
    Category category;
    std::string_view name;
    Status status;
};
constexpr std::array<CategoryInfo, 21> kCategories { {
    { Category::Passed, "passed", Status::Ok },
    { Category::MissingKernel, "missing-kernel", Status::Failed },
    { Category::LaunchError, "launch-error", Status::Failed },
    { Category::TooManyResources, "too-many-resources", Status::Failed },
    { Category::IllegalAddress, "illegal-address", Status::Failed },
    { Category::Trap, "trap", Status::Failed },
    { Category::Timeout, "timeout", Status::Failed },
    { Category::OutOfBoundsWrite, "out-of-bounds-write", Status::Failed },
    { Category::UnwrittenOutput, "unwritten-output", Status::Failed },
    { Category::NanOutput, "nan-output", Status::Failed },
    { Category::InputModified, "input-modified", Status::Failed },
    { Category::StaleOutput, "stale-output", Status::Failed },
    { Category::WrongResult, "wrong-result", Status::Failed },
    { Category::BelowPhysicalFloor, "below-physical-floor", Status::Failed },
    { Category::Crash, "crash", Status::Failed },
    { Category::RunnerLost, "runner-lost", Status::Error },
    { Category::NoDevice, "no-device", Status::Error },
    { Category::BadRequest, "bad-request", Status::Error },
    { Category::OutOfMemory, "out-of-memory", Status::Error },
    { Category::Cancelled, "cancelled", Status::Error },
    { Category::BadMessage, "bad-message", Status::Error },
} };

constexpr std::array<std::pair<Status, std::string_view>, 3> kStatuses { {
    { Status::Ok, "ok" },
    { Status::Failed, "failed" },
    { Status::Error, "error" },
} };
} // namespace

std::string_view categoryName(Category category)
{
    for (const auto& c : kCategories)
        if (c.category == category)
            return c.name;
    return "unknown";
}

std::optional<Category> parseCategory(std::string_view name)
{
    for (const auto& c : kCategories)
        if (c.name == name)
            return c.category;
    return std::nullopt;
}

Status statusOf(Category category)
{
    for (const auto& c : kCategories)
        if (c.category == category)
            return c.status;
    return Status::Error;
}

std::string_view statusName(Status status)
{
    for (const auto& [s, name] : kStatuses)
        if (s == status)
            return name;
    return "error";
}

std::optional<Status> parseStatus(std::string_view name)
{
    for (const auto& [s, n] : kStatuses)
        if (n == name)
            return s;
    return std::nullopt;
}

} // namespace kl::protocol
