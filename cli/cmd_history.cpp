// kernelloop-cli history / show / export / import / export-kernel: the store, anywhere (no GPU).
#include "cli/command.h"
#include "cli/option_values.h"
#include "cli/review_prompt.h"
#include "cli/table_text.h"

#include "core/figures/iteration_figures.h"
#include "core/findings/metric_facts.h"
#include "core/findings/telemetry.h"
#include "core/lines/instruction_mix.h"
#include "core/lines/line_heat.h"
#include "core/loop/store_records.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/report/candidate_changes.h"
#include "core/report/code_comparison.h"
#include "core/report/evidence.h"
#include "core/report/kernel_export.h"
#include "core/report/listings_compiled_here.h"
#include "core/report/session_notes.h"
#include "core/report/size_figures.h"
#include "core/report/source_diff.h"
#include "core/report/static_facts.h"
#include "core/report/tensor_ceiling.h"
#include "core/report/verification_report.h"
#include "core/store/code_listings.h"
#include "core/store/exchange_columns.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace kl::cli {

namespace {

std::string when(std::int64_t ms)
{
    const std::time_t t = ms / 1000;
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::gmtime(&t));
    return buf;
}

// --session, else the newest session in the store.
std::int64_t pickSession(const store::Store& s, std::int64_t option)
{
    if (option > 0)
        return option;
    const auto sessions = s.listSessions();
    if (sessions.empty())
        throw Error("cli.no-session", s.path().string(), {}, "the store holds no session yet");
    return sessions.front().session.id;
}

// Viewing never writes: a read-only open leaves the file's bytes and mtime as they were.
store::Store openForReading(const std::string& db)
{
    const auto path = storePath(db);
    if (!std::filesystem::exists(path))
        throw Error("store.open-failed", path.string(), {}, "no such store (run tune first, or pass --db)");
    return store::Store::open(path, { .readOnly = true });
}

// Checked when parsed (CLI11 prints the message and the command exits 2): an empty --db is not
// "the default store" (it would quietly read $KERNELLOOP_DB), and session ids count from 1 (0 and
// -1 are not "the newest").
CLI::Validator storeFile()
{
    return CLI::Validator(
        [](std::string& value) {
            return value.empty()
                ? std::string("[cli.bad-db] --db needs a file name; leave --db out for the default store")
                : std::string();
        },
        "FILE");
}

CLI::Validator sessionId()
{
    return CLI::Validator(
        [](std::string& value) {
            std::int64_t id = 0;
            try {
                std::size_t used = 0;
                id = std::stoll(value, &used);
                if (used != value.size())
                    id = 0;
            } catch (const std::exception&) {
                id = 0;
            }
            return id >= 1 ? std::string()
                           : "[cli.bad-session] \"" + value
                    + "\" is not a session id (a whole number from 1; leave --session out for the newest)";
        },
        "ID");
}

// store::proposedBy, "-" when unknown.
std::string proposerColumn(const store::IterationRow& r)
{
    const auto label = store::proposedBy(r);
    return label.empty() ? std::string("-") : label;
}

// "local:1, NVIDIA H200 #1" (the model left out when the header names it for the whole session).
std::string measuredOnText(const store::Store::MeasuredOn& m, bool withModel)
{
    std::string text = m.endpoint.empty() ? std::string("-") : m.endpoint;
    if (m.gpu >= 0)
        text += ", " + (withModel && !m.model.empty() ? m.model + " " : std::string("GPU ")) + "#"
            + std::to_string(m.gpu);
    return text;
}

// A pool keeps one GPU model, but a store may hold results of runs (or imports) on another: said on a
// line of its own (core/report/session_notes.h), nothing when one model measured them all.
std::string mixedModelsLine(const report::GpuModels& models)
{
    const auto warning = report::mixedModelsWarning(models);
    return warning.empty() ? warning : warning + "\n";
}

void printSessions(const store::Store& s)
{
    std::printf("%5s  %-16s  %-20s  %-22s  %-10s %5s %10s %8s\n", "id", "started (UTC)", "problem", "device", "status",
        "iters", "best us", "speedup");
    for (const auto& row : report::listSessions(s)) // "best": the session's best iteration's (best_iteration.h)
        std::printf("%5lld  %-16s  %-20s  %-22s  %-10s %5d %10s %8s\n", static_cast<long long>(row.session.id),
            when(row.session.startedMs).c_str(), row.session.problemName.substr(0, 20).c_str(),
            row.session.device.substr(0, 22).c_str(), row.session.status.c_str(), row.iterations,
            fixed(row.bestMedianUs, 2).c_str(), (row.bestSpeedup ? fixed(*row.bestSpeedup, 2) + "x" : "-").c_str());
}

// Whether a size of the session's figures is bound by its FLOPs: then the tensor ceiling is worth a line.
bool computeBound(const std::vector<figures::IterationFigures>& figures)
{
    for (const auto& f : figures)
        for (const auto& size : f.sizes)
            if (size.solBound == Bound::Compute)
                return true;
    return false;
}

// "tensor:     FP16 tensor ceiling 1070.5 TFLOP/s theoretical, 635.4 measured (mma.sync, 59%) at 1980 MHz".
std::string tensorCeilingLine(const std::optional<protocol::DeviceDescription>& device)
{
    const auto ceiling = device ? report::tensorCeilingOf(*device) : std::nullopt;
    return ceiling ? "tensor:     " + report::tensorCeilingText(*ceiling) + "\n" : std::string();
}

void printIterations(const store::Store& s, std::int64_t session)
{
    const auto sessionRecord = s.session(session);
    if (!sessionRecord)
        throw Error("store.unknown-session", s.path().string(), {}, "no session " + std::to_string(session));
    std::cout << "session " << session << ": " << sessionRecord->problemName << " on " << sessionRecord->device << ", "
              << sessionRecord->proposer << ", " << sessionRecord->status << "\n";
    if (const auto problem = s.problem(sessionRecord->problemHash))
        if (const auto fixed = problemFixedSizesOf(problem->json); !fixed.empty())
            std::cout << "fixed sizes: " << fixed << "\n";
    // With several main sizes the row's figures are the first size's and its speedup the geometric
    // mean; each size follows on its own line.
    const auto figures = figures::readFigures(s, session);
    const auto sizes = figures::timedSizes(figures);
    // Which runner and GPU measured each row; one model is named once, in the "measured on" line.
    const auto runners = s.sessionRunners(session);
    const auto models = report::gpuModelsOf(runners);
    if (models.size() == 1)
        std::cout << "measured on: " << models.begin()->first << " (runner and GPU index per row)\n";
    std::cout << mixedModelsLine(models);
    const auto rows = s.listIterations(session);
    if (!rows.empty()
        && std::none_of(rows.begin(), rows.end(), [](const auto& r) { return r.proposerDetail == "baseline"; }))
        std::cout << "baseline: PyTorch eager, timed in each job beside its candidate (the problem had no kernel); "
                     "every speedup is against it\n";
    if (computeBound(figures))
        std::cout << tensorCeilingLine(sessionRecord->deviceInfo);
    std::printf("%4s %-8s %-22s %10s %8s %6s %6s %-7s %8s %-22s %-12s %s\n", "iter", "proposer", "verdict", "median us",
        "GB/s", "%copy", "%SOL", "bound", sizes.size() > 1 ? "geomean" : "speedup", "runner", "decision",
        "top finding");
    for (const auto& r : rows) {
        const std::string proposer = proposerColumn(r);
        const std::string decision = r.lastDecision ? std::string(store::decisionName(*r.lastDecision)) : "";
        const auto ran = runners.find(r.index);
        const std::string runner = ran == runners.end() ? "-" : measuredOnText(ran->second, models.size() > 1);
        // Speed of light of the row's first size, as its other figures.
        const figures::SizeFigures* first = nullptr;
        for (const auto& f : figures)
            if (f.index == r.index && !f.sizes.empty())
                first = &f.sizes.front();
        const std::string bound = first && first->solBound ? std::string(boundName(*first->solBound)) : "-";
        std::printf("%4d %-8s %-22s %10s %8s %6s %6s %-7s %8s %-22s %-12s %s\n", r.index, proposer.c_str(),
            (r.category.empty() ? r.state : r.category).substr(0, 22).c_str(), fixed(r.medianUs, 2).c_str(),
            fixed(r.gbps, 0).c_str(), fixed(r.pctOfCopy, 1).c_str(),
            fixed(first ? first->pctOfSol : std::nullopt, 1).c_str(), bound.c_str(),
            (r.speedup ? fixed(*r.speedup, 2) + "x" : "-").c_str(), runner.c_str(), decision.c_str(),
            r.topFindingMessage.substr(0, 90).c_str());
        for (const auto& f : figures)
            if (f.index == r.index)
                for (const auto& size : f.sizes) {
                    if (sizes.size() > 1)
                        std::cout << "       " << report::sizeFiguresText(size) << "\n";
                    else if (const auto contenders = report::contendersText(size); !contenders.empty())
                        std::cout << "       " << contenders << "\n"; // PyTorch, timed in the same job
                }
    }
    // Which ceiling %SOL holds the FLOPs to and why, once for the rows that share it.
    std::vector<std::string> ceilings;
    for (const auto& f : figures)
        if (!f.sizes.empty() && f.sizes.front().pctOfSol && f.sizes.front().compute) {
            const auto& size = f.sizes.front();
            const std::string ceiling = ceilingText(*size.compute, size.computeReason);
            if (std::find(ceilings.begin(), ceilings.end(), ceiling) == ceilings.end())
                ceilings.push_back(ceiling);
        }
    for (const auto& ceiling : ceilings)
        std::cout << "%SOL: the larger of a same-size copy and the FLOPs at the ceiling " << ceiling << "\n";
    if (sizes.size() > 1)
        std::cout << "main sizes: " << sizes.size() << "; each row's figures are its first size's (" << sizes.front()
                  << "), its speedup the geometric mean over the sizes\n";
    if (const auto summary = loopSummary(sessionRecord->summary))
        std::cout << report::stopLine(*summary) << "\n";
}

void printExchange(const store::ExchangeRecord& record, bool withPrompt)
{
    const Exchange& e = record.exchange;
    std::cout << "\n--- LLM exchange: " << record.role << ", " << e.provider << "/" << e.model << ", "
              << exchangeCategoryName(e.category);
    if (e.latencyMs > 0.0)
        std::cout << ", " << fixed(e.latencyMs / 1000.0, 1) << " s";
    if (e.usage.reported)
        std::cout << ", " << e.usage.promptTokens << " + " << e.usage.completionTokens << " tokens";
    if (e.attempts > 1)
        std::cout << ", " << e.attempts << " attempts";
    std::cout << " ---\n";
    if (!e.message.empty())
        std::cout << e.message << "\n";
    if (withPrompt && !e.requestBody.empty()) {
        for (const PromptMessage& m : e.prompt)
            std::cout << "[" << m.role << "]\n" << m.content << "\n";
        std::cout << "[reply]\n";
    }
    const auto reply = store::replyText(e);
    std::cout << reply << (reply.empty() || reply.back() == '\n' ? "" : "\n");
}

// The hypothesis log: what each proposer expected against what was measured.
void printHypotheses(const store::Store& s, std::int64_t session)
{
    std::printf("%4s %-8s %-22s %10s %9s  %-44s %s\n", "iter", "proposer", "verdict", "predicted", "vs base",
        "measured against the best then", "hypothesis");
    for (const auto& e : report::hypothesisLog(s.listIterations(session), s.sessionDecisionReasons(session)))
        std::printf("%4d %-8s %-22s %10s %9s  %-44s %s\n", e.index, e.proposer.c_str(), e.verdict.substr(0, 22).c_str(),
            (e.predictedSpeedup ? fixed(*e.predictedSpeedup, 2) + "x" : "-").c_str(),
            (e.speedup ? fixed(*e.speedup, 2) + "x" : "-").c_str(), e.measured.substr(0, 44).c_str(),
            e.hypothesis.substr(0, 80).c_str());
}

const CommandRegistration history([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("history", "List sessions, or the iterations of one session");
    auto db = std::make_shared<std::string>();
    auto session = std::make_shared<std::int64_t>(0);
    auto all = std::make_shared<bool>(false);
    cmd->add_option("--db", *db, "the session store")->check(storeFile());
    cmd->add_option("--session", *session, "a session id (default: the newest)")->check(sessionId());
    cmd->add_flag("--sessions", *all, "list the sessions");
    auto hypotheses = std::make_shared<bool>(false);
    cmd->add_flag("--hypotheses", *hypotheses, "the hypothesis log: predicted against measured, per iteration");
    return [=]() {
        const auto s = openForReading(*db);
        if (*all)
            printSessions(s);
        else if (*hypotheses)
            printHypotheses(s, pickSession(s, *session));
        else
            printIterations(s, pickSession(s, *session));
        return Ok;
    };
});

// `show --lines`: the stored PC samples summed per source line of the candidate, hottest first,
// then which machine code (SASS/PTX) the iteration keeps for the GUI's pane.
std::string hotLinesText(const store::IterationDetail& d)
{
    const auto sampling = d.result ? d.result->pcSampling : std::nullopt;
    if (d.result)
        for (const Error& unreadable : d.result->unreadable)
            if (unreadable.where().starts_with("pc_sampling_json"))
                throw unreadable; // stored but damaged: said, not taken for "not sampled"
    const std::string listings = "code: "
        + store::codeListingsText(d.result ? store::codeListingsOf(d.result->compile) : store::CodeListings {}) + "\n";
    if (!sampling)
        return "no PC sampling for this iteration; run with --metrics lines\n" + listings;
    return lines::hotLinesReport(*sampling, d.candidate ? d.candidate->source : std::string(), 10) + listings;
}

// `show N --compare-code M`: the SASS (else PTX) of iteration N against M's with the instruction mix of
// both, as the GUI's Code Diff tab; an iteration whose session kept no listing is compiled here.
std::string codeComparisonText(const store::Store& s, std::int64_t session, const store::IterationDetail& d, int other)
{
    const auto o = s.iteration(session, other);
    if (!o)
        throw Error("store.no-such-iteration", s.path().string(), {},
            "session " + std::to_string(session) + " has no iteration " + std::to_string(other));
    std::string arch = "sm_90";
    if (const auto stored = s.session(session))
        if (const auto problem = s.problem(stored->problemHash))
            arch = problemArchOf(problem->json);
    const auto listingsOf = [&](const store::IterationDetail& detail) {
        auto l = detail.result ? store::codeListingsOf(detail.result->compile) : store::CodeListings {};
        if (l.ptx.empty() && l.sass.empty() && detail.candidate) {
            auto here = report::compileListingsHere(*detail.candidate, arch);
            const std::string why = here.listings.sassNote.substr(0, here.listings.sassNote.find(" ("));
            l = std::move(here.listings);
            l.sassNote = here.note + (why.empty() ? "" : "; " + why);
        }
        return l;
    };
    const std::string before = "iteration " + std::to_string(other), after = "iteration " + std::to_string(d.row.index);
    const auto c = report::compareCode(listingsOf(*o), listingsOf(d), before, after);
    if (!c.comparable())
        return c.note + "\n";
    std::string text = c.kind + " of " + after + " against " + before + ": +" + std::to_string(c.diff.added) + " -"
        + std::to_string(c.diff.removed) + " lines\n";
    if (!c.note.empty())
        text += c.note + "\n";
    return text + "\n" + lines::mixChangesText(c.beforeMix, c.afterMix) + "\n"
        + report::unifiedDiffText(c.diff, before, after);
}

const CommandRegistration show([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("show", "One iteration: source, diff to its parent, results, findings, evidence");
    auto db = std::make_shared<std::string>();
    auto session = std::make_shared<std::int64_t>(0);
    auto index = std::make_shared<int>(0);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("ITERATION", *index, "the iteration index")->required();
    cmd->add_option("--db", *db, "the session store")->check(storeFile());
    cmd->add_option("--session", *session, "a session id (default: the newest)")->check(sessionId());
    cmd->add_flag("--json", *json, "everything as JSON");
    auto prompts = std::make_shared<bool>(false);
    cmd->add_flag("--prompts", *prompts, "also print the prompts sent to the LLM");
    auto sideBySide = std::make_shared<bool>(false);
    cmd->add_flag("--side-by-side", *sideBySide, "the diff to its parent in two columns");
    auto lines = std::make_shared<bool>(false);
    cmd->add_flag("--lines", *lines, "only the hottest source lines and their warp states (PC sampling)");
    auto compareCode = std::make_shared<int>(0);
    cmd->add_option("--compare-code", *compareCode,
           "only its SASS (else PTX) against iteration N's, with the instruction mix of both")
        ->check(CLI::PositiveNumber);
    return [=]() {
        const auto s = openForReading(*db);
        const auto id = pickSession(s, *session);
        const auto d = s.iteration(id, *index);
        if (!d)
            throw Error("store.no-such-iteration", s.path().string(), {},
                "session " + std::to_string(id) + " has no iteration " + std::to_string(*index));
        if (*json) {
            nlohmann::json j = { { "session", id }, { "iteration", *index }, { "state", d->row.state } };
            if (d->candidate)
                j["candidate"] = { { "source", d->candidate->source }, { "tunables", d->candidate->tunables },
                    { "hypothesis", d->candidate->hypothesis },
                    { "proposer", store::proposerName(d->candidate->proposer) } };
            if (d->result)
                j["result"] = store::storedColumns(*d->result);
            j["findings"] = nlohmann::json::array();
            for (const auto& f : d->findings)
                j["findings"].push_back({ { "id", f.ruleId }, { "severity", f.severity }, { "message", f.message },
                    { "evidence", f.evidence }, { "directions", f.directions } });
            j["decisions"] = nlohmann::json::array();
            for (const auto& dec : d->decisions)
                j["decisions"].push_back({ { "kind", store::decisionName(dec.kind) }, { "reason", dec.reason },
                    { "steering", dec.steering } });
            j["exchanges"] = nlohmann::json::array();
            for (const auto& e : d->exchanges)
                j["exchanges"].push_back(
                    { { "role", e.role }, { "provider", e.exchange.provider }, { "model", e.exchange.model },
                        { "response", store::replyText(e.exchange) }, { "usage", store::usageColumn(e.exchange) },
                        { "category", exchangeCategoryName(e.exchange.category) } });
            std::cout << j.dump(2) << "\n";
            return Ok;
        }
        std::cout << "session " << id << ", iteration " << *index << " (" << d->row.state << ")\n";
        if (*lines) {
            std::cout << hotLinesText(*d);
            return Ok;
        }
        if (*compareCode > 0) {
            std::cout << codeComparisonText(s, id, *d, *compareCode);
            return Ok;
        }
        if (d->candidate) {
            const auto& c = *d->candidate;
            std::cout << "proposer:   " << store::proposerName(c.proposer)
                      << (c.proposerDetail.empty() ? "" : " (" + c.proposerDetail + ")") << "\n";
            if (!c.tunables.empty())
                std::cout << "tunables:   " << tunablesText(c.tunables) << "\n";
            if (!c.hypothesis.empty())
                std::cout << "hypothesis: " << c.hypothesis << "\n";
        }
        if (d->result) {
            const auto& r = *d->result;
            std::cout << "result:     " << r.status << " / " << r.category << (r.fromCache ? " (from cache)" : "")
                      << "\n";
            if (!r.detail.empty())
                std::cout << "detail:     " << r.detail << "\n";
            // The verification report and the evidence behind the figures, as the GUI's pages show them.
            if (const auto verified = report::verificationReport(r)) {
                std::cout << "verified:   " << report::sizesVerifiedText(*verified) << "\n";
                for (const auto& c : *verified) {
                    std::cout << "  case " << report::verifiedCaseText(c) << "\n";
                    if (!c.passed && !c.expected.empty())
                        std::cout << "  window " << c.worstOutput << " from " << report::listText(c.windowStart)
                                  << ": expected " << report::listText(c.expected) << ", got "
                                  << report::listText(c.actual) << "\n";
                }
            }
            if (const auto stored = s.session(id))
                if (const auto problem = s.problem(stored->problemHash))
                    for (const auto& t : report::outputTolerances(problem->json))
                        std::cout << "evidence:   tolerance " << report::toleranceText(t) << "\n";
            for (const auto& floor : report::floorChecks(r))
                std::cout << "evidence:   floor at " << floor.size << ": " << report::floorText(floor) << "\n";
            {
                store::Store::MeasuredOn on { r.endpoint, {}, -1 };
                if (r.device) {
                    on.model = r.device->name;
                    on.gpu = r.device->index;
                }
                std::cout << "measured:   " << measuredOnText(on, true) << "\n";
                std::cout << mixedModelsLine(report::gpuModelsOf(s.sessionRunners(id)));
            }
            const auto iterationFigures = figures::figuresOf(*d);
            const auto& sizes = iterationFigures.sizes;
            if (computeBound({ iterationFigures }))
                std::cout << tensorCeilingLine(r.device);
            if (sizes.size() > 1) {
                // One line per main size: a median and percentiles of two sizes never share a line.
                for (const auto& size : sizes)
                    std::cout << "timing:     " << report::sizeFiguresText(size) << "\n";
                std::cout << "speedup:    " << report::aggregateSpeedupText(r.speedup, sizes.size())
                          << " vs baseline, cv " << fixed(r.cv, 3) << " (largest), SM clock " << fixed(r.smClockMhz, 0)
                          << " MHz\n";
            } else if (r.medianUs) {
                const auto sol = sizes.empty() ? std::string() : report::solText(sizes.front());
                std::cout << "timing:     median " << fixed(r.medianUs, 2) << " us [p20 " << fixed(r.p20Us, 2)
                          << ", p80 " << fixed(r.p80Us, 2) << "], cv " << fixed(r.cv, 3) << ", " << fixed(r.gbps, 0)
                          << " GB/s, " << fixed(r.pctOfCopy, 1) << "% of copy, "
                          << (sol.empty() ? std::string() : sol + ", ") << fixed(r.speedup, 2)
                          << "x vs baseline, SM clock " << fixed(r.smClockMhz, 0) << " MHz\n";
                for (const auto& size : sizes)
                    if (const auto contenders = report::contendersText(size); !contenders.empty())
                        std::cout << "pytorch:    " << contenders << " (same job, cold L2, medians)\n";
            }
            // What ptxas and the occupancy calculator said, in words (the stored facts the findings read).
            if (r.compile.statics)
                std::cout << "static:     " << report::staticFactsText(*r.compile.statics) << "\n";
            for (const auto& [key, value] : r.metrics) {
                const auto unit = metricUnit(key.metric);
                const auto better = directionText(metricDirection(key.metric));
                std::cout << "  metric " << store::metricName(key) << " = " << value << (unit.empty() ? "" : " " + unit)
                          << (better.empty() ? std::string() : " (" + std::string(better) + ")") << "\n";
            }
        }
        for (const auto& f : d->findings) {
            std::cout << "finding [" << f.severity << "] " << f.ruleId << ": " << f.message << "\n";
            if (const auto evidence = store::evidenceText(f); !evidence.empty())
                std::cout << "  evidence: " << evidence << "\n";
            for (const auto& dir : f.directions)
                std::cout << "  -> " << dir << "\n";
        }
        for (const auto& dec : d->decisions)
            std::cout << "decision:   " << store::decisionName(dec.kind) << ": " << dec.reason
                      << (dec.steering.empty() ? "" : " / steer: " + dec.steering) << "\n";
        for (const auto& e : d->exchanges)
            printExchange(e, *prompts);
        if (d->candidate) {
            if (d->parent) {
                const auto& before = *d->parent;
                const auto& after = *d->candidate;
                std::cout << "\nchanges against its parent (" << before.fileName << "):\n";
                const auto changes
                    = report::candidateChanges(before.source, before.tunables, after.source, after.tunables);
                std::cout << (changes.empty() ? "(no tunable or declaration changes)\n"
                                              : report::changesHeaderText(changes));
                const auto diff = report::diffSources(before.source, after.source);
                if (diff.same())
                    std::cout << "(same source as its parent)\n";
                else if (*sideBySide)
                    std::cout << report::sideBySideText(diff);
                else
                    std::cout << report::unifiedDiffText(diff, "parent/" + before.fileName, "this/" + after.fileName);
            } else {
                std::cout << "\n" << d->candidate->source;
            }
        }
        return Ok;
    };
});

const CommandRegistration exportCmd([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("export", "Write one session to a single file");
    auto db = std::make_shared<std::string>();
    auto session = std::make_shared<std::int64_t>(0);
    auto file = std::make_shared<std::string>();
    cmd->add_option("FILE", *file, "the file to write")->required();
    auto force = std::make_shared<bool>(false);
    cmd->add_flag("--force", *force, "replace an existing file (never the store itself)");
    cmd->add_option("--db", *db, "the session store")->check(storeFile());
    cmd->add_option("--session", *session, "a session id (default: the newest)")->check(sessionId());
    return [=]() {
        const auto s = openForReading(*db);
        const auto id = pickSession(s, *session);
        s.exportSession(id, *file, { .overwrite = *force });
        std::cout << "exported session " << id << " to " << *file << "\n";
        return Ok;
    };
});

const CommandRegistration importCmd([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("import", "Add a session exported elsewhere to the store");
    auto db = std::make_shared<std::string>();
    auto file = std::make_shared<std::string>();
    // No CLI11 check: the store says what is wrong with the file, with a category (a folder, no such file).
    cmd->add_option("FILE", *file, "an exported session")->required();
    cmd->add_option("--db", *db, "the session store")->check(storeFile());
    return [=]() {
        auto s = store::Store::open(storePath(*db));
        const auto id = s.importSession(*file);
        std::cout << "imported as session " << id << " into " << s.path().string() << "\n";
        return Ok;
    };
});

const CommandRegistration exportKernel([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand(
        "export-kernel", "Write the best (or any) candidate as a standalone .cu with how it was measured");
    auto db = std::make_shared<std::string>();
    auto session = std::make_shared<std::int64_t>(0);
    auto index = std::make_shared<int>(0);
    auto out = std::make_shared<std::string>();
    cmd->add_option("--db", *db, "the session store")->check(storeFile());
    cmd->add_option("--session", *session, "a session id (default: the newest)")->check(sessionId());
    cmd->add_option("--iteration", *index, "an iteration (default: the session's best)");
    cmd->add_option("-o,--output", *out, "the .cu file to write (default: standard output)");
    return [=]() {
        const auto s = openForReading(*db);
        const auto id = pickSession(s, *session);
        const auto exported = report::exportKernel(s, id, *index);
        const int chosen = exported.iteration;
        std::ostringstream text;
        text << exported.text;
        if (out->empty()) {
            std::cout << text.str();
        } else {
            store::checkExportTarget(s.path(), *out, true); // never the store itself, a FIFO or a device
            std::ofstream f(*out);
            f << text.str();
            if (!f)
                throw Error("cli.write-failed", *out, {}, "cannot write the file");
            std::cout << "wrote iteration " << chosen << " of session " << id << " to " << *out << "\n";
        }
        return Ok;
    };
});

} // namespace

} // namespace kl::cli
