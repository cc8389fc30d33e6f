#include "core/session/session_recipe.h"

#include "core/compile/inductor_kernel.h"
#include "core/llm/llm_proposer.h"
#include "core/llm/token_budget.h"
#include "core/model/error.h"
#include "core/propose/hybrid_proposer.h"
#include "core/propose/starting_kernel.h"
#include "core/session/kernelbench_import.h"
#include "core/tuner/tuner.h"

#include <filesystem>

namespace kl::session {

const char* proposerChoiceName(ProposerChoice choice)
{
    switch (choice) {
    case ProposerChoice::Tuner:
        return "tuner";
    case ProposerChoice::Llm:
        return "llm";
    case ProposerChoice::LlmAndTuner:
        return "llm+tuner";
    }
    return "tuner";
}

std::optional<ProposerChoice> parseProposerChoice(const std::string& name)
{
    for (const auto c : { ProposerChoice::Tuner, ProposerChoice::Llm, ProposerChoice::LlmAndTuner })
        if (name == proposerChoiceName(c))
            return c;
    return std::nullopt;
}

LoopConfig loopConfig(const SessionRecipe& r)
{
    LoopConfig c;
    // "lines": PC sampling alone (per-line warp states); "deep": the stall counters and PC sampling.
    if (r.metrics == "lines") {
        c.evaluate.profile = protocol::MetricSet::None;
        c.evaluate.pcSampling = true;
    } else if (r.metrics == "deep") {
        c.evaluate.profile = protocol::MetricSet::Stalls;
        c.evaluate.pcSampling = true;
    } else if (const auto metrics = protocol::parseMetricSet(r.metrics))
        c.evaluate.profile = *metrics;
    else
        throw Error("session.bad-recipe", {}, "metrics", "unknown metric set \"" + r.metrics + "\"");
    c.evaluate.trials = r.trials;
    if (!(r.timingInterval > 0.0 && r.timingInterval <= 0.1))
        throw Error("session.bad-recipe", {}, "timing-interval",
            "the timing interval must be a fraction in (0, 0.1], e.g. 0.005 for +-0.5%");
    c.evaluate.intervalHalfWidth = r.timingInterval;
    if (r.profileCandidates == "promising")
        c.profileWithin = 0.05; // far above the ~0.5-1% job-to-job spread of a median
    else if (r.profileCandidates != "all")
        throw Error("session.bad-recipe", {}, "profile-candidates",
            "profile candidates \"" + r.profileCandidates + "\": all or promising");
    if (r.compileAhead < -1)
        throw Error("session.bad-recipe", {}, "compile-ahead",
            "compile ahead: a number of threads, 0 for none or -1 for the host's choice");
    c.compileAhead = r.compileAhead;
    c.evaluate.seed = r.seed;
    c.jobTimeout = std::chrono::seconds(r.jobTimeoutSeconds);
    c.useCache = !r.noCache;
    c.label = r.label;
    c.stop.maxIterations = r.budget;
    c.stop.maxWallSeconds = r.wallSeconds;
    c.stop.targetSpeedup = r.targetSpeedup;
    c.stop.patience = r.patience;
    c.stop.minGain = r.minGain;
    c.stop.maxFailedRounds = r.maxFailedRounds;
    c.candidatesPerIteration = r.candidatesPerRound;
    c.mode = r.mode;
    c.proposerDetail = r.proposer == ProposerChoice::Tuner
        ? "tuner:" + r.strategy
        : std::string(proposerChoiceName(r.proposer)) + ":" + r.llm.provider + "/" + r.llm.model;
    return c;
}

std::unique_ptr<Proposer> makeProposer(
    const SessionRecipe& r, const EndpointConfig* endpoint, std::shared_ptr<LoopEvents> events)
{
    const auto strategy = parseTunerStrategy(r.strategy);
    if (!strategy)
        throw Error("session.bad-recipe", {}, "strategy", "unknown tuner strategy \"" + r.strategy + "\"");
    const TunerOptions tc { *strategy, r.seed };
    if (r.proposer == ProposerChoice::Tuner)
        return std::make_unique<Tuner>(tc);
    if (!endpoint)
        throw Error("session.no-endpoint", {}, {}, "an LLM proposer needs an endpoint");
    auto config = *endpoint;
    if (r.llm.tokenBudget > 0)
        config.budget = std::make_shared<TokenBudget>(r.llm.tokenBudget);
    LlmProposerConfig lc;
    const auto roles = parseRoles(r.llm.roles);
    if (!roles)
        throw Error("session.bad-recipe", {}, "roles", "unknown roles \"" + r.llm.roles + "\"");
    lc.roles = *roles;
    if (r.llm.temperature >= 0.0)
        lc.temperature = r.llm.temperature;
    lc.maxTokens = r.llm.maxTokens;
    lc.maxFixAttempts = r.llm.fixAttempts;
    if (events) // the model's text goes through the session's event stream, like everything else
        lc.onText = [events](std::string_view role, int alternative, std::string_view text) {
            events->publish(ProposerText { std::string(role), alternative, std::string(text) });
        };
    auto library = r.llm.prompts.empty() ? PromptLibrary::builtIn() : PromptLibrary::withOverrides(r.llm.prompts);
    auto writer = std::make_unique<LlmProposer>(makeChatClient(config), library, lc);
    if (r.proposer == ProposerChoice::Llm)
        return writer;
    return std::make_unique<HybridProposer>(std::move(writer), std::make_unique<Tuner>(tc), r.llm.tunerRounds);
}

Problem loadRecipeProblem(const SessionRecipe& r)
{
    // A PyTorch (KernelBench) file stands for the problem imported from it, beside it.
    auto problem = std::filesystem::path(r.problem).extension() == ".py" ? problemFromPyTorchFile(r.problem).problem
                                                                         : loadProblem(r.problem);
    if (r.language == "triton" || r.language == "cuda")
        problem.preferredLanguage = r.language == "cuda" ? CandidateLanguage::Cuda : CandidateLanguage::Triton;
    else if (!r.language.empty())
        throw Error("session.bad-recipe", {}, "language", "unknown language \"" + r.language + "\": triton or cuda");
    return problem;
}

std::unique_ptr<Proposer> withStart(
    const SessionRecipe& r, const Problem& problem, std::unique_ptr<Proposer> proposer, std::vector<std::string>* notes)
{
    const bool inductor
        = r.start == "inductor" || (r.start.empty() && !problem.hasBaselineKernel() && !proposer->writesKernels());
    if (inductor) {
        auto kernel = inductorKernel(problem);
        if (notes)
            *notes = kernel.notes;
        return std::make_unique<StartingKernel>(std::move(proposer), std::move(kernel.candidate), "inductor",
            "torch.compile's kernel (Inductor, dynamic shapes) as it wrote it");
    }
    if (r.start.empty() || r.start == "kernel")
        return proposer;
    return std::make_unique<StartingKernel>(std::move(proposer), loadCandidate(r.start), "human",
        "the starting kernel " + std::filesystem::path(r.start).filename().string());
}

} // namespace kl::session
