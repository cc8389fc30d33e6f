// Recording iterations: collected in memory, written in one transaction by finishIteration.
#include "core/store/compile_columns.h"
#include "core/store/exchange_columns.h"
#include "core/store/result_columns.h"
#include "core/store/runner_result.h"
#include "core/store/size_results.h"
#include "core/store/store.h"
#include "core/store/store_impl.h"

#include <algorithm>

namespace kl::store {

namespace {
std::int64_t orNow(std::int64_t ms) { return ms ? ms : nowMs(); }

std::string describe(const IterationRef& iteration)
{
    return "session " + std::to_string(iteration.sessionId) + " iteration " + std::to_string(iteration.index);
}
} // namespace

PendingIteration& Store::Impl::pendingOf(const IterationRef& iteration)
{
    auto it = pending.find({ iteration.sessionId, iteration.index });
    if (it == pending.end())
        throw Error("store.no-such-iteration", path.string(), describe(iteration),
            "the iteration was not begun or is already finished");
    return it->second;
}

std::optional<std::int64_t> Store::Impl::committedIterationId(const IterationRef& iteration)
{
    auto select = db.cached("SELECT id FROM iterations WHERE session_id = ?1 AND idx = ?2");
    select.bind(1, iteration.sessionId).bind(2, iteration.index);
    if (!select.step())
        return std::nullopt;
    return select.integer(0);
}

IterationRef Store::beginIteration(
    std::int64_t sessionId, std::optional<std::int64_t> candidateId, std::optional<int> round)
{
    m_impl->requireSession(sessionId);
    if (candidateId)
        m_impl->requireCandidateOf(sessionId, *candidateId);
    auto select = m_impl->db.cached("SELECT COALESCE(MAX(idx), 0) FROM iterations WHERE session_id = ?1");
    select.bind(1, sessionId);
    select.step();
    int index = static_cast<int>(select.integer(0));
    for (const auto& [key, iteration] : m_impl->pending) {
        if (key.first == sessionId)
            index = std::max(index, key.second);
    }
    IterationRef ref { sessionId, index + 1 };
    PendingIteration iteration;
    iteration.candidateId = candidateId;
    iteration.round = round;
    iteration.startedMs = nowMs();
    m_impl->pending.emplace(std::pair { ref.sessionId, ref.index }, std::move(iteration));
    return ref;
}

void Store::setCandidate(const IterationRef& iteration, std::int64_t candidateId)
{
    auto& pending = m_impl->pendingOf(iteration);
    m_impl->requireCandidateOf(iteration.sessionId, candidateId);
    pending.candidateId = candidateId;
}

void Store::recordResult(const IterationRef& iteration, const ResultRecord& result)
{
    m_impl->pendingOf(iteration).result = result;
}

void Store::addListings(const IterationRef& iteration, const StoredListings& listings)
{
    if (auto it = m_impl->pending.find({ iteration.sessionId, iteration.index }); it != m_impl->pending.end()) {
        if (auto& result = it->second.result)
            result->compile.listings = listings;
        return;
    }
    const auto iterationId = m_impl->committedIterationId(iteration);
    if (!iterationId)
        throw Error("store.no-such-iteration", m_impl->path.string(), describe(iteration), "no such iteration");
    Transaction transaction(m_impl->db);
    auto select = m_impl->db.cached("SELECT compile_json FROM results WHERE iteration_id = ?1");
    select.bind(1, *iterationId);
    if (!select.step())
        return;
    // None stored (or unreadable): the listings alone; the report's own keys are kept as they are.
    CompileRecord compile = compileRecordOf(nlohmann::json::parse(select.text(0), nullptr, false));
    compile.listings = listings;
    auto update = m_impl->db.cached("UPDATE results SET compile_json = ?2 WHERE iteration_id = ?1");
    update.bind(1, *iterationId).bind(2, compileColumn(compile).dump());
    update.step();
    transaction.commit();
}

void Store::recordFindings(const IterationRef& iteration, const std::vector<FindingRecord>& findings)
{
    auto& pending = m_impl->pendingOf(iteration);
    if (!pending.result && !findings.empty())
        throw Error("store.findings-without-result", m_impl->path.string(), describe(iteration),
            "findings belong to a result: record the result first");
    pending.findings.insert(pending.findings.end(), findings.begin(), findings.end());
}

void Store::recordDecision(const IterationRef& iteration, const DecisionRecord& decision)
{
    if (decision.replacementCandidateId)
        m_impl->requireCandidateOf(iteration.sessionId, *decision.replacementCandidateId);
    auto it = m_impl->pending.find({ iteration.sessionId, iteration.index });
    if (it != m_impl->pending.end()) {
        it->second.decisions.push_back(decision);
        return;
    }
    const auto iterationId = m_impl->committedIterationId(iteration);
    if (!iterationId)
        throw Error("store.no-such-iteration", m_impl->path.string(), describe(iteration), "no such iteration");
    Transaction transaction(m_impl->db);
    m_impl->insertDecision(*iterationId, decision);
    transaction.commit();
}

void Store::recordExchange(const IterationRef& iteration, const ExchangeRecord& exchange)
{
    m_impl->pendingOf(iteration).exchanges.push_back(exchange);
}

void Store::abandonIteration(const IterationRef& iteration)
{
    m_impl->pending.erase({ iteration.sessionId, iteration.index });
}

void Store::Impl::insertDecision(std::int64_t iterationId, const DecisionRecord& decision)
{
    auto insert = db.cached("INSERT INTO decisions (iteration_id, kind, reason, steering, replacement_candidate_id, "
                            "decided_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    insert.bind(1, iterationId).bind(2, decisionName(decision.kind)).bind(3, decision.reason);
    insert.bind(4, decision.steering).bind(5, decision.replacementCandidateId).bind(6, orNow(decision.decidedMs));
    insert.run();
}

std::vector<SizeResult> Store::Impl::namedSizes(std::int64_t sessionId, const ResultRecord& result)
{
    auto sizes = !result.sizes.empty() || !result.timing ? result.sizes : sizeResultsOf(*result.timing);
    const bool unnamed
        = std::any_of(sizes.begin(), sizes.end(), [](const SizeResult& size) { return size.values.empty(); });
    if (!unnamed)
        return sizes;
    auto select = db.cached("SELECT p.json FROM sessions s JOIN problems p ON p.hash = s.problem_hash WHERE s.id = ?1");
    select.bind(1, sessionId);
    if (select.step())
        nameSizes(sizes, nlohmann::json::parse(select.text(0), nullptr, false));
    return sizes;
}

namespace {
std::int64_t insertResult(Database& db, std::int64_t iterationId, const ResultRecord& result)
{
    auto insert = db.cached(
        "INSERT INTO results (iteration_id, status, category, median_us, p20_us, p80_us, cv, gbps, pct_of_copy, "
        "speedup, sm_clock_mhz, toolkit, from_cache, recorded_ms, detail, verification_json, timing_json, "
        "device_json, compile_json, profile_json, runner_endpoint, pc_sampling_json) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)");
    insert.bind(1, iterationId).bind(2, result.status).bind(3, result.category).bind(4, result.medianUs);
    insert.bind(5, result.p20Us).bind(6, result.p80Us).bind(7, result.cv).bind(8, result.gbps);
    insert.bind(9, result.pctOfCopy).bind(10, result.speedup).bind(11, result.smClockMhz).bind(12, result.toolkit);
    insert.bind(13, result.fromCache ? 1 : 0).bind(14, orNow(result.recordedMs)).bind(15, result.detail);
    bindJson(insert, 16, columnJson(result.verification));
    bindJson(insert, 17, columnJson(result.timing));
    bindJson(insert, 18, columnJson(result.device));
    bindJson(insert, 19, compileColumn(result.compile));
    bindJson(insert, 20, columnJson(result.profile));
    if (result.endpoint.empty())
        insert.bindNull(21);
    else
        insert.bind(21, result.endpoint);
    bindJson(insert, 22, columnJson(result.pcSampling));
    insert.run();
    const auto resultId = db.lastInsertId();

    auto metric = db.cached("INSERT INTO metrics (result_id, name, value) VALUES (?1, ?2, ?3)");
    for (const auto& [key, value] : result.metrics) {
        metric.bind(1, resultId).bind(2, metricName(key)).bind(3, value).run();
        metric.reset();
    }
    return resultId;
}

void insertFindings(Database& db, std::int64_t resultId, const std::vector<FindingRecord>& findings)
{
    auto insert = db.cached("INSERT INTO findings (result_id, position, rule_id, severity, message, evidence_json, "
                            "directions_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    int position = 0;
    for (const auto& finding : findings) {
        insert.bind(1, resultId).bind(2, position++).bind(3, finding.ruleId).bind(4, finding.severity);
        insert.bind(5, finding.message)
            .bind(6, finding.evidence.dump())
            .bind(7, nlohmann::json(finding.directions).dump());
        insert.run();
        insert.reset();
    }
}

void insertExchange(Database& db, std::int64_t iterationId, const ExchangeRecord& exchange)
{
    auto insert = db.cached("INSERT INTO llm_exchanges (iteration_id, role, provider, model, request_json, response, "
                            "usage_json, latency_ms, category, started_ms) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    const Exchange& e = exchange.exchange;
    insert.bind(1, iterationId).bind(2, exchange.role).bind(3, e.provider).bind(4, e.model);
    insert.bind(5, requestColumn(e)).bind(6, replyText(e));
    bindJson(insert, 7, usageColumn(e));
    insert.bind(8, e.latencyMs).bind(9, std::string(exchangeCategoryName(e.category)));
    insert.bind(10, orNow(exchange.startedMs));
    insert.run();
}
} // namespace

CommittedIteration Store::finishIteration(const IterationRef& iteration, const std::string& state)
{
    auto& pending = m_impl->pendingOf(iteration);
    auto& db = m_impl->db;
    CommittedIteration committed;
    committed.index = iteration.index;
    committed.candidateId = pending.candidateId;
    committed.startedMs = pending.startedMs;
    committed.endedMs = nowMs();

    Transaction transaction(db);
    {
        auto insert = db.cached("INSERT INTO iterations (session_id, idx, candidate_id, state, started_ms, ended_ms, "
                                "round) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        insert.bind(1, iteration.sessionId).bind(2, iteration.index).bind(3, pending.candidateId);
        insert.bind(4, state.empty() ? std::string("done") : state)
            .bind(5, committed.startedMs)
            .bind(6, committed.endedMs);
        if (pending.round)
            insert.bind(7, *pending.round);
        else
            insert.bindNull(7);
        try {
            insert.run();
        } catch (const Error& error) {
            if (error.category() == "store.constraint" && error.message().find("UNIQUE") != std::string::npos)
                throw Error("store.conflict", error.file(), describe(iteration),
                    "another writer recorded this iteration index first: " + error.message());
            throw;
        }
        committed.id = db.lastInsertId();
    }
    if (pending.result) {
        committed.resultId = insertResult(db, committed.id, *pending.result);
        insertSizeResults(db, *committed.resultId, m_impl->namedSizes(iteration.sessionId, *pending.result));
        insertFindings(db, *committed.resultId, pending.findings);
    }
    for (const auto& decision : pending.decisions)
        m_impl->insertDecision(committed.id, decision);
    for (const auto& exchange : pending.exchanges)
        insertExchange(db, committed.id, exchange);
    transaction.commit();

    m_impl->pending.erase({ iteration.sessionId, iteration.index });
    return committed;
}

} // namespace kl::store
