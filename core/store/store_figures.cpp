// Batched reads for charts over a whole session: one query per kind of figure instead of one
// Store::iteration() per iteration (10,000 iterations: one query, not 10,000 result rows and JSON
// documents parsed in full).
#include "core/store/compile_columns.h"
#include "core/store/result_columns.h"
#include "core/store/runner_result.h"
#include "core/store/store_impl.h"

namespace kl::store {

std::map<int, MetricValues> Store::sessionMetrics(
    std::int64_t sessionId, const std::vector<std::string>& patterns) const
{
    std::map<int, MetricValues> byIteration;
    if (patterns.empty())
        return byIteration;
    std::string sql = "SELECT i.idx, m.name, m.value FROM iterations i JOIN results r ON r.iteration_id = i.id "
                      "JOIN metrics m ON m.result_id = r.id WHERE i.session_id = ?1 AND m.value IS NOT NULL AND (";
    for (std::size_t p = 0; p < patterns.size(); ++p)
        sql += (p ? " OR " : "") + std::string("m.name LIKE ?") + std::to_string(p + 2);
    sql += ")";
    auto select = m_impl->db.cached(sql);
    select.bind(1, sessionId);
    for (std::size_t p = 0; p < patterns.size(); ++p)
        select.bind(static_cast<int>(p + 2), "%/" + patterns[p]); // "KERNEL/CASE/" before the counter
    while (select.step())
        byIteration[static_cast<int>(select.integer(0))].emplace(metricKey(select.text(1)), select.real(2));
    return byIteration;
}

std::map<int, KernelStatics> Store::sessionStatics(std::int64_t sessionId) const
{
    // json_extract hands back only the small telemetry object, not the whole compile record.
    auto select = m_impl->db.cached(
        "SELECT i.idx, json_extract(r.compile_json, '$.telemetry') FROM iterations i "
        "JOIN results r ON r.iteration_id = i.id WHERE i.session_id = ?1 AND json_valid(r.compile_json) "
        "AND json_type(r.compile_json, '$.telemetry') = 'object'");
    select.bind(1, sessionId);
    std::map<int, KernelStatics> byIteration;
    while (select.step()) {
        CompileRecord compile;
        try {
            compile.statics = staticTelemetryFromJson(readJson(select, 1, m_impl->path.string()));
        } catch (const Error&) {
            continue; // a row this version cannot read draws no static facts
        }
        byIteration[static_cast<int>(select.integer(0))] = storedStatics(compile);
    }
    return byIteration;
}

std::map<int, protocol::Timing> Store::sessionTimings(std::int64_t sessionId) const
{
    auto select
        = m_impl->db.cached("SELECT i.idx, r.timing_json FROM iterations i JOIN results r ON r.iteration_id = i.id "
                            "WHERE i.session_id = ?1 AND r.median_us IS NOT NULL");
    select.bind(1, sessionId);
    std::map<int, protocol::Timing> byIteration;
    while (select.step())
        if (auto timing = timingColumn(readJson(select, 1, m_impl->path.string())))
            byIteration[static_cast<int>(select.integer(0))] = std::move(*timing);
    return byIteration;
}

std::map<int, Store::MeasuredOn> Store::sessionRunners(std::int64_t sessionId) const
{
    auto select = m_impl->db.cached("SELECT i.idx, r.runner_endpoint, r.device_json FROM iterations i JOIN results r "
                                    "ON r.iteration_id = i.id WHERE i.session_id = ?1");
    select.bind(1, sessionId);
    std::map<int, MeasuredOn> byIteration;
    while (select.step()) {
        MeasuredOn m;
        m.endpoint = select.text(1);
        if (const auto device = deviceColumn(readJson(select, 2, m_impl->path.string()))) {
            m.model = device->name;
            m.gpu = device->index;
        }
        byIteration[static_cast<int>(select.integer(0))] = std::move(m);
    }
    return byIteration;
}

std::map<int, std::string> Store::sessionDecisionReasons(std::int64_t sessionId) const
{
    // In decision order, so that the last one of an iteration stays (as IterationDetail::decisions lists them).
    auto select
        = m_impl->db.cached("SELECT i.idx, d.reason FROM decisions d JOIN iterations i ON i.id = d.iteration_id "
                            "WHERE i.session_id = ?1 ORDER BY d.id");
    select.bind(1, sessionId);
    std::map<int, std::string> byIteration;
    while (select.step())
        byIteration[static_cast<int>(select.integer(0))] = select.text(1);
    return byIteration;
}

} // namespace kl::store
