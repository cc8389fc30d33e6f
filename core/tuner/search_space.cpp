#include "core/tuner/search_space.h"

#include "core/model/error.h"
#include "core/model/launch_plan.h"

#include <algorithm>
#include <limits>

namespace kl {

SearchSpace::SearchSpace(const Problem& problem, const Candidate& candidate)
    : m_problem(problem)
    , m_candidate(candidate)
{
    for (const auto& t : candidate.tunables) {
        if (m_cartesian > std::numeric_limits<std::size_t>::max() / t.values.size()) {
            m_cartesian = std::numeric_limits<std::size_t>::max();
            break;
        }
        m_cartesian *= t.values.size();
    }
    if (m_cartesian > kMaxEnumerated)
        return;
    m_enumerated = true;
    std::vector<std::size_t> digit(candidate.tunables.size(), 0);
    for (std::size_t n = 0; n < m_cartesian; ++n) {
        TunableValues values;
        for (std::size_t i = 0; i < digit.size(); ++i)
            values[candidate.tunables[i].name] = candidate.tunables[i].values[digit[i]];
        if (valid(values))
            m_valid.push_back(std::move(values));
        for (std::size_t i = 0; i < digit.size(); ++i) {
            if (++digit[i] < candidate.tunables[i].values.size())
                break;
            digit[i] = 0;
        }
    }
}

bool SearchSpace::valid(const TunableValues& values) const
{
    for (const auto& t : m_candidate.tunables) {
        auto it = values.find(t.name);
        if (it == values.end() || std::find(t.values.begin(), t.values.end(), it->second) == t.values.end())
            return false;
    }
    try {
        for (const auto* sizes : { &m_problem.mainSizes, &m_problem.fuzzSizes })
            for (const auto& s : *sizes)
                if (brokenConstraint(m_candidate, m_problem, s, values))
                    return false;
    } catch (const Error&) {
        return false; // a constraint that cannot be evaluated (e.g. divides by zero) rules it out
    }
    return true;
}

int SearchSpace::position(const std::string& tunable, std::int64_t value) const
{
    const auto* t = m_candidate.tunable(tunable);
    if (!t)
        return -1;
    auto it = std::find(t->values.begin(), t->values.end(), value);
    return it == t->values.end() ? -1 : int(it - t->values.begin());
}

std::vector<TunableValues> SearchSpace::neighbours(const TunableValues& from, int steps) const
{
    std::vector<TunableValues> out;
    for (const auto& t : m_candidate.tunables) {
        const int at = position(t.name, from.at(t.name));
        for (int dir : { -1, +1 }) {
            const int to = at + dir * steps;
            if (at < 0 || to < 0 || to >= int(t.values.size()))
                continue;
            auto next = from;
            next[t.name] = t.values[std::size_t(to)];
            if (valid(next))
                out.push_back(std::move(next));
        }
    }
    return out;
}

std::optional<TunableValues> SearchSpace::random(std::mt19937_64& rng) const
{
    if (m_enumerated) {
        if (m_valid.empty())
            return std::nullopt;
        return m_valid[std::uniform_int_distribution<std::size_t>(0, m_valid.size() - 1)(rng)];
    }
    for (int attempt = 0; attempt < 1000; ++attempt) {
        TunableValues values;
        for (const auto& t : m_candidate.tunables)
            values[t.name] = t.values[std::uniform_int_distribution<std::size_t>(0, t.values.size() - 1)(rng)];
        if (valid(values))
            return values;
    }
    return std::nullopt;
}

std::string SearchSpace::key(const TunableValues& values)
{
    std::string k;
    for (const auto& [name, value] : values)
        k += (k.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return k;
}

} // namespace kl
