#pragma once
// How the loop's values become store records, field by field: who proposed a candidate, its
// findings, the LLM exchanges that came with its proposal, and the session's summary.
#include "core/findings/finding.h"
#include "core/loop/loop_values.h"
#include "core/propose/proposer.h"
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl {

store::CandidateRecord::Proposer storedProposer(const std::string& kind);
std::vector<store::FindingRecord> findingRecords(const std::vector<Finding>& findings);
store::ExchangeRecord exchangeRecord(const RoleExchange& exchange);
// Tokens over the exchanges a proposal came with.
std::int64_t exchangeTokens(const std::vector<RoleExchange>& exchanges);
std::string proposerDetailFor(const std::string& proposer, const std::string& sessionDetail);
// A proposal's candidate row (without a parent); "candidate.cu" when the proposal named no file.
store::CandidateRecord candidateRecord(const Proposal& proposal, const std::string& sessionDetail);

// What the store keeps as the session's summary: the figures of baseline and best, not their outcomes.
store::SessionSummary storedSummary(const LoopSummary& summary);
// The stored summary read back: what `history` and the window's history say of how the session ended.
// None without a stop reason (a session still running, or one that ended before the loop wrote it).
std::optional<LoopSummary> loopSummary(const std::optional<store::SessionSummary>& stored);

} // namespace kl
