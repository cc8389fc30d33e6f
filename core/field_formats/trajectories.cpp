#include "core/field_formats/trajectories.h"

#include "core/field_formats/flashinfer_names.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/protocol/category.h"
#include "core/report/source_diff.h"
#include "core/store/store.h"

#include <cmath>
#include <map>
#include <optional>

namespace kl::fieldformats {

namespace {

Json optional(const std::optional<double>& v) { return v && std::isfinite(*v) ? Json(*v) : Json(); }
Json finite(double v)
{
    return std::isfinite(v) ? Json(v) : Json(std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"));
}

bool engineerKind(store::DecisionRecord::Kind k)
{
    using K = store::DecisionRecord::Kind;
    return k == K::Accept || k == K::Reject || k == K::Steer || k == K::Replace;
}

// The engineer's word on an iteration (see the header): a stored decision, or in review mode a proposal
// that ran (accepted; edited where the engineer wrote it).
enum class EngineerWord { Accept, Edit, Reject, Steer, Replace };

const char* engineerWordName(EngineerWord w)
{
    switch (w) {
    case EngineerWord::Accept:
        return "accept";
    case EngineerWord::Edit:
        return "edit";
    case EngineerWord::Reject:
        return "reject";
    case EngineerWord::Steer:
        return "steer";
    case EngineerWord::Replace:
        return "replace";
    }
    return "accept";
}

std::optional<EngineerWord> engineerDecision(const store::SessionRecord& session, const store::IterationDetail& d)
{
    using K = store::DecisionRecord::Kind;
    for (const auto& dec : d.decisions)
        switch (dec.kind) {
        case K::Accept:
            return EngineerWord::Accept;
        case K::Reject:
            return EngineerWord::Reject;
        case K::Steer:
            return EngineerWord::Steer;
        case K::Replace:
            return EngineerWord::Replace;
        case K::AutoKeep:
        case K::AutoRevert:
            break;
        }
    if (session.mode != "review" || !d.candidate || d.row.proposerDetail == "baseline" || !d.result)
        return std::nullopt;
    if (d.candidate->proposer == store::CandidateRecord::Proposer::Human)
        return EngineerWord::Edit;
    return EngineerWord::Accept;
}

Json exchangesJson(const store::IterationDetail& d)
{
    Json list = Json::array();
    for (const auto& x : d.exchanges) {
        const auto& e = x.exchange;
        Json messages = Json::array();
        for (const auto& m : e.prompt)
            messages.push_back({ { "role", m.role }, { "content", m.content } });
        list.push_back({ { "role", x.role }, { "provider", e.provider }, { "model", e.model },
            { "served_model", e.servedModel }, { "messages", messages }, { "reply", store::replyText(e) },
            { "category", exchangeCategoryName(e.category) }, { "message", e.message },
            { "usage",
                e.usage.reported ? Json { { "prompt_tokens", e.usage.promptTokens },
                    { "completion_tokens", e.usage.completionTokens } }
                                 : Json() },
            { "latency_ms", e.latencyMs }, { "attempts", e.attempts }, { "started_at", e.startedAt } });
    }
    return list;
}

Json verdictJson(const store::IterationDetail& d)
{
    if (!d.result)
        return { { "status", nullptr }, { "category", d.row.state }, { "detail", nullptr } };
    const auto& r = *d.result;
    Json failing = Json::array();
    int cases = 0;
    if (r.verification)
        for (const auto& c : r.verification->cases) {
            ++cases;
            if (c.passed)
                continue;
            Json window;
            if (c.window)
                window = { { "start", c.window->start }, { "expected", Json::array() }, { "actual", Json::array() } };
            if (c.window)
                for (std::size_t i = 0; i < c.window->expected.size(); ++i) {
                    window["expected"].push_back(finite(c.window->expected[i]));
                    window["actual"].push_back(i < c.window->actual.size() ? finite(c.window->actual[i]) : Json());
                }
            failing.push_back({ { "size", c.label }, { "kind", protocol::caseKindName(c.kind) }, { "trial", c.trial },
                { "category", c.category ? Json(protocol::categoryName(*c.category)) : Json() },
                { "elements", c.elements }, { "mismatches", c.mismatches }, { "unwritten", c.unwritten },
                { "nan", c.nan }, { "max_abs_error", finite(c.maxAbsError) },
                { "max_rel_error", finite(c.maxRelError) }, { "worst_output", c.worstOutput },
                { "worst_index", c.worstIndex }, { "window", window } });
        }
    const auto status = evaluationStatus(r.category);
    return { { "status", r.status }, { "category", r.category },
        { "flashinfer_status", status ? Json(std::string(*status)) : Json() }, { "detail", r.detail },
        { "verified_cases", cases }, { "failing_cases", failing } };
}

Json compileJson(const store::IterationDetail& d)
{
    if (!d.result)
        return nullptr;
    const auto& r = *d.result;
    const bool failed = r.category.rfind("compile.", 0) == 0 || r.category.rfind("plan.", 0) == 0
        || r.category.rfind("candidate.", 0) == 0;
    Json j = { { "category", failed ? r.category : std::string("ok") }, { "log", failed ? r.detail : std::string() },
        { "toolkit", r.toolkit } };
    if (r.compile.statics) {
        const auto& s = *r.compile.statics;
        j["registers"] = s.registers;
        j["theoretical_occupancy"] = s.theoreticalOccupancy;
        j["occupancy_limiter"] = s.occupancyLimiter;
    }
    return j;
}

Json timingsJson(const store::IterationDetail& d)
{
    Json list = Json::array();
    if (!d.result || !d.result->timing)
        return list;
    for (const auto& c : d.result->timing->cases) {
        Json t = { { "size", c.label }, { "statistic", "median" }, { "median_us", c.candidate.medianUs },
            { "p20_us", c.candidate.p20Us }, { "p80_us", c.candidate.p80Us }, { "mean_us", c.candidate.meanUs },
            { "min_us", c.candidate.minUs }, { "cv", c.candidate.cv }, { "reps", c.candidate.reps },
            { "median_interval_us",
                c.candidate.medianLowUs && c.candidate.medianHighUs
                    ? Json::array({ *c.candidate.medianLowUs, *c.candidate.medianHighUs })
                    : Json() },
            { "baseline_median_us", c.baseline ? Json(c.baseline->medianUs) : Json() },
            { "speedup_vs_baseline", optional(c.speedupVsBaseline) }, { "gbps", c.gbps },
            { "pct_of_copy", optional(c.pctOfCopy) }, { "pct_of_sol", optional(c.pctOfSol) },
            { "eager_median_us", c.eager ? Json(c.eager->medianUs) : Json() },
            { "torch_compile_median_us", c.torchCompile ? Json(c.torchCompile->medianUs) : Json() } };
        list.push_back(std::move(t));
    }
    return list;
}

Json findingsJson(const store::IterationDetail& d)
{
    Json list = Json::array();
    for (const auto& f : d.findings)
        list.push_back({ { "rule", f.ruleId }, { "severity", f.severity }, { "message", f.message },
            { "evidence", Json::parse(f.evidence.dump()) }, { "directions", f.directions } });
    return list;
}

struct Judged {
    int index = 0;
    std::string source;
    std::optional<EngineerWord> engineer; // none where the engineer had no word
    std::optional<store::DecisionRecord::Kind> loop; // auto-keep or auto-revert; none where the loop decided nothing
    std::string reason;
};

Json pairJson(std::int64_t session, int parent, const char* by, const Judged& chosen, const std::string& chosenWord,
    const Judged& rejected, const std::string& rejectedWord)
{
    return { { "schema", kTrajectorySchema }, { "version", kTrajectoryVersion }, { "type", "preference" },
        { "session", session }, { "parent_iteration", parent }, { "decided_by", by },
        { "chosen", { { "iteration", chosen.index }, { "decision", chosenWord }, { "source", chosen.source } } },
        { "rejected",
            { { "iteration", rejected.index }, { "decision", rejectedWord }, { "reason", rejected.reason },
                { "source", rejected.source } } } };
}

} // namespace

std::vector<Json> trajectoryRecords(
    const store::Store& store, const std::vector<std::int64_t>& sessions, TrajectorySummary* summary)
{
    std::vector<Json> records;
    TrajectorySummary counts;
    for (const auto id : sessions) {
        const auto session = store.session(id);
        if (!session)
            continue;
        ++counts.sessions;
        records.push_back({ { "schema", kTrajectorySchema }, { "version", kTrajectoryVersion }, { "type", "session" },
            { "session", id }, { "problem", session->problemName }, { "problem_hash", session->problemHash },
            { "label", session->label }, { "device", session->device }, { "proposer", session->proposer },
            { "mode", session->mode }, { "status", session->status },
            { "started_at", isoTimestamp(session->startedMs) } });
        std::map<std::int64_t, int> iterationOfCandidate;
        std::map<int, std::pair<std::string, std::string>> sources; // iteration -> file, source
        std::map<int, std::vector<Judged>> byParent; // parent iteration -> its children, judged
        // The loop proposes from its best so far: a refused proposal was stored without its parent, which
        // is the incumbent when it was proposed (the baseline, then each iteration the loop kept).
        std::optional<int> incumbent;
        for (const auto& row : store.listIterations(id)) {
            const auto d = store.iteration(id, row.index);
            if (!d)
                continue;
            ++counts.iterations;
            std::optional<int> parent;
            bool inferred = false;
            if (d->parent) {
                if (const auto p = iterationOfCandidate.find(d->parent->id); p != iterationOfCandidate.end())
                    parent = p->second;
            } else if (d->candidate && row.proposerDetail != "baseline" && incumbent) {
                parent = incumbent;
                inferred = true;
            }
            Json kernel;
            Json diff;
            if (d->candidate) {
                const auto& c = *d->candidate;
                iterationOfCandidate[c.id] = row.index;
                sources[row.index] = { c.fileName, c.source };
                kernel = { { "file", c.fileName }, { "source", c.source }, { "tunables", c.tunables },
                    { "source_hash", c.sourceHash } };
                if (parent && sources.count(*parent)) {
                    const auto& [parentFile, parentSource] = sources.at(*parent);
                    const auto sd = report::diffSources(parentSource, c.source);
                    diff = sd.same() ? Json("")
                                     : Json(report::unifiedDiffText(sd, "parent/" + parentFile, "this/" + c.fileName));
                }
            }
            Json decisions = Json::array();
            std::optional<store::DecisionRecord::Kind> loopDecision;
            std::string reason;
            for (const auto& dec : d->decisions) {
                decisions.push_back({ { "kind", store::decisionName(dec.kind) },
                    { "by", engineerKind(dec.kind) ? "engineer" : "loop" }, { "reason", dec.reason },
                    { "steering", dec.steering }, { "decided_at", isoTimestamp(dec.decidedMs) } });
                if (!engineerKind(dec.kind))
                    loopDecision = dec.kind;
                if (reason.empty())
                    reason = !dec.reason.empty() ? dec.reason : dec.steering;
            }
            const auto engineer = engineerDecision(*session, *d);
            Json record = { { "schema", kTrajectorySchema }, { "version", kTrajectoryVersion }, { "type", "iteration" },
                { "session", id }, { "iteration", row.index }, { "round", row.round ? Json(*row.round) : Json() },
                { "state", row.state }, { "proposer", store::proposedBy(row) },
                { "proposer_detail", row.proposerDetail }, { "parent_iteration", parent ? Json(*parent) : Json() },
                { "parent_inferred", inferred },
                { "hypothesis", d->candidate ? d->candidate->hypothesis : std::string() },
                { "predicted_speedup", d->candidate ? optional(d->candidate->predictedSpeedup) : Json() },
                { "exchanges", exchangesJson(*d) }, { "kernel", kernel }, { "diff_to_parent", diff },
                { "compile", compileJson(*d) }, { "verdict", verdictJson(*d) }, { "timings", timingsJson(*d) },
                { "speedup", optional(row.speedup) }, { "findings", findingsJson(*d) },
                { "engineer_decision", engineer ? Json(engineerWordName(*engineer)) : Json() },
                { "loop_decision", loopDecision ? Json(store::decisionName(*loopDecision)) : Json() },
                { "decisions", decisions } };
            records.push_back(std::move(record));
            if (d->candidate && parent && (engineer || loopDecision))
                byParent[*parent].push_back({ row.index, d->candidate->source, engineer, loopDecision, reason });
            if ((row.proposerDetail == "baseline"
                    && protocol::parseCategory(row.category) == protocol::Category::Passed)
                || loopDecision == store::DecisionRecord::Kind::AutoKeep)
                incumbent = row.index;
        }
        // Preference pairs, children of the same parent: the engineer's kept (accepted, edited) against refused
        // (rejected, steered), and the loop's (kept for its time against reverted).
        const auto engineerKept = [](const auto& w) { return w == EngineerWord::Accept || w == EngineerWord::Edit; };
        const auto engineerRefused
            = [](const auto& w) { return w == EngineerWord::Reject || w == EngineerWord::Steer; };
        using K = store::DecisionRecord::Kind;
        for (const auto& [parent, children] : byParent)
            for (const auto& chosen : children)
                for (const auto& rejected : children) {
                    if (chosen.engineer && rejected.engineer && engineerKept(*chosen.engineer)
                        && engineerRefused(*rejected.engineer)) {
                        records.push_back(pairJson(id, parent, "engineer", chosen, engineerWordName(*chosen.engineer),
                            rejected, engineerWordName(*rejected.engineer)));
                        ++counts.preferencePairs;
                    }
                    if (chosen.loop == K::AutoKeep && rejected.loop == K::AutoRevert) {
                        records.push_back(
                            pairJson(id, parent, "measurement", chosen, std::string(store::decisionName(K::AutoKeep)),
                                rejected, std::string(store::decisionName(K::AutoRevert))));
                        ++counts.preferencePairs;
                    }
                }
    }
    if (summary)
        *summary = counts;
    return records;
}

TrajectorySummary exportTrajectories(const store::Store& store, const std::vector<std::int64_t>& sessions,
    const std::filesystem::path& file, const ExportSecrets& secrets, bool overwrite)
{
    store::checkExportTarget(store.path(), file, overwrite);
    const ExportRedactor redactor(secrets);
    TrajectorySummary summary;
    std::string text;
    for (auto& record : trajectoryRecords(store, sessions, &summary)) {
        redactor.redact(record);
        text += record.dump() + "\n";
    }
    writeExportFile(file, text);
    return summary;
}

} // namespace kl::fieldformats
