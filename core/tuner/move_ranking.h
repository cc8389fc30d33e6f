#pragma once
// How findings steer the tuner: each finding carries hints ("wider-vectors", "fewer-threads",
// ...); each tunable has a role guessed from its name (THREADS → threads, VEC → vector width,
// CACHE/UNROLL/ITEMS → work per thread, TILE/BLOCK_M → tile, STAGES → pipeline depth). A move
// that goes the way the hints point scores higher and is tried first.
#include "core/model/candidate.h"

#include <map>
#include <string>
#include <vector>

namespace kl {

// RegisterCap: the maxrregcount compiler flag (0 is no cap, the loosest).
enum class TunableRole { Threads, Vector, WorkPerThread, Tile, Stages, RegisterCap, Other };

TunableRole roleOf(const std::string& tunableName);
const char* roleName(TunableRole role);

// Hints in order of importance (the first finding's first). Unknown hints are ignored.
struct Guidance {
    std::vector<std::string> hints;
    // Per hint (same order; missing = 1): how far the session's own measurements still back it. A
    // finding's direction is a guess; moves that followed it and lost weaken it (Tuner::propose).
    std::vector<double> credibility;
    // Roles the candidate's launch rule declares (a tunable used as num_warps or in block= is the
    // thread count whatever its name); the rest fall back to roleOf's guess from the name.
    std::map<std::string, TunableRole> roles;
};

// The roles a candidate's launch rules give its tunables: in block=(..) or num_warps=(..) →
// threads, in num_stages=(..) → stages; its compiler flags: maxrregcount → register cap, the rest
// other (extra_device_vectorization is no vector width).
std::map<std::string, TunableRole> launchRoles(const Candidate& candidate);

// Score of moving from `from` to `to`: positive when the changed tunables move the way the hints
// point, weighted by the hint's rank; 0 when no hint speaks about the changed roles.
double moveScore(const TunableValues& from, const TunableValues& to, const Guidance& guidance);

// The hints the tuner understands, for documentation and for the findings engine to emit.
const std::vector<std::string>& knownHints();

} // namespace kl
