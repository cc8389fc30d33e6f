// Reading history: listing rows for tables and charts, and one iteration in full.
#include "core/store/compile_columns.h"
#include "core/store/exchange_columns.h"
#include "core/store/result_columns.h"
#include "core/store/size_results.h"
#include "core/store/store.h"
#include "core/store/store_impl.h"

namespace kl::store {

namespace {

// One query for the listing and for a single row, so both agree on what a row says. The top
// finding is position 0 (findings are recorded most important first); every join is on an index.
// The candidate's hypothesis and prediction come from the row the proposer columns are read from.
const std::string kRowQuery
    = "SELECT i.idx, i.candidate_id, c.proposer, c.proposer_detail, i.state, r.status, r.category, r.median_us, "
      "r.gbps, r.pct_of_copy, r.speedup, f.rule_id, f.message, "
      "(SELECT d.kind FROM decisions d WHERE d.iteration_id = i.id ORDER BY d.id DESC LIMIT 1), "
      "i.started_ms, i.ended_ms, i.id, r.id, i.round, c.hypothesis, c.predicted_speedup "
      "FROM iterations i "
      "LEFT JOIN candidates c ON c.id = i.candidate_id "
      "LEFT JOIN results r ON r.iteration_id = i.id "
      "LEFT JOIN findings f ON f.result_id = r.id AND f.position = 0 ";

IterationRow readRow(const Statement& select)
{
    IterationRow row;
    row.index = static_cast<int>(select.integer(0));
    row.candidateId = select.optionalInteger(1);
    if (!select.isNull(2))
        row.proposer = parseProposer(select.text(2));
    row.proposerDetail = select.text(3);
    row.state = select.text(4);
    row.status = select.text(5);
    row.category = select.text(6);
    row.medianUs = select.optionalReal(7);
    row.gbps = select.optionalReal(8);
    row.pctOfCopy = select.optionalReal(9);
    row.speedup = select.optionalReal(10);
    row.topFindingRule = select.text(11);
    row.topFindingMessage = select.text(12);
    if (!select.isNull(13))
        row.lastDecision = parseDecision(select.text(13));
    row.startedMs = select.integer(14);
    row.endedMs = select.integer(15);
    if (const auto round = select.optionalInteger(18))
        row.round = static_cast<int>(*round);
    row.hypothesis = select.text(19);
    row.predictedSpeedup = select.optionalReal(20);
    return row;
}

} // namespace

std::vector<IterationRow> Store::listIterations(std::int64_t sessionId) const
{
    auto select = m_impl->db.cached(kRowQuery + "WHERE i.session_id = ?1 ORDER BY i.idx");
    select.bind(1, sessionId);
    std::vector<IterationRow> rows;
    while (select.step())
        rows.push_back(readRow(select));
    return rows;
}

std::vector<ExampleRow> Store::bestVerifiedCandidates(
    const std::string& problemName, const std::vector<std::int64_t>& excludeSessions, int limit) const
{
    if (limit <= 0)
        return {};
    auto& db = m_impl->db;
    const std::string file = m_impl->path.string();
    Transaction snapshot(db, Transaction::Kind::Read);
    // First the sessions and their best speedup (the partial index results_verified holds exactly
    // the passing results, so this never reads the results table), ranked and cut to `limit`; the
    // excluded ids arrive as one JSON array so that the statement stays cached.
    std::vector<ExampleRow> rows;
    {
        auto sessions = db.cached(
            "WITH top AS (SELECT i.session_id, MAX(r.speedup) AS speedup"
            " FROM results r JOIN iterations i ON i.id = r.iteration_id"
            " WHERE r.status = 'ok' AND r.category = 'passed' AND r.speedup > 1 AND i.candidate_id IS NOT NULL"
            "  AND i.session_id NOT IN (SELECT value FROM json_each(?2))"
            " GROUP BY i.session_id)"
            " SELECT p.name, s.problem_hash, top.session_id, top.speedup"
            " FROM top JOIN sessions s ON s.id = top.session_id JOIN problems p ON p.hash = s.problem_hash"
            " ORDER BY p.name = ?1 DESC, top.speedup DESC, s.started_ms DESC, s.id DESC LIMIT ?3");
        sessions.bind(1, problemName).bind(2, nlohmann::json(excludeSessions).dump()).bind(3, limit);
        while (sessions.step()) {
            ExampleRow row;
            row.problemName = sessions.text(0);
            row.problemHash = sessions.text(1);
            row.sessionId = sessions.integer(2);
            row.speedup = sessions.real(3);
            rows.push_back(std::move(row));
        }
    }
    // Then each session's candidate with that speedup (the earliest iteration on a tie).
    auto candidate = db.cached(
        "SELECT i.candidate_id, src.text, c.tunables_json, r.median_us, r.pct_of_copy"
        " FROM results r JOIN iterations i ON i.id = r.iteration_id JOIN candidates c ON c.id = i.candidate_id"
        " JOIN sources src ON src.hash = c.source_hash"
        " WHERE r.status = 'ok' AND r.category = 'passed' AND r.speedup = ?2 AND i.session_id = ?1"
        " ORDER BY i.idx LIMIT 1");
    for (auto& row : rows) {
        candidate.bind(1, row.sessionId).bind(2, row.speedup);
        if (!candidate.step())
            throw Error("store.corrupt", file, "session " + std::to_string(row.sessionId),
                "the session's best result has no candidate");
        row.candidateId = candidate.integer(0);
        row.source = candidate.text(1);
        row.tunables = tunablesFromJson(readJson(candidate, 2, file));
        row.medianUs = candidate.optionalReal(3);
        row.pctOfCopy = candidate.optionalReal(4);
        candidate.reset();
    }
    snapshot.commit();
    return rows;
}

std::optional<ResultRecord> Store::Impl::readResult(const std::string& keyColumn, std::int64_t key)
{
    const std::string file = path.string();
    auto select
        = db.cached("SELECT id, status, category, detail, median_us, p20_us, p80_us, cv, gbps, pct_of_copy, "
                    "speedup, sm_clock_mhz, toolkit, verification_json, timing_json, device_json, "
                    "compile_json, profile_json, from_cache, recorded_ms, runner_endpoint, pc_sampling_json FROM "
                    "results WHERE "
            + keyColumn + " = ?1");
    select.bind(1, key);
    if (!select.step())
        return std::nullopt;
    ResultRecord result;
    result.id = select.integer(0);
    result.status = select.text(1);
    result.category = select.text(2);
    result.detail = select.text(3);
    result.medianUs = select.optionalReal(4);
    result.p20Us = select.optionalReal(5);
    result.p80Us = select.optionalReal(6);
    result.cv = select.optionalReal(7);
    result.gbps = select.optionalReal(8);
    result.pctOfCopy = select.optionalReal(9);
    result.speedup = select.optionalReal(10);
    result.smClockMhz = select.optionalReal(11);
    result.toolkit = select.text(12);
    result.verification = verificationColumn(readJson(select, 13, file), &result.unreadable);
    result.timing = timingColumn(readJson(select, 14, file), &result.unreadable);
    result.device = deviceColumn(readJson(select, 15, file), &result.unreadable);
    result.compile = compileRecordOf(readJson(select, 16, file), &result.unreadable);
    result.profile = profileColumn(readJson(select, 17, file), &result.unreadable);
    result.fromCache = select.integer(18) != 0;
    result.recordedMs = select.integer(19);
    result.endpoint = select.text(20);
    result.pcSampling = samplingColumn(readJson(select, 21, file), &result.unreadable);

    auto metrics = db.cached("SELECT name, value FROM metrics WHERE result_id = ?1");
    metrics.bind(1, result.id);
    while (metrics.step())
        result.metrics[metricKey(metrics.text(0))] = metrics.real(1);
    result.sizes = readSizeResults(db, result.id);
    return result;
}

std::vector<SizeResult> Store::sizeResults(std::int64_t sessionId, int index) const
{
    auto select = m_impl->db.cached(
        "SELECT r.id FROM iterations i JOIN results r ON r.iteration_id = i.id WHERE i.session_id = ?1 AND i.idx = ?2");
    select.bind(1, sessionId).bind(2, index);
    if (!select.step())
        return {};
    const auto resultId = select.integer(0);
    select.reset();
    return readSizeResults(m_impl->db, resultId);
}

std::map<int, std::vector<SizeResult>> Store::sizeResults(std::int64_t sessionId) const
{
    // One query over the primary key of size_results, in (iteration, position) order.
    auto select = m_impl->db.cached(
        std::string("SELECT i.idx, z.label, z.values_json, z.median_us, z.p20_us, z.p80_us, z.cv, z.gbps, "
                    "z.pct_of_copy, z.speedup, z.pct_of_sol, z.sol_bound, ")
        + kSizeCeilingColumns
        + " FROM iterations i JOIN results r ON r.iteration_id = i.id JOIN size_results z ON z.result_id = r.id "
          "WHERE i.session_id = ?1 ORDER BY i.idx, z.position");
    select.bind(1, sessionId);
    std::map<int, std::vector<SizeResult>> byIteration;
    while (select.step())
        byIteration[static_cast<int>(select.integer(0))].push_back(readSizeRow(select, 1, m_impl->path.string()));
    return byIteration;
}

std::optional<IterationDetail> Store::iteration(std::int64_t sessionId, int index) const
{
    auto& db = m_impl->db;
    const std::string file = m_impl->path.string();
    // One read transaction: the parts come from the same moment even while a writer commits.
    Transaction snapshot(db, Transaction::Kind::Read);
    IterationDetail detail;
    std::int64_t iterationId = 0;
    std::optional<std::int64_t> resultId;
    {
        auto select = db.cached(kRowQuery + "WHERE i.session_id = ?1 AND i.idx = ?2");
        select.bind(1, sessionId).bind(2, index);
        if (!select.step())
            return std::nullopt;
        detail.row = readRow(select);
        iterationId = select.integer(16);
        resultId = select.optionalInteger(17);
    }
    if (detail.row.candidateId) {
        detail.candidate = m_impl->readCandidate(*detail.row.candidateId);
        if (detail.candidate && detail.candidate->parentId)
            detail.parent = m_impl->readCandidate(*detail.candidate->parentId);
    }
    if (resultId) {
        detail.result = m_impl->readResult("id", *resultId);
        auto findings = db.cached("SELECT rule_id, severity, message, evidence_json, directions_json FROM findings "
                                  "WHERE result_id = ?1 ORDER BY position");
        findings.bind(1, *resultId);
        while (findings.step()) {
            FindingRecord finding;
            finding.ruleId = findings.text(0);
            finding.severity = findings.text(1);
            finding.message = findings.text(2);
            finding.evidence = readJson(findings, 3, file);
            const auto directions = readJson(findings, 4, file);
            if (directions.is_array()) {
                for (const auto& direction : directions) {
                    if (direction.is_string())
                        finding.directions.push_back(direction.get<std::string>());
                }
            }
            detail.findings.push_back(std::move(finding));
        }
    }
    {
        auto decisions = db.cached("SELECT kind, reason, steering, replacement_candidate_id, decided_ms FROM decisions "
                                   "WHERE iteration_id = ?1 ORDER BY id");
        decisions.bind(1, iterationId);
        while (decisions.step()) {
            DecisionRecord decision;
            decision.kind = parseDecision(decisions.text(0)).value_or(DecisionRecord::Kind::AutoKeep);
            decision.reason = decisions.text(1);
            decision.steering = decisions.text(2);
            decision.replacementCandidateId = decisions.optionalInteger(3);
            decision.decidedMs = decisions.integer(4);
            detail.decisions.push_back(std::move(decision));
        }
    }
    {
        auto exchanges = db.cached("SELECT role, provider, model, request_json, response, usage_json, latency_ms, "
                                   "category, started_ms FROM llm_exchanges WHERE iteration_id = ?1 ORDER BY id");
        exchanges.bind(1, iterationId);
        while (exchanges.step()) {
            readJson(exchanges, 3, file); // a request that is not JSON is a corrupt file
            detail.exchanges.push_back(exchangeFromColumns({ exchanges.text(0), exchanges.text(1), exchanges.text(2),
                exchanges.text(3), exchanges.text(4), readJson(exchanges, 5, file), exchanges.optionalReal(6),
                exchanges.text(7), exchanges.integer(8) }));
        }
    }
    snapshot.commit();
    return detail;
}

} // namespace kl::store
