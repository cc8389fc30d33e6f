// kernelloop-cli tune / evaluate: the loop, headless.
#include "cli/cli_support.h"
#include "cli/command.h"
#include "cli/llm_options.h"
#include "cli/review_prompt.h"
#include "cli/tune_output.h"

#include "core/llm/llm_proposer.h"
#include "core/llm/token_budget.h"
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/propose/hybrid_proposer.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"

#include <csignal>
#include <iostream>

namespace kl::cli {

namespace {

std::atomic<bool> g_interrupted { false };
extern "C" void onSignal(int) { g_interrupted.store(true); }

struct CommonOptions {
    std::string problem;
    std::string db;
    std::string runner;
    std::string metrics = "default";
    int device = 0;
    int trials = 2;
    int jobTimeoutSeconds = 120;
    std::uint64_t seed = 1234;
    bool json = false;
    bool noCache = false;
    std::string label;
};

void addCommon(CLI::App* cmd, CommonOptions& o)
{
    cmd->add_option("PROBLEM", o.problem, "the problem file (problem.json)")->required();
    cmd->add_option(
        "--db", o.db, "the session store (default: $KERNELLOOP_DB or ~/.local/share/kernelloop/kernelloop.db)");
    cmd->add_option("--runner", o.runner, "the runner executable (default: beside this one)");
    cmd->add_option("--device", o.device, "GPU index")->check(CLI::NonNegativeNumber);
    cmd->add_option("--metrics", o.metrics, "CUPTI metric set")
        ->check(CLI::IsMember({ "none", "default", "sol", "stalls" }));
    cmd->add_option("--trials", o.trials, "verification trials with fresh inputs")->check(CLI::Range(1, 20));
    cmd->add_option("--job-timeout", o.jobTimeoutSeconds, "seconds before a hung candidate is killed")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", o.seed, "seed for inputs and the tuner");
    cmd->add_option("--label", o.label, "a name for the session");
    cmd->add_flag("--json", o.json, "JSON lines instead of the table");
    cmd->add_flag("--no-cache", o.noCache, "evaluate again even when the same candidate was measured before");
}

LoopConfig baseConfig(const CommonOptions& o)
{
    LoopConfig c;
    c.evaluate.profile = *protocol::parseMetricSet(o.metrics);
    c.evaluate.trials = o.trials;
    c.evaluate.seed = o.seed;
    c.jobTimeout = std::chrono::seconds(o.jobTimeoutSeconds);
    c.useCache = !o.noCache;
    c.label = o.label;
    return c;
}

// Makes the session's proposer once the session exists (an LLM proposer streams into its events).
using ProposerFactory = std::function<std::unique_ptr<Proposer>(const std::shared_ptr<LoopEvents>& events)>;

int runSession(const CommonOptions& o, LoopConfig config, const ProposerFactory& makeProposer, const Candidate* one,
    const TunableValues& oneTunables, bool review)
{
    const auto problem = loadProblem(o.problem);
    auto store = store::Store::open(storePath(o.db));
    RunnerConfig rc;
    rc.path = runnerPath(o.runner);
    rc.deviceIndex = o.device;
    rc.defaultJobTimeout = config.jobTimeout;
    RunnerClient runner(rc);

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    TuneOutput output(std::cout, o.json, config.stop.maxIterations);
    TuningSession session(problem, store, runner, config);
    session.events().subscribe([&output](const std::shared_ptr<const LoopEvent>& e) { output.onEvent(*e); });
    const auto proposer = makeProposer ? makeProposer(session.eventStream()) : nullptr;
    ReviewPrompt prompt(std::cin, std::cerr, &g_interrupted);
    if (review)
        session.setReviewGate(&prompt);
    try {
        const auto summary
            = one ? session.evaluateOne(*one, oneTunables, &g_interrupted) : session.run(*proposer, &g_interrupted);
        output.summary(summary);
        if (summary.cancelled)
            return Interrupted;
        if (one) // the baseline, then the candidate: both must pass
            return summary.passed >= 2 ? Ok : Failure;
        return summary.best ? Ok : Failure;
    } catch (const Error& e) {
        if (e.category() == "runner.no-device") {
            std::cerr << "error [no-device] " << o.problem << ": this command needs a GPU: " << e.message()
                      << "\n  (check, history, show, export and import work without one)\n";
            return NoDevice;
        }
        throw;
    }
}

const CommandRegistration tune([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("tune", "Run the tuning loop on a problem (needs a GPU)");
    auto o = std::make_shared<CommonOptions>();
    auto proposerName = std::make_shared<std::string>("tuner");
    auto strategy = std::make_shared<std::string>("auto");
    auto budget = std::make_shared<int>(20);
    auto time = std::make_shared<std::string>();
    auto target = std::make_shared<double>(0.0);
    auto mode = std::make_shared<std::string>("auto");
    auto k = std::make_shared<int>(1);
    auto patience = std::make_shared<int>(2);
    auto minGain = std::make_shared<double>(0.05);
    auto maxFailedRounds = std::make_shared<int>(3);
    addCommon(cmd, *o);
    auto llm = std::make_shared<LlmEndpointOptions>();
    llm->attempts = "3";
    llm->timeout = "300";
    auto roles = std::make_shared<std::string>("planner-coder");
    auto temperature = std::make_shared<double>(-1.0);
    auto maxTokens = std::make_shared<int>(8192);
    auto prompts = std::make_shared<std::string>();
    auto tokenBudget = std::make_shared<std::int64_t>(0);
    auto fixAttempts = std::make_shared<int>(1);
    auto tunerRounds = std::make_shared<int>(2);
    cmd->add_option("--proposer", *proposerName,
           "who proposes: the built-in tuner, an LLM, or both (the LLM writes, the tuner sweeps each new best)")
        ->check(CLI::IsMember({ "tuner", "llm", "llm+tuner" }))
        ->capture_default_str();
    cmd->add_option("--strategy", *strategy, "tuner search strategy")
        ->check(CLI::IsMember({ "auto", "exhaustive", "random", "evolutionary" }));
    cmd->add_option("--budget", *budget, "rounds after the baseline")->check(CLI::PositiveNumber);
    cmd->add_option("--time", *time, "wall-time budget, e.g. 10m");
    cmd->add_option("--target", *target, "stop at this speedup over the baseline");
    cmd->add_option("--mode", *mode, "auto, or review: every proposal waits for you")
        ->check(CLI::IsMember({ "auto", "review" }));
    cmd->add_option("-k,--candidates", *k, "candidates evaluated per round")->check(CLI::Range(1, 64));
    cmd->add_option("--patience", *patience, "stop after this many rounds under --min-gain (0: never)");
    cmd->add_option("--min-gain", *minGain, "a round gaining less than this fraction counts against patience");
    cmd->add_option("--max-failed-rounds", *maxFailedRounds,
           "stop after this many consecutive rounds with nothing to run (endpoint or reply failures; 0: never)")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    auto* llmGroup = cmd->add_option_group("LLM proposer", "with --proposer llm");
    addLlmEndpointOptions(llmGroup, *llm, false);
    llmGroup
        ->add_option("--roles", *roles, "planner then coder (debugger after a failure), or one role for small models")
        ->check(CLI::IsMember({ "planner-coder", "single" }))
        ->capture_default_str();
    llmGroup->add_option("--temperature", *temperature, "sampling temperature (default: the server's)");
    llmGroup->add_option("--max-tokens", *maxTokens, "reply limit per request")->capture_default_str();
    llmGroup->add_option("--prompts", *prompts, "a folder of prompt templates overriding the built-in ones");
    llmGroup->add_option("--token-budget", *tokenBudget, "stop proposing after this many tokens (0: no limit)");
    llmGroup->add_option("--fix-attempts", *fixAttempts, "debugger rounds for a candidate that failed")
        ->capture_default_str();
    llmGroup
        ->add_option("--tuner-rounds", *tunerRounds,
            "llm+tuner: tuner rounds over each new best source's tunables before the LLM again")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    return [=]() {
        auto config = baseConfig(*o);
        config.stop.maxIterations = *budget;
        config.stop.maxWallSeconds = time->empty() ? 0.0 : parseDuration(*time);
        config.stop.targetSpeedup = *target;
        config.stop.patience = *patience;
        config.stop.minGain = *minGain;
        config.stop.maxFailedRounds = *maxFailedRounds;
        config.candidatesPerIteration = *k;
        config.mode = *mode == "review" ? LoopMode::Review : LoopMode::Auto;
        ProposerFactory factory;
        const TunerOptions tc { *parseTunerStrategy(*strategy), o->seed };
        if (*proposerName != "tuner") {
            auto endpoint = endpointConfig(*llm);
            if (*tokenBudget > 0)
                endpoint.budget = std::make_shared<TokenBudget>(*tokenBudget);
            config.proposerDetail = *proposerName + ":" + llm->provider + "/" + llm->model;
            const bool hybrid = *proposerName == "llm+tuner";
            const int rounds = *tunerRounds;
            LlmProposerConfig lc;
            lc.roles = *parseRoles(*roles);
            if (*temperature >= 0.0)
                lc.temperature = *temperature;
            lc.maxTokens = *maxTokens;
            lc.maxFixAttempts = *fixAttempts;
            // Checked before the runner starts: a bad template folder fails at once.
            auto library = prompts->empty() ? PromptLibrary::builtIn() : PromptLibrary::withOverrides(*prompts);
            factory = [endpoint, lc, library, hybrid, rounds, tc](
                          const std::shared_ptr<LoopEvents>& events) mutable -> std::unique_ptr<Proposer> {
                // The model's streamed text goes through the session's event stream, like everything else.
                lc.onText = [events](std::string_view role, int alternative, std::string_view text) {
                    events->publish(ProposerText { std::string(role), alternative, std::string(text) });
                };
                auto writer = std::make_unique<LlmProposer>(makeChatClient(endpoint), library, lc);
                if (!hybrid)
                    return writer;
                return std::make_unique<HybridProposer>(std::move(writer), std::make_unique<Tuner>(tc), rounds);
            };
        } else {
            config.proposerDetail = "tuner:" + *strategy;
            factory = [tc](const std::shared_ptr<LoopEvents>&) -> std::unique_ptr<Proposer> {
                return std::make_unique<Tuner>(tc);
            };
        }
        return runSession(*o, config, factory, nullptr, {}, config.mode == LoopMode::Review);
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
    return [=]() {
        const auto candidate = loadCandidate(*file);
        const auto tunables = candidate.withOverrides(parseSets(*sets));
        auto config = baseConfig(*o);
        config.proposerDetail = "human";
        return runSession(*o, config, {}, &candidate, tunables, false);
    };
});

} // namespace

} // namespace kl::cli
