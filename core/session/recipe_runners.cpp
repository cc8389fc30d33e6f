// The recipe's runners as a pool: its endpoints (flags, then the runners file; local:<device> when
// none is named) and the options that turn them into runner commands.
#include "core/pool/runner_endpoint.h"
#include "core/session/session_recipe.h"

namespace kl::session {

std::vector<pool::Endpoint> runnerEndpoints(const SessionRecipe& recipe)
{
    std::vector<pool::Endpoint> endpoints;
    for (const auto& text : recipe.runners)
        endpoints.push_back(pool::parseEndpoint(text));
    if (!recipe.runnersFile.empty())
        for (auto& e : pool::readRunnersFile(recipe.runnersFile))
            endpoints.push_back(std::move(e));
    for (auto& e : endpoints)
        if (e.kind == pool::EndpointKind::Command) // a command names no GPU of its own
            e.gpu = recipe.device;
    if (endpoints.empty())
        endpoints.push_back(pool::parseEndpoint("local:" + std::to_string(recipe.device)));
    return pool::expandEndpoints(endpoints, pool::localGpuCount());
}

pool::PoolOptions poolOptions(const SessionRecipe& recipe, const std::filesystem::path& localRunner)
{
    pool::PoolOptions o;
    o.endpoints.localRunner = localRunner;
    o.endpoints.remoteRunner = recipe.remoteRunner;
    o.endpoints.sshOptions = recipe.sshOptions;
    o.endpoints.slurmGres = recipe.slurmGres == "none" ? std::string() : recipe.slurmGres;
    o.endpoints.base.defaultJobTimeout = std::chrono::seconds(recipe.jobTimeoutSeconds);
    return o;
}

} // namespace kl::session
