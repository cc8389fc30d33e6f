#pragma once
// How the loop's values become store records: who proposed a candidate, its findings, and the LLM
// exchanges that came with its proposal (credentials scrubbed, the model's text kept).
#include "core/findings/finding.h"
#include "core/propose/proposer.h"
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kl {

store::CandidateRecord::Proposer storedProposer(const std::string& kind);
std::vector<store::FindingRecord> findingRecords(const std::vector<Finding>& findings);
store::ExchangeRecord exchangeRecord(const nlohmann::json& exchange);
// Tokens over exchanges as proposers hand them in (Exchange::toJson's "usage").
std::int64_t exchangeTokens(const std::vector<nlohmann::json>& exchanges);
std::string proposerDetailFor(const std::string& proposer, const std::string& sessionDetail);
// A proposal's candidate row (without a parent); "candidate.cu" when the proposal named no file.
store::CandidateRecord candidateRecord(const Proposal& proposal, const std::string& sessionDetail);

} // namespace kl
