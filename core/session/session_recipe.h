#pragma once
// A session recipe: everything that says what a tuning session does (problem, who proposes, budgets,
// mode, runner, LLM settings), as one value. The CLI builds it from `tune` flags, the GUI from its
// dialog; core turns it into the loop's configuration and the proposer. It renders back as the
// equivalent `kernelloop-cli tune ...` line and parses from one. It never holds an API key: only
// where the key comes from (an environment variable's name or a file). Extra HTTP headers are not
// part of it either (they may carry credentials).
#include "core/llm/chat_client.h"
#include "core/loop/loop_events.h"
#include "core/loop/loop_values.h"
#include "core/pool/runner_pool.h"
#include "core/propose/proposer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kl::session {

enum class ProposerChoice { Tuner, Llm, LlmAndTuner }; // "tuner", "llm", "llm+tuner"

struct LlmSettings {
    std::string provider = "openai";
    std::string baseUrl;
    std::string model;
    std::string keyEnv; // the variable holding the key, never the key
    std::string keyFile; // or a file holding it
    std::string anthropicVersion = "2023-06-01";
    std::string timeout = "300"; // seconds, as typed (the endpoint options validate them)
    std::string connectTimeout = "10";
    std::string attempts = "3";
    std::string roles = "planner-coder"; // or "single"
    double temperature = -1.0; // < 0: the server's
    int maxTokens = 8192;
    std::string prompts; // a folder of prompt templates
    std::int64_t tokenBudget = 0;
    int fixAttempts = 1;
    int tunerRounds = 2; // llm+tuner
    bool operator==(const LlmSettings&) const = default;
};

struct SessionRecipe {
    std::string problem; // the problem file
    ProposerChoice proposer = ProposerChoice::Tuner;
    std::string strategy = "auto"; // tuner search strategy
    int budget = 20; // rounds after the baseline
    double wallSeconds = 0.0; // 0: no limit
    double targetSpeedup = 0.0;
    int patience = 2;
    double minGain = 0.05;
    int maxFailedRounds = 3;
    int candidatesPerRound = 1; // k
    std::string metrics = "default"; // none, default, sol, stalls
    LoopMode mode = LoopMode::Auto;
    std::string label;
    std::string db; // the store; empty: the default
    // The local runner: its executable, or a command line that starts it (`ssh gpuhost kernelloop-runner`,
    // `env A=1 /opt/kernelloop-runner`; --device N follows it). Empty: the default.
    std::string runner;
    int device = 0; // its GPU, when no endpoint is given; the --device of cmd: endpoints
    // Runner endpoints (local:N, local:all, ssh:[user@]host[:gpu], slurm:ARGS, cmd:COMMAND LINE), empty:
    // local:<device>; and a file of more, one a line. See core/pool/runner_endpoint.h.
    std::vector<std::string> runners;
    std::string runnersFile;
    std::string remoteRunner = "kernelloop-runner"; // on ssh hosts and Slurm nodes
    std::vector<std::string> sshOptions; // each as ssh -o OPTION
    std::string slurmGres = "gpu:1"; // "none": no --gres (a cluster without GPU gres)
    int trials = 2;
    // Adaptive timing stops once the 95% interval of the median is within +-this fraction of it: the
    // decision's resolution (0.005: near-equal candidates closer than ~0.5-1% may rank either way).
    double timingInterval = 0.005;
    // "all" (every candidate) or "promising": CUPTI counters only for candidates within 5% of the
    // incumbent's speedup (LoopConfig::profileWithin); the others are verified and timed alike.
    std::string profileCandidates = "all";
    // Threads compiling the next round's likely candidates while this round's jobs run (LoopConfig::
    // compileAhead): -1 picks for the host (CompileAhead::widthFor: a quarter of its threads, 1 to 8; none
    // on a single thread), 0: none.
    int compileAhead = -1;
    int jobTimeoutSeconds = 120;
    std::uint64_t seed = 1234;
    bool noCache = false;
    // Where a problem with no kernel yet starts: empty (a model writes the first kernel; with the tuner
    // alone, torch.compile's kernel), "inductor" (torch.compile's kernel, then the proposer), or a
    // candidate file (timed first, then the proposer). A problem with a kernel starts from it, then
    // from this in round 1 when one is named.
    std::string start;
    std::string language; // the first kernel's: "triton" or "cuda"; empty: the problem's (Triton by default)
    LlmSettings llm;
    bool operator==(const SessionRecipe&) const = default;
};

const char* proposerChoiceName(ProposerChoice choice);
std::optional<ProposerChoice> parseProposerChoice(const std::string& name);

// The loop's configuration (stop rules, k, mode, evaluation options, label, proposer detail).
LoopConfig loopConfig(const SessionRecipe& recipe);

// The proposer the recipe names. `endpoint` (with the key, loaded by the front end) is needed for
// llm and llm+tuner; the model's streamed text is published to `events` as ProposerText. Throws
// kl::Error "session.no-endpoint", and the prompt library's errors for a bad --prompts folder.
std::unique_ptr<Proposer> makeProposer(
    const SessionRecipe& recipe, const EndpointConfig* endpoint, std::shared_ptr<LoopEvents> events);

// The recipe's problem file loaded, with the recipe's language (throws as loadProblem does, and
// "session.bad-recipe" for an unknown language). A KernelBench .py file is imported first, into a
// folder beside it (reused when there), and has no kernel yet.
Problem loadRecipeProblem(const SessionRecipe& recipe);

// `proposer` with the recipe's start before it (core/propose/starting_kernel.h): torch.compile's
// kernel (`inductor`, or by default for the tuner alone on a problem with no kernel; the helper runs
// here, tens of seconds) or the candidate file named; `proposer` itself when neither applies.
// Throws "inductor.*" (what torch.compile did instead of one kernel) and the candidate's errors.
std::unique_ptr<Proposer> withStart(const SessionRecipe& recipe, const Problem& problem,
    std::unique_ptr<Proposer> proposer, std::vector<std::string>* notes = nullptr);

// The runner endpoints the recipe names (its --runner values, then its runners file), local:<device>
// when none; local:all expanded. Throws "runner.bad-endpoint", "runner.duplicate-endpoint", runners.*.
std::vector<pool::Endpoint> runnerEndpoints(const SessionRecipe& recipe);
// How they become runners: `localRunner` starts local endpoints' runners (a path or a command line).
pool::PoolOptions poolOptions(const SessionRecipe& recipe, const std::filesystem::path& localRunner);

// "kernelloop-cli tune PROBLEM --proposer llm ..." with only the options that differ from their
// defaults, each argument quoted for a POSIX shell where needed.
std::string commandLine(const SessionRecipe& recipe);

// The inverse of commandLine (and of what a user types): "[kernelloop-cli] tune PROBLEM [options]".
// Throws kl::Error "session.bad-command-line" naming the argument it cannot use.
SessionRecipe parseCommandLine(const std::string& line);

} // namespace kl::session
