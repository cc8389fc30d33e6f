// kernelloop-cli campaign / campaign-report: many problems run as sessions over the runner pool, one
// runner per problem, recorded in the store as one campaign; re-running the same command resumes it
// (finished problems are not run again). The report is read from the store: a table, Markdown, CSV or
// JSON, the distribution as SVG, and the winners as a folder of standalone kernels.
#include "cli/command.h"
#include "cli/llm_options.h"
#include "cli/option_values.h"

#include "core/campaign/campaign_report.h"
#include "core/campaign/campaign_scheduler.h"
#include "core/campaign/report_export.h"
#include "core/model/error.h"
#include "core/pool/runner_endpoint.h"
#include "core/report/kernel_export.h"
#include "core/session/kernelbench_import.h"
#include "core/session/session_runner.h"
#include "core/store/campaign_store.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

namespace kl::cli {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop { false };
extern "C" void onStopSignal(int) { g_stop.store(true); }

// A folder's problems: its KernelBench .py files and its subfolders holding a problem.json, sorted; a
// subfolder that is the import of a .py beside it (x/ next to x.py) is that file's, not another problem.
std::vector<std::string> problemsIn(const fs::path& dir)
{
    if (fs::exists(dir / "problem.json"))
        return { (dir / "problem.json").string() };
    std::vector<std::string> found = session::kernelBenchFiles({ dir.string() });
    const std::set<std::string> imported(found.begin(), found.end());
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto p = entry.path();
        if (entry.is_directory() && fs::exists(p / "problem.json")
            && !imported.count((dir / (p.filename().string() + ".py")).string()))
            found.push_back((p / "problem.json").string());
    }
    std::sort(found.begin(), found.end());
    return found;
}

std::vector<std::string> collectProblems(const std::vector<std::string>& given, const std::vector<std::string>& dirs)
{
    std::vector<std::string> problems;
    for (const auto& g : given) {
        if (fs::is_directory(g))
            for (auto& p : problemsIn(g))
                problems.push_back(std::move(p));
        else
            problems.push_back(g);
    }
    for (const auto& d : dirs) {
        if (!fs::is_directory(d))
            throw Error("cli.bad-option", d, "--dir", "not a folder");
        for (auto& p : problemsIn(d))
            problems.push_back(std::move(p));
    }
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (auto& p : problems)
        if (seen.insert(fs::weakly_canonical(p).string()).second)
            unique.push_back(std::move(p));
    return unique;
}

struct CampaignOptions {
    session::SessionRecipe recipe;
    std::vector<std::string> problems;
    std::vector<std::string> dirs;
    std::string name;
    std::vector<std::string> runnerArgs;
    std::string proposer = "tuner";
    std::string time;
    LlmEndpointOptions llm;
};

// The recipe every problem runs with, as stored: no problem, store or runners (those are the campaign's
// rows, its file and whatever runs it now).
std::string storedRecipe(session::SessionRecipe recipe)
{
    recipe.problem = "PROBLEM";
    recipe.db.clear();
    recipe.runner.clear();
    recipe.runners.clear();
    recipe.runnersFile.clear();
    recipe.label.clear();
    return session::commandLine(recipe);
}

campaign::ProblemOutcome runOnEndpoint(const campaign::ProblemJob& job,
    const std::function<void(std::int64_t)>& started, std::atomic<bool>* cancel,
    const std::optional<EndpointConfig>& llm)
{
    auto setup = session::onEndpoint(job.recipe, job.recipe.runners.front());
    setup.recipe.runners = job.recipe.runners; // a share of the runners when the campaign has them to spare
    setup.store = storePath(job.recipe.db);
    setup.localRunner = runnerPath(job.recipe.runner);
    setup.llm = llm;
    setup.cancel = cancel;
    session::SessionRunner runner(std::move(setup));
    runner.events().subscribe([&started](const std::shared_ptr<const LoopEvent>& e) {
        if (const auto* s = std::get_if<SessionStarted>(e.get()))
            started(s->sessionId);
    });
    return campaign::outcomeOf(runner.run());
}

std::string stemOf(const std::string& problem)
{
    fs::path p(problem);
    if (p.filename() == "problem.json")
        p = p.parent_path();
    return p.stem().string();
}

int runCampaign(CampaignOptions& o)
{
    auto& recipe = o.recipe;
    for (const auto& v : o.runnerArgs) {
        if (pool::namesEndpoint(v))
            recipe.runners.push_back(v);
        else
            recipe.runner = v;
    }
    recipe.proposer = *session::parseProposerChoice(o.proposer);
    recipe.wallSeconds = o.time.empty() ? 0.0 : parseDuration(o.time);
    recipe.llm.provider = o.llm.provider;
    recipe.llm.baseUrl = o.llm.baseUrl;
    recipe.llm.model = o.llm.model;
    recipe.llm.keyEnv = o.llm.keyEnv;
    recipe.llm.keyFile = o.llm.keyFile;
    std::optional<EndpointConfig> llm;
    if (recipe.proposer != session::ProposerChoice::Tuner)
        llm = endpointConfig(o.llm); // the key is loaded here, never stored
    const auto endpoints = session::runnerEndpoints(recipe); // bad endpoints fail before anything starts
    std::vector<std::string> endpointNames;
    for (const auto& e : endpoints)
        endpointNames.push_back(e.text());

    const auto db = storePath(recipe.db);
    auto record = store::CampaignStore::open(db);
    std::string name = o.name;
    if (name.empty() && o.dirs.size() == 1) {
        auto dir = fs::absolute(o.dirs.front()).lexically_normal();
        name = (dir.filename().empty() ? dir.parent_path() : dir).filename().string(); // "kb/" names kb
    }
    if (name.empty())
        throw Error("cli.missing-option", {}, "--name", "name the campaign (--name), or give one --dir");
    std::int64_t id = 0;
    session::SessionRecipe every = recipe;
    if (const auto existing = record.campaignNamed(name)) {
        id = existing->id;
        const int left = record.resume(id);
        every = session::parseCommandLine(existing->recipe); // the recipe it started with
        // Where it runs now is this command's: the store, the local runner, how remote runners are reached.
        every.db = recipe.db;
        every.runner = recipe.runner;
        every.remoteRunner = recipe.remoteRunner;
        every.sshOptions = recipe.sshOptions;
        every.slurmGres = recipe.slurmGres;
        every.device = recipe.device;
        if (!o.problems.empty() || !o.dirs.empty())
            if (collectProblems(o.problems, o.dirs).size() != record.problems(id).size())
                std::cout << "note: the campaign keeps the problems it started with\n";
        std::cout << "resuming campaign " << id << " \"" << name << "\": " << left << " of "
                  << record.problems(id).size() << " problems to run\n";
    } else {
        const auto problems = collectProblems(o.problems, o.dirs);
        if (problems.empty())
            throw Error("cli.missing-option", {}, "PROBLEMS", "no problems: give problem files, folders or --dir");
        id = record.create(name, storedRecipe(recipe), problems);
        std::cout << "campaign " << id << " \"" << name << "\": " << problems.size() << " problems over "
                  << endpointNames.size() << " runner" << (endpointNames.size() == 1 ? "" : "s") << "\n";
    }
    std::cout << "recipe: " << record.campaign(id)->recipe << "\n" << std::flush;

    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    const std::size_t total = record.problems(id).size();
    const auto run = [&llm, &name](const campaign::ProblemJob& job, const std::function<void(std::int64_t)>& started,
                         std::atomic<bool>* cancel) {
        auto labelled = job;
        labelled.recipe.label = name + "/" + stemOf(job.recipe.problem);
        return runOnEndpoint(labelled, started, cancel, llm);
    };
    campaign::CampaignScheduler scheduler(db, id, every, endpointNames, run);
    scheduler.onEvent([total](const campaign::ProblemEvent& e) {
        const auto at = "[" + std::to_string(e.position + 1) + "/" + std::to_string(total) + "] " + stemOf(e.problem);
        switch (e.kind) {
        case campaign::ProblemEvent::Kind::Started:
            std::cout << at << " on " << e.endpoint << "\n";
            break;
        case campaign::ProblemEvent::Kind::Finished:
            std::cout << at << ": " << e.outcome.status
                      << (e.outcome.category.empty() ? "" : " [" + e.outcome.category + "] " + e.outcome.detail)
                      << (e.outcome.sessionId ? " (session " + std::to_string(e.outcome.sessionId) + ")" : "") << "\n";
            break;
        case campaign::ProblemEvent::Kind::HandedBack:
            std::cout << at << ": [" << e.outcome.category << "] on " << e.endpoint
                      << ", handed to another runner: " << e.outcome.detail << "\n";
            break;
        }
        std::cout << std::flush;
    });
    const auto status = scheduler.run(&g_stop);
    const auto sessions = store::Store::open(db, { .readOnly = true });
    const auto reading = store::CampaignStore::open(db, { .readOnly = true });
    std::cout << "\n" << campaign::reportTable(campaign::readReport(reading, sessions, id));
    return status == "finished" ? Ok : status == "cancelled" ? Interrupted : Failure;
}

const CommandRegistration campaignCmd([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand(
        "campaign", "Run many problems as sessions over the runner pool, one runner per problem (re-run to resume)");
    auto o = std::make_shared<CampaignOptions>();
    auto& r = o->recipe;
    cmd->add_option("PROBLEMS", o->problems, "problem files (problem.json, KernelBench .py) or folders of them");
    cmd->add_option("--dir", o->dirs, "a folder of problems: its KernelBench .py files and problem folders");
    cmd->add_option("--name", o->name, "the campaign's name (default: the --dir folder's); an existing one resumes");
    cmd->add_option("--db", r.db, "the session store (default: $KERNELLOOP_DB or ~/.local/share/kernelloop/...)");
    cmd->add_option("--runner", o->runnerArgs,
        "a runner endpoint, repeatable (one problem runs on each at a time): local:N, local:all, ssh:HOST[:gpu], "
        "slurm:ARGS, cmd:COMMAND; or the local runner's executable");
    cmd->add_option("--runners-file", r.runnersFile, "a file of runner endpoints, one a line");
    cmd->add_option("--remote-runner", r.remoteRunner, "kernelloop-runner's path on ssh hosts and Slurm nodes");
    cmd->add_option("--ssh-option", r.sshOptions, "an ssh -o option for ssh endpoints (repeatable)");
    cmd->add_option("--slurm-gres", r.slurmGres, "--gres of each Slurm runner step (none: no --gres)");
    cmd->add_option("--device", r.device, "GPU index (without --runner endpoints)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--proposer", o->proposer, "who proposes: tuner, llm or llm+tuner")
        ->check(CLI::IsMember({ "tuner", "llm", "llm+tuner" }))
        ->capture_default_str();
    cmd->add_option("--start", r.start, "where a problem with no kernel starts: inductor or a candidate file");
    cmd->add_option("--language", r.language, "the first kernel's language")
        ->check(CLI::IsMember({ "triton", "cuda" }));
    cmd->add_option("--strategy", r.strategy, "tuner search strategy")
        ->check(CLI::IsMember({ "auto", "exhaustive", "random", "evolutionary" }));
    cmd->add_option("--budget", r.budget, "rounds after the baseline, per problem")->check(CLI::PositiveNumber);
    cmd->add_option("--time", o->time, "wall-time budget per problem, e.g. 10m");
    cmd->add_option("--target", r.targetSpeedup, "stop a problem at this speedup over its baseline");
    cmd->add_option("-k,--candidates", r.candidatesPerRound, "candidates per round")->check(CLI::Range(1, 64));
    cmd->add_option("--patience", r.patience, "stop after this many rounds under --min-gain (0: never)");
    cmd->add_option("--min-gain", r.minGain, "a round gaining less than this fraction counts against patience");
    cmd->add_option("--metrics", r.metrics, "CUPTI metric set")
        ->check(CLI::IsMember({ "none", "default", "sol", "stalls", "lines", "deep" }));
    cmd->add_option("--trials", r.trials, "verification trials with fresh inputs")->check(CLI::Range(1, 20));
    cmd->add_option("--timing-interval", r.timingInterval,
           "stop repeating a timing once its median's 95% interval "
           "is within +-this fraction")
        ->check(CLI::Range(0.0005, 0.1));
    cmd->add_option("--profile-candidates", r.profileCandidates,
           "all: CUPTI counters for every candidate; promising: only within 5% of the best so far")
        ->check(CLI::IsMember({ "all", "promising" }));
    cmd->add_option("--compile-ahead", r.compileAhead, "threads compiling the next round ahead (0: none; -1: auto)")
        ->check(CLI::Range(-1, 64));
    cmd->add_option("--job-timeout", r.jobTimeoutSeconds, "seconds before a hung candidate is killed")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", r.seed, "seed for inputs and the tuner");
    cmd->add_flag("--no-cache", r.noCache, "evaluate again even when the same candidate was measured before");
    auto* llmGroup = cmd->add_option_group("LLM proposer", "with --proposer llm");
    addLlmEndpointOptions(llmGroup, o->llm, false);
    return [=]() { return runCampaign(*o); };
});

// --- the report ---

std::int64_t pickCampaign(const store::CampaignStore& record, const std::string& which)
{
    if (which.empty()) {
        const auto all = record.list();
        if (all.empty())
            throw Error("cli.no-campaign", {}, {}, "the store holds no campaign yet");
        return all.front().id;
    }
    if (const auto named = record.campaignNamed(which))
        return named->id;
    try {
        std::size_t used = 0;
        const auto id = std::stoll(which, &used);
        if (used == which.size() && record.campaign(id))
            return id;
    } catch (const std::exception&) {
    }
    throw Error("store.unknown-campaign", {}, which, "no campaign of this name or id");
}

void writeFile(const std::string& file, const std::string& text)
{
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (!out)
        throw Error("cli.write-failed", file, {}, "cannot write the file");
}

// The winners: each done problem's best kernel as exported by export-kernel, named after the problem.
int exportWinners(const store::Store& sessions, const campaign::CampaignReport& report, const std::string& dir)
{
    fs::create_directories(dir);
    int written = 0;
    for (const auto& row : report.rows) {
        if (row.status != "done" || !row.sessionId || !row.bestIteration)
            continue;
        const auto kernel = report::exportKernel(sessions, row.sessionId, row.bestIteration);
        const auto detail = sessions.iteration(row.sessionId, row.bestIteration);
        const auto extension = detail && detail->candidate ? fs::path(detail->candidate->fileName).extension() : ".cu";
        const auto file = fs::path(dir) / (std::to_string(row.position + 1) + "-" + row.name + extension.string());
        store::checkExportTarget(sessions.path(), file, true);
        writeFile(file.string(), kernel.text);
        ++written;
    }
    return written;
}

const CommandRegistration reportCmd([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("campaign-report", "A campaign's report from the store (no GPU)");
    auto which = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("table");
    auto output = std::make_shared<std::string>();
    auto svg = std::make_shared<std::string>();
    auto kernels = std::make_shared<std::string>();
    auto list = std::make_shared<bool>(false);
    cmd->add_option("CAMPAIGN", *which, "the campaign's name or id (default: the newest)");
    cmd->add_option("--db", *db, "the session store");
    cmd->add_option("--format", *format, "table, markdown, csv or json")
        ->check(CLI::IsMember({ "table", "markdown", "csv", "json" }))
        ->capture_default_str();
    cmd->add_option("-o,--output", *output, "write the report to this file (default: standard output)");
    cmd->add_option("--svg", *svg, "also write the distribution of speedups as an SVG plot");
    cmd->add_option("--kernels", *kernels, "also write each problem's best kernel into this folder");
    cmd->add_flag("--campaigns", *list, "list the campaigns");
    return [=]() {
        const auto path = storePath(*db);
        if (!fs::exists(path))
            throw Error("store.open-failed", path.string(), {}, "no such store (run campaign first, or pass --db)");
        const auto record = store::CampaignStore::open(path, { .readOnly = true });
        if (*list) {
            for (const auto& c : record.list())
                std::cout << c.id << "  " << c.name << "  " << c.status << "  " << record.problems(c.id).size()
                          << " problems\n";
            return Ok;
        }
        const auto sessions = store::Store::open(path, { .readOnly = true });
        const auto report = campaign::readReport(record, sessions, pickCampaign(record, *which));
        const std::string text = *format == "markdown" ? campaign::reportMarkdown(report)
            : *format == "csv"                         ? campaign::reportCsv(report)
            : *format == "json"                        ? campaign::reportJson(report).dump(2) + "\n"
                                                       : campaign::reportTable(report);
        if (output->empty())
            std::cout << text;
        else
            writeFile(*output, text);
        if (!svg->empty())
            writeFile(*svg, campaign::distributionSvg(report));
        if (!kernels->empty())
            std::cerr << "wrote " << exportWinners(sessions, report, *kernels) << " kernels to " << *kernels << "\n";
        return Ok;
    };
});

} // namespace

} // namespace kl::cli
