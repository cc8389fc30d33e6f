#pragma once
// The configurations a candidate's declared tunables allow: the product of their value sets,
// less those that break a constraint at any of the problem's size sets (main or fuzz), since a
// configuration that cannot run at a fuzz size could never be verified.
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kl {

class SearchSpace {
public:
    SearchSpace(const Problem& problem, const Candidate& candidate);

    // Valid configurations, enumerated once (spaces are capped at kMaxEnumerated points; above
    // that, all() is empty and the tuner samples instead).
    static constexpr std::size_t kMaxEnumerated = 200000;
    std::size_t cartesianSize() const { return m_cartesian; }
    bool enumerated() const { return m_enumerated; }
    const std::vector<TunableValues>& all() const { return m_valid; }

    bool valid(const TunableValues& values) const;
    // Configurations one step (or `steps` steps) along one tunable's ordered value list.
    std::vector<TunableValues> neighbours(const TunableValues& from, int steps = 1) const;
    // A valid configuration drawn uniformly (rejection sampling); nullopt after many misses.
    std::optional<TunableValues> random(std::mt19937_64& rng) const;

    const Candidate& candidate() const { return m_candidate; }
    // A stable text key, "CACHE=1,THREADS=512,VEC=8".
    static std::string key(const TunableValues& values);
    // Index of `value` in the tunable's ordered list; -1 if absent.
    int position(const std::string& tunable, std::int64_t value) const;

private:
    const Problem& m_problem;
    const Candidate& m_candidate;
    std::size_t m_cartesian = 1;
    bool m_enumerated = false;
    std::vector<TunableValues> m_valid;
};

} // namespace kl
