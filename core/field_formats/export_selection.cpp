#include "core/field_formats/export_selection.h"

#include "core/model/error.h"
#include "core/store/campaign_store.h"
#include "core/store/store.h"

#include <algorithm>

namespace kl::fieldformats {

std::vector<std::int64_t> selectedSessions(
    const store::Store& store, const std::filesystem::path& storePath, const ExportSelection& selection)
{
    if (!selection.campaign.empty()) {
        const auto campaigns = store::CampaignStore::open(storePath, { .readOnly = true });
        const auto campaign = campaigns.campaignNamed(selection.campaign);
        if (!campaign)
            throw Error(
                "store.unknown-campaign", storePath.string(), {}, "no campaign named \"" + selection.campaign + "\"");
        std::vector<std::int64_t> sessions;
        for (const auto& problem : campaigns.problems(campaign->id))
            if (problem.sessionId && std::find(sessions.begin(), sessions.end(), *problem.sessionId) == sessions.end()
                && store.session(*problem.sessionId))
                sessions.push_back(*problem.sessionId);
        if (sessions.empty())
            throw Error("campaign.no-sessions", storePath.string(), {},
                "campaign \"" + selection.campaign + "\" has run no problem yet");
        return sessions;
    }
    if (selection.session > 0) {
        if (!store.session(selection.session))
            throw Error(
                "store.unknown-session", storePath.string(), {}, "no session " + std::to_string(selection.session));
        return { selection.session };
    }
    const auto sessions = store.listSessions();
    if (sessions.empty())
        throw Error("cli.no-session", storePath.string(), {}, "the store holds no session yet");
    return { sessions.front().session.id };
}

} // namespace kl::fieldformats
