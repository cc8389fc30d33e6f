#include "core/tuner/tuner.h"

#include "core/model/hash.h"
#include "core/tuner/move_ranking.h"
#include "core/tuner/search_space.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace kl {

namespace {

struct Scored {
    TunableValues values;
    double score = 0.0;
    std::string why;
};

// Hints from the best candidate's findings, most important first, each with the finding that gave it.
std::vector<std::pair<std::string, std::string>> hintsOf(const ProposalContext& ctx)
{
    std::vector<std::pair<std::string, std::string>> hints;
    std::set<std::string> seen;
    for (const auto& f : ctx.bestFindings)
        for (const auto& h : f.tunerHints)
            if (seen.insert(h).second)
                hints.emplace_back(h, f.id);
    return hints;
}

std::string describeMove(const TunableValues& from, const TunableValues& to)
{
    std::string text;
    for (const auto& [name, value] : to) {
        auto it = from.find(name);
        if (it != from.end() && it->second != value)
            text += (text.empty() ? "" : ", ") + name + " " + std::to_string(it->second) + "→" + std::to_string(value);
    }
    return text.empty() ? std::string("no change") : text;
}

int distance(const TunableValues& a, const TunableValues& b)
{
    int d = 0;
    for (const auto& [name, value] : a) {
        auto it = b.find(name);
        d += (it == b.end() || it->second != value) ? 1 : 0;
    }
    return d;
}

// How many recent iterations of this source brought no new best: drives exploration.
int stagnation(const ProposalContext& ctx)
{
    int n = 0;
    for (auto it = ctx.history.rbegin(); it != ctx.history.rend(); ++it) {
        if (it->kept)
            break;
        ++n;
    }
    return n;
}

} // namespace

// each measured configuration of the best source that lies
// in the hint's direction from the best and did not beat it (slower, or failed) takes half of the
// backing; two such losses silence the hint, so plain one-step neighbours get their turn instead of
// ever-further moves the same way (on the H200 a register-limited finding kept pointing a Triton
// LayerNorm at smaller tiles while the faster configuration was one num_warps step away).
double hintCredibility(const ProposalContext& ctx, const std::string& hint)
{
    const std::string bestHash = ctx.bestSourceHash.empty() ? contentHash(ctx.best.source) : ctx.bestSourceHash;
    const auto roles = launchRoles(ctx.best);
    const auto bestKey = SearchSpace::key(ctx.bestTunables);
    std::optional<double> bestSpeedup;
    double fastest = 0.0;
    for (const auto& h : ctx.history)
        if (h.sourceHash == bestHash && h.category == "passed" && h.speedup) {
            fastest = std::max(fastest, *h.speedup);
            if (SearchSpace::key(h.tunables) == bestKey)
                bestSpeedup = *h.speedup;
        }
    const double reference = bestSpeedup.value_or(fastest);
    int losses = 0;
    const Guidance only { { hint }, {}, roles };
    for (const auto& h : ctx.history) {
        if (h.sourceHash != bestHash || h.category == "rejected" || h.category == "pending"
            || SearchSpace::key(h.tunables) == bestKey)
            continue; // an engineer's rejection is not a measurement, nor is a job still queued
        const bool lost = h.category == "passed" ? (h.speedup && reference > 0.0 && *h.speedup <= reference) : true;
        if (lost && moveScore(ctx.bestTunables, h.tunables, only) > 0)
            ++losses;
    }
    return std::max(0.0, 1.0 - 0.5 * losses);
}

const char* tunerStrategyName(TunerStrategy s)
{
    switch (s) {
    case TunerStrategy::Auto:
        return "auto";
    case TunerStrategy::Exhaustive:
        return "exhaustive";
    case TunerStrategy::Random:
        return "random";
    case TunerStrategy::Evolutionary:
        return "evolutionary";
    }
    return "auto";
}

std::optional<TunerStrategy> parseTunerStrategy(const std::string& name)
{
    for (auto s :
        { TunerStrategy::Auto, TunerStrategy::Exhaustive, TunerStrategy::Random, TunerStrategy::Evolutionary })
        if (name == tunerStrategyName(s))
            return s;
    return std::nullopt;
}

struct Tuner::CachedSpace {
    Candidate candidate;
    SearchSpace space;
    CachedSpace(const Problem& p, Candidate c)
        : candidate(std::move(c))
        , space(p, candidate)
    {
    }
};

const SearchSpace& Tuner::space(const ProposalContext& ctx) const
{
    const auto key = ctx.problem->contentHash + ":" + contentHash(ctx.best.source);
    auto& slot = m_spaces[key];
    if (!slot)
        slot = std::make_shared<CachedSpace>(*ctx.problem, ctx.best);
    return slot->space;
}

void Tuner::warmUp(const Problem& problem, const Candidate& start)
{
    if (start.tunables.empty())
        return;
    ProposalContext ctx;
    ctx.problem = &problem;
    ctx.best = start;
    space(ctx); // kept under the same key propose() looks up
}

Tuner::Tuner(TunerOptions options)
    : m_options(options)
    , m_rng(options.seed)
{
}

TunerStrategy Tuner::effectiveStrategy(const ProposalContext& context, int count) const
{
    if (m_options.strategy != TunerStrategy::Auto)
        return m_options.strategy;
    const auto& space = this->space(context);
    const auto evaluations = std::int64_t(std::max(0, context.remainingBudget)) * std::max(1, count);
    if (space.enumerated() && std::int64_t(space.all().size()) <= evaluations)
        return TunerStrategy::Exhaustive;
    return TunerStrategy::Evolutionary;
}

std::vector<Proposal> Tuner::propose(const ProposalContext& ctx, int count, const std::atomic<bool>* cancel)
{
    return ranked(ctx, count, count, cancel, m_rng);
}

// The same ranking on a copy of the generator: in the very context propose() will get, its first
// `count` are propose()'s proposals exactly; the guesses past them cover what changes once the
// pending entries are measured (ties broken the other way, a hint that loses its backing).
std::vector<Proposal> Tuner::anticipate(const ProposalContext& ctx, int count, int guesses) const
{
    std::mt19937_64 rng = m_rng;
    return ranked(ctx, count, guesses, nullptr, rng);
}

std::vector<Proposal> Tuner::ranked(
    const ProposalContext& ctx, int count, int keep, const std::atomic<bool>* cancel, std::mt19937_64& rng) const
{
    if (!ctx.problem || ctx.best.tunables.empty() || count <= 0)
        return {};
    const auto& space = this->space(ctx);
    const std::string bestHash = ctx.bestSourceHash.empty() ? contentHash(ctx.best.source) : ctx.bestSourceHash;

    std::set<std::string> done;
    std::vector<std::pair<double, TunableValues>> correct; // speedup, values
    for (const auto& h : ctx.history) {
        if (h.sourceHash != bestHash)
            continue;
        done.insert(SearchSpace::key(h.tunables));
        if (h.category == "passed" && h.speedup)
            correct.emplace_back(*h.speedup, h.tunables);
    }
    done.insert(SearchSpace::key(ctx.bestTunables));
    std::sort(correct.begin(), correct.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

    const auto hints = hintsOf(ctx);
    Guidance guidance;
    guidance.roles = launchRoles(ctx.best);
    for (const auto& [h, from] : hints) {
        guidance.hints.push_back(h);
        guidance.credibility.push_back(hintCredibility(ctx, h));
    }
    auto because = [&](const TunableValues& to) {
        std::string text = describeMove(ctx.bestTunables, to);
        for (std::size_t i = 0; i < hints.size(); ++i) {
            const auto& [h, from] = hints[i];
            if (guidance.credibility[i] > 0
                && moveScore(ctx.bestTunables, to, Guidance { { h }, {}, guidance.roles }) > 0) {
                text += " (" + h + ", from finding " + from + ")";
                break;
            }
        }
        return text;
    };

    std::vector<Scored> pool;
    std::set<std::string> pooled;
    auto consider = [&](const TunableValues& v, double bonus) {
        const auto k = SearchSpace::key(v);
        if (done.count(k) || !pooled.insert(k).second)
            return;
        pool.push_back({ v, moveScore(ctx.bestTunables, v, guidance) + bonus, {} });
    };

    const auto strategy = effectiveStrategy(ctx, count);
    if (strategy == TunerStrategy::Exhaustive && space.enumerated()) {
        for (const auto& v : space.all())
            consider(v, -0.01 * distance(ctx.bestTunables, v));
    } else if (strategy == TunerStrategy::Random) {
        for (int i = 0; i < 50 * count && int(pool.size()) < count; ++i)
            if (auto v = space.random(rng))
                consider(*v, 0.0);
    } else {
        // Guided neighbours of the best: one step, then two.
        for (const auto& v : space.neighbours(ctx.bestTunables, 1))
            consider(v, 0.5);
        for (const auto& v : space.neighbours(ctx.bestTunables, 2))
            consider(v, 0.0);
        // Three steps: a threshold (e.g. a row that only fits in registers past some size) can
        // leave one and two steps flat.
        for (const auto& v : space.neighbours(ctx.bestTunables, 3))
            consider(v, -0.25);
        // Crossover of the best few correct configurations.
        const std::size_t parents = std::min<std::size_t>(correct.size(), 4);
        for (std::size_t a = 0; a < parents; ++a)
            for (std::size_t b = a + 1; b < parents; ++b) {
                TunableValues child;
                for (const auto& t : ctx.best.tunables)
                    child[t.name] = (rng() & 1) ? correct[a].second.at(t.name) : correct[b].second.at(t.name);
                if (space.valid(child))
                    consider(child, 0.25);
            }
        // Exploration grows with stagnation (annealing): random points with a score that can
        // beat weak neighbours once the neighbourhood is exhausted or unhelpful.
        const int stuck = stagnation(ctx);
        const double temperature = 1.0 - std::exp(-0.5 * stuck);
        for (int i = 0; i < count * 4; ++i)
            if (auto v = space.random(rng))
                consider(*v, -1.0 + 1.5 * temperature * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    }

    // Stable order for equal scores: shuffle first, then a stable sort by score.
    std::shuffle(pool.begin(), pool.end(), rng);
    std::stable_sort(pool.begin(), pool.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });

    std::vector<Proposal> out;
    for (const auto& s : pool) {
        if (int(out.size()) >= keep || (cancel && cancel->load()))
            break;
        Proposal p;
        p.candidate = ctx.best;
        p.tunables = s.values;
        p.proposer = "tuner";
        p.hypothesis = std::string(tunerStrategyName(strategy)) + ": " + because(s.values);
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace kl
