#pragma once
// Which sessions an export covers: one (--session N, else the newest), or every session a campaign ran
// (--campaign NAME), in the campaign's order.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::fieldformats {

struct ExportSelection {
    std::int64_t session = 0; // 0: the newest, unless a campaign is named
    std::string campaign;
};

// Throws kl::Error "cli.no-session" (an empty store), "store.unknown-session", "store.unknown-campaign",
// "campaign.no-sessions" (a campaign none of whose problems has run yet).
std::vector<std::int64_t> selectedSessions(
    const store::Store& store, const std::filesystem::path& storePath, const ExportSelection& selection);

} // namespace kl::fieldformats
