#pragma once
// What changed between two candidates besides the code: tunable values and the `// @kl`
// declarations (launch rules, tunable sets, constraints, scratch), as the header of a diff.
#include "core/model/candidate.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::report {

struct TunableChange {
    std::string name;
    std::optional<std::int64_t> before; // nullopt: not set on that side
    std::optional<std::int64_t> after;
};

// One `// @kl` declaration that differs, keyed by its kind and name ("launch ln_gelu", "tunable VEC").
struct DirectiveChange {
    std::string kind; // "launch", "tunable", "constraint", "scratch"
    std::string name; // kernel, tunable or scratch name; the expression for a constraint
    std::string before; // the declaration's text after "@kl "; empty when added
    std::string after; // empty when removed
};

struct CandidateChanges {
    std::vector<TunableChange> tunables;
    std::vector<DirectiveChange> directives;
    bool empty() const { return tunables.empty() && directives.empty(); }
    std::vector<DirectiveChange> launchRules() const; // the launch-rule changes alone
};

// Reads the declarations from the source text itself, so a candidate that no longer parses is compared too.
CandidateChanges candidateChanges(const std::string& beforeSource, const TunableValues& beforeTunables,
    const std::string& afterSource, const TunableValues& afterTunables);

// "tunables: VEC 4 -> 8, ROWS 1 -> 2" and one line per changed declaration; empty when nothing changed.
std::string changesHeaderText(const CandidateChanges& changes);

} // namespace kl::report
