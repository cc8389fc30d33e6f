#pragma once
// Sessions of the same problem, for comparing an iteration against one of another session (as
// Nsight Compute compares a report against a baseline report): the same problem hash, or the same
// problem name (an edited problem file keeps its name but hashes anew). No Qt.
#include "core/store/records.h"

#include <string>
#include <vector>

namespace kl::report {

// The sessions in `all` (a Store::listSessions() answer, its order kept) other than `of` itself
// whose problem is `of`'s.
std::vector<store::SessionRow> sameProblemSessions(
    const std::vector<store::SessionRow>& all, const store::SessionRecord& of);

// How a diff header names a session: "session 2 (llm:openai/replay, \"H200 LLM loop (replay)\")".
std::string sessionTitle(const store::SessionRecord& session);

} // namespace kl::report
