#include "core/tuner/move_ranking.h"

#include "core/findings/finding.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <regex>

namespace kl {

namespace {

struct HintEffect {
    TunableRole role;
    int direction; // +1: larger values, -1: smaller
};

const std::map<std::string, std::vector<HintEffect>>& hintEffects()
{
    // Keyed by the hint names the findings emit (core/findings/finding.h).
    using R = TunableRole;
    static const std::map<std::string, std::vector<HintEffect>> effects {
        { hint::kWiderVectors, { { R::Vector, +1 } } },
        { hint::kMoreBytesInFlight, { { R::Vector, +1 }, { R::WorkPerThread, +1 }, { R::Stages, +1 } } },
        { hint::kMoreIlp, { { R::WorkPerThread, +1 }, { R::Vector, +1 } } },
        { hint::kMoreWorkPerThread, { { R::WorkPerThread, +1 } } },
        { hint::kMoreRowsPerBlock, { { R::WorkPerThread, +1 } } },
        { hint::kReuseOnChip, { { R::WorkPerThread, +1 }, { R::Tile, +1 } } },
        { hint::kFewerBytes, { { R::WorkPerThread, +1 } } },
        { hint::kLessUnrolling, { { R::WorkPerThread, -1 } } },
        { hint::kFewerThreads, { { R::Threads, -1 } } },
        { hint::kMoreThreads, { { R::Threads, +1 } } },
        { hint::kFewerRegisters,
            { { R::WorkPerThread, -1 }, { R::Tile, -1 }, { R::Stages, -1 }, { R::RegisterCap, -1 } } },
        { hint::kSmallerTiles, { { R::Tile, -1 }, { R::WorkPerThread, -1 } } },
        { hint::kLessSharedMemory, { { R::Tile, -1 }, { R::Stages, -1 } } },
        { hint::kMoreBlocks, { { R::Threads, -1 }, { R::Tile, -1 }, { R::WorkPerThread, -1 } } },
        { hint::kFewerBlocks, { { R::WorkPerThread, +1 }, { R::Tile, +1 } } },
        { hint::kLargerTiles, { { R::Tile, +1 }, { R::WorkPerThread, +1 } } },
        { hint::kMoreStages, { { R::Stages, +1 } } },
    };
    return effects;
}

bool contains(const std::string& upper, std::initializer_list<const char*> words)
{
    for (const char* w : words)
        if (upper.find(w) != std::string::npos)
            return true;
    return false;
}

} // namespace

TunableRole roleOf(const std::string& name)
{
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (contains(upper, { "STAGE", "PIPE" }))
        return TunableRole::Stages;
    if (contains(upper, { "VEC", "WIDTH", "PACK" }))
        return TunableRole::Vector;
    if (contains(upper, { "TILE", "BLOCK_M", "BLOCK_N", "BLOCK_K", "BM", "BN", "BK" }))
        return TunableRole::Tile;
    if (contains(upper, { "THREAD", "WARP", "BLOCK" }))
        return TunableRole::Threads;
    if (contains(upper, { "CACHE", "UNROLL", "ITEM", "ROWS", "PER_THREAD", "ILP", "WORK" }))
        return TunableRole::WorkPerThread;
    return TunableRole::Other;
}

const char* roleName(TunableRole role)
{
    switch (role) {
    case TunableRole::Threads:
        return "threads";
    case TunableRole::Vector:
        return "vector width";
    case TunableRole::WorkPerThread:
        return "work per thread";
    case TunableRole::Tile:
        return "tile";
    case TunableRole::Stages:
        return "stages";
    case TunableRole::RegisterCap:
        return "register cap";
    case TunableRole::Other:
        break;
    }
    return "other";
}

std::map<std::string, TunableRole> launchRoles(const Candidate& candidate)
{
    std::map<std::string, TunableRole> roles;
    for (const auto& t : candidate.tunables)
        if (t.compilerFlag)
            roles.emplace(t.name, t.name == "maxrregcount" ? TunableRole::RegisterCap : TunableRole::Other);
    static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");
    auto mark = [&](const std::string& expression, TunableRole role) {
        for (std::sregex_iterator it(expression.begin(), expression.end(), identifier), end; it != end; ++it)
            for (const auto& t : candidate.tunables)
                if (t.name == it->str())
                    roles.emplace(t.name, role);
    };
    for (const auto& launch : candidate.launches) {
        for (const auto& b : launch.block)
            mark(b, TunableRole::Threads);
        if (candidate.language == CandidateLanguage::Triton) {
            mark(launch.numWarps, TunableRole::Threads);
            mark(launch.numStages, TunableRole::Stages);
        }
    }
    return roles;
}

double moveScore(const TunableValues& from, const TunableValues& to, const Guidance& guidance)
{
    double score = 0.0;
    const auto& effects = hintEffects();
    auto role = [&](const std::string& name) {
        const auto it = guidance.roles.find(name);
        return it != guidance.roles.end() ? it->second : roleOf(name);
    };
    for (std::size_t rank = 0; rank < guidance.hints.size(); ++rank) {
        auto it = effects.find(guidance.hints[rank]);
        if (it == effects.end())
            continue;
        const double credibility = rank < guidance.credibility.size() ? guidance.credibility[rank] : 1.0;
        const double weight = credibility / double(rank + 1);
        if (weight <= 0.0)
            continue;
        for (const auto& [name, value] : to) {
            auto old = from.find(name);
            if (old == from.end() || old->second == value)
                continue;
            // A register cap of 0 is no cap: looser than any number.
            const auto loosest = [&](std::int64_t v) {
                return role(name) == TunableRole::RegisterCap && v == 0 ? std::numeric_limits<std::int64_t>::max() : v;
            };
            const int moved = loosest(value) > loosest(old->second) ? +1 : -1;
            for (const auto& effect : it->second)
                if (effect.role == role(name))
                    score += weight * (moved == effect.direction ? 1.0 : -1.0);
        }
    }
    return score;
}

const std::vector<std::string>& knownHints()
{
    static const std::vector<std::string> hints = [] {
        std::vector<std::string> h;
        for (const auto& [k, v] : hintEffects())
            h.push_back(k);
        return h;
    }();
    return hints;
}

} // namespace kl
