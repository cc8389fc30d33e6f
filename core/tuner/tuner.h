#pragma once
// The built-in proposer: searches the current best candidate's declared tunables under its
// constraints. Small spaces are searched exhaustively (in the order the findings suggest, so a
// budget cut still sees the promising part first); larger ones by random sampling or by an
// evolutionary search: guided neighbours of the best, crossover of the best few, and random
// exploration that grows while the search stagnates (annealing).
#include "core/propose/proposer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <random>

namespace kl {

enum class TunerStrategy { Auto, Exhaustive, Random, Evolutionary };
const char* tunerStrategyName(TunerStrategy s);
std::optional<TunerStrategy> parseTunerStrategy(const std::string& name);

struct TunerOptions {
    TunerStrategy strategy = TunerStrategy::Auto;
    std::uint64_t seed = 1;
};

// How far the session's own measurements still back a finding's hint, 0..1: 1 until moves from the
// best in the hint's direction lose (each loss, slower or failed, takes half; two silence it).
double hintCredibility(const ProposalContext& context, const std::string& hint);

class Tuner : public Proposer {
public:
    explicit Tuner(TunerOptions options = {});
    std::string kind() const override { return "tuner"; }
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;
    void warmUp(const Problem& problem, const Candidate& start) override;
    std::vector<Proposal> anticipate(const ProposalContext& context, int count, int guesses) const override;

    // The strategy `Auto` resolves to for this context (exposed for tests and the CLI summary).
    TunerStrategy effectiveStrategy(const ProposalContext& context, int count) const;

private:
    // Enumerating a space evaluates every constraint at every size: once per source is enough.
    const class SearchSpace& space(const ProposalContext& context) const;
    // propose()'s ranking for `count` proposals, drawing from `rng` (anticipate passes a copy: its
    // guesses leave no trace); the first `keep` of it.
    std::vector<Proposal> ranked(const ProposalContext& context, int count, int keep, const std::atomic<bool>* cancel,
        std::mt19937_64& rng) const;
    TunerOptions m_options;
    std::mt19937_64 m_rng;
    struct CachedSpace;
    mutable std::map<std::string, std::shared_ptr<CachedSpace>> m_spaces;
};

} // namespace kl
