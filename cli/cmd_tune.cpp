// kernelloop-cli tune / evaluate: the loop, headless. The flags become a session recipe, which core's
// session runner (core/session/session_runner.h) assembles and runs; this prints its events.
#include "cli/command.h"
#include "cli/llm_options.h"
#include "cli/option_values.h"
#include "cli/review_prompt.h"
#include "cli/tune_output.h"
#include "core/pool/runner_endpoint.h"

#include "core/model/error.h"
#include "core/session/session_runner.h"

#include <algorithm>
#include <csignal>
#include <iostream>

namespace kl::cli {

namespace {

std::atomic<bool> g_interrupted { false };
extern "C" void onSignal(int) { g_interrupted.store(true); }

// What `tune` and `evaluate` share: the recipe's runner, store and evaluation options.
struct CommonOptions {
    session::SessionRecipe recipe;
    std::vector<std::string> runnerArgs; // --runner: endpoints, or one local runner executable
    bool json = false;
};

// --runner VALUE is an endpoint (local:, ssh:, slurm:, cmd:) or, as before pools, the local runner (a path or a
// command line).
void takeRunnerArgs(CommonOptions& o)
{
    for (const auto& v : o.runnerArgs) {
        if (pool::namesEndpoint(v))
            o.recipe.runners.push_back(v);
        else if (!o.recipe.runner.empty())
            throw Error("cli.bad-runner", {}, v,
                "a second runner executable (\"" + o.recipe.runner + "\" and \"" + v
                    + "\"); name GPUs as endpoints: --runner local:0 --runner local:1");
        else
            o.recipe.runner = v;
    }
}

// One line per endpoint where the pool is more than one runner or something went wrong with one.
void printPoolStatus(const std::vector<pool::RunnerStatus>& status)
{
    const bool worth
        = status.size() > 1 || std::any_of(status.begin(), status.end(), [](const auto& s) { return s.faults > 0; });
    if (!worth)
        return;
    for (const auto& s : status)
        std::cerr << "runner " << s.endpoint << (s.device.empty() ? "" : " (" + s.device + ")") << ": "
                  << pool::runnerStateName(s.state) << ", " << s.jobsDone << " jobs, " << s.faults << " faults"
                  << (s.lastError.empty() ? "" : "; last: " + s.lastError) << "\n";
}

void addCommon(CLI::App* cmd, CommonOptions& o)
{
    auto& r = o.recipe;
    cmd->add_option("PROBLEM", r.problem, "the problem file (problem.json)")->required();
    cmd->add_option(
        "--db", r.db, "the session store (default: $KERNELLOOP_DB or ~/.local/share/kernelloop/kernelloop.db)");
    cmd->add_option("--runner", o.runnerArgs,
        "a runner endpoint, repeatable: local:N, local:all, ssh:[user@]host[:gpu], slurm:ARGS, cmd:COMMAND; or the "
        "local runner: its executable (default: beside this one) or a command line that starts it, such as "
        "'ssh gpuhost kernelloop-runner' (--device N follows it)");
    cmd->add_option("--runners-file", r.runnersFile, "a file of runner endpoints, one a line (# comments)");
    cmd->add_option("--remote-runner", r.remoteRunner, "kernelloop-runner's path on ssh hosts and Slurm nodes")
        ->capture_default_str();
    cmd->add_option("--ssh-option", r.sshOptions, "an ssh -o option for ssh endpoints (repeatable), e.g. Port=2222");
    cmd->add_option("--slurm-gres", r.slurmGres, "--gres of each Slurm runner step (none: no --gres)")
        ->capture_default_str();
    cmd->add_option("--device", r.device, "GPU index (without --runner endpoints)")->check(CLI::NonNegativeNumber);
    cmd->add_option(
           "--metrics", r.metrics, "CUPTI metric set (lines: PC sampling per source line; deep: stalls + lines)")
        ->check(CLI::IsMember({ "none", "default", "sol", "stalls", "lines", "deep" }));
    cmd->add_option("--trials", r.trials, "verification trials with fresh inputs")->check(CLI::Range(1, 20));
    cmd->add_option("--timing-interval", r.timingInterval,
           "stop repeating a timing once the 95% interval of its median is within +-this fraction (adaptive)")
        ->check(CLI::Range(0.0005, 0.1))
        ->capture_default_str();
    cmd->add_option("--profile-candidates", r.profileCandidates,
           "all: CUPTI counters for every candidate; promising: only for those within 5% of the best so far "
           "(the rest verified and timed alike; profiling is most of a job)")
        ->check(CLI::IsMember({ "all", "promising" }))
        ->capture_default_str();
    cmd->add_option("--compile-ahead", r.compileAhead,
           "threads compiling the next round's likely candidates while this round's jobs run (0: none; -1: a "
           "quarter of the CPU's threads, 1 to 8, none on a single thread); decisions are the same either way")
        ->check(CLI::Range(-1, 64))
        ->capture_default_str();
    cmd->add_option("--job-timeout", r.jobTimeoutSeconds, "seconds before a hung candidate is killed")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", r.seed, "seed for inputs and the tuner");
    cmd->add_option("--label", r.label, "a name for the session");
    cmd->add_flag("--json", o.json, "JSON lines instead of the table");
    cmd->add_flag("--no-cache", r.noCache, "evaluate again even when the same candidate was measured before");
}

// The session through core's session runner, its events printed. `one`: evaluate that candidate (in a
// session of its own, or as the next iteration of session `into`); else the loop with `llm`'s endpoint.
int runSession(const CommonOptions& o, const std::optional<EndpointConfig>& llm, const Candidate* one,
    const TunableValues& oneTunables, std::int64_t into = 0)
{
    const auto& recipe = o.recipe;
    session::SessionSetup setup;
    setup.recipe = recipe;
    setup.store = storePath(recipe.db);
    setup.localRunner = runnerPath(recipe.runner);
    setup.llm = llm;
    if (one) {
        setup.only = *one;
        setup.onlyTunables = oneTunables;
        setup.appendTo = into;
    }
    setup.cancel = &g_interrupted;
    const bool json = o.json;
    setup.note = [json](const std::string& note) { (json ? std::cerr : std::cout) << "note: " << note << "\n"; };
    ReviewPrompt prompt(std::cin, std::cerr, &g_interrupted);
    if (recipe.mode == LoopMode::Review)
        setup.reviewGate = &prompt;

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    session::SessionRunner runner(std::move(setup));
    TuneOutput output(std::cout, o.json, session::loopConfig(recipe).stop.maxIterations);
    runner.events().subscribe([&output](const std::shared_ptr<const LoopEvent>& e) { output.onEvent(*e); });
    try {
        const auto summary = runner.run();
        output.summary(summary);
        printPoolStatus(runner.poolStatus());
        if (summary.cancelled)
            return Interrupted;
        if (into) // the session's baseline was measured when it ran
            return summary.passed >= 1 ? Ok : Failure;
        if (one) // the baseline, then the candidate: both must pass
            return summary.passed >= 2 ? Ok : Failure;
        return summary.best ? Ok : Failure;
    } catch (const Error& e) {
        if (e.category() == "runner.no-device") {
            std::cerr << "error [no-device] " << recipe.problem << ": this command needs a GPU: " << e.message()
                      << "\n  (check, history, show, export and import work without one)\n";
            return NoDevice;
        }
        throw;
    }
}

const CommandRegistration tune([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("tune", "Run the tuning loop on a problem (needs a GPU)");
    auto o = std::make_shared<CommonOptions>();
    auto& r = o->recipe;
    auto proposerName = std::make_shared<std::string>("tuner");
    auto time = std::make_shared<std::string>();
    auto mode = std::make_shared<std::string>("auto");
    addCommon(cmd, *o);
    auto llm = std::make_shared<LlmEndpointOptions>();
    llm->attempts = r.llm.attempts;
    llm->timeout = r.llm.timeout;
    cmd->add_option("--proposer", *proposerName,
           "who proposes: the built-in tuner, an LLM, or both (the LLM writes, the tuner sweeps each new best)")
        ->check(CLI::IsMember({ "tuner", "llm", "llm+tuner" }))
        ->capture_default_str();
    cmd->add_option("--start", r.start,
        "a problem with no kernel yet starts from: inductor (torch.compile's kernel, the default for the tuner "
        "alone) or a candidate FILE; with a model and no --start, the model writes the first kernel");
    cmd->add_option("--language", r.language, "the first kernel's language (default: the problem's, else triton)")
        ->check(CLI::IsMember({ "triton", "cuda" }));
    cmd->add_option("--strategy", r.strategy, "tuner search strategy")
        ->check(CLI::IsMember({ "auto", "exhaustive", "random", "evolutionary" }));
    cmd->add_option("--budget", r.budget, "rounds after the baseline")->check(CLI::PositiveNumber);
    cmd->add_option("--time", *time, "wall-time budget, e.g. 10m");
    cmd->add_option("--target", r.targetSpeedup, "stop at this speedup over the baseline");
    cmd->add_option("--mode", *mode, "auto, or review: every proposal waits for you")
        ->check(CLI::IsMember({ "auto", "review" }));
    cmd->add_option("-k,--candidates", r.candidatesPerRound, "candidates evaluated per round")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--patience", r.patience, "stop after this many rounds under --min-gain (0: never)");
    cmd->add_option("--min-gain", r.minGain, "a round gaining less than this fraction counts against patience");
    cmd->add_option("--max-failed-rounds", r.maxFailedRounds,
           "stop after this many consecutive rounds with nothing to run (endpoint or reply failures; 0: never)")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    auto* llmGroup = cmd->add_option_group("LLM proposer", "with --proposer llm");
    addLlmEndpointOptions(llmGroup, *llm, false);
    llmGroup
        ->add_option(
            "--roles", r.llm.roles, "planner then coder (debugger after a failure), or one role for small models")
        ->check(CLI::IsMember({ "planner-coder", "single" }))
        ->capture_default_str();
    llmGroup->add_option("--temperature", r.llm.temperature, "sampling temperature (default: the server's)");
    llmGroup->add_option("--max-tokens", r.llm.maxTokens, "reply limit per request")->capture_default_str();
    llmGroup->add_option("--prompts", r.llm.prompts, "a folder of prompt templates overriding the built-in ones");
    llmGroup->add_option("--token-budget", r.llm.tokenBudget, "stop proposing after this many tokens (0: no limit)");
    llmGroup->add_option("--fix-attempts", r.llm.fixAttempts, "debugger rounds for a candidate that failed")
        ->capture_default_str();
    llmGroup
        ->add_option("--tuner-rounds", r.llm.tunerRounds,
            "llm+tuner: tuner rounds over each new best source's tunables before the LLM again")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    return [=]() {
        takeRunnerArgs(*o);
        auto& recipe = o->recipe;
        recipe.proposer = *session::parseProposerChoice(*proposerName);
        recipe.wallSeconds = time->empty() ? 0.0 : parseDuration(*time);
        recipe.mode = *mode == "review" ? LoopMode::Review : LoopMode::Auto;
        recipe.llm.provider = llm->provider;
        recipe.llm.baseUrl = llm->baseUrl;
        recipe.llm.model = llm->model;
        recipe.llm.keyEnv = llm->keyEnv;
        recipe.llm.keyFile = llm->keyFile;
        recipe.llm.anthropicVersion = llm->anthropicVersion;
        recipe.llm.timeout = llm->timeout;
        recipe.llm.connectTimeout = llm->connectTimeout;
        recipe.llm.attempts = llm->attempts;
        std::optional<EndpointConfig> endpoint;
        if (recipe.proposer != session::ProposerChoice::Tuner) {
            endpoint = endpointConfig(*llm); // the key is loaded here, never kept in the recipe
            // Checked before the runner starts: a bad template folder fails at once.
            session::makeProposer(recipe, &*endpoint, nullptr);
        }
        return runSession(*o, endpoint, nullptr, {});
    };
});

const CommandRegistration evaluate([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("evaluate", "Run one hand-written candidate through the pipeline and record it");
    auto o = std::make_shared<CommonOptions>();
    auto file = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    addCommon(cmd, *o);
    cmd->add_option("FILE", *file, "the candidate (.cu with // @kl declarations)")->required();
    cmd->add_option("--set", *sets, "NAME=VALUE for a tunable (repeatable)");
    auto into = std::make_shared<std::int64_t>(0);
    cmd->add_option("--session", *into,
           "add the candidate to this stored session of the problem (its next iteration, built on its best) "
           "instead of a session of its own")
        ->check(CLI::PositiveNumber);
    return [=]() {
        takeRunnerArgs(*o);
        const auto candidate = loadCandidate(*file);
        return runSession(*o, std::nullopt, &candidate, parseSets(*sets), *into);
    };
});

} // namespace

} // namespace kl::cli
