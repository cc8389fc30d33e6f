#include "core/llm/llm_proposer.h"

#include "core/llm/alternatives.h"
#include "core/llm/reply_parser.h"
#include "core/llm/retry_policy.h"
#include "core/model/hash.h"

#include <algorithm>

namespace kl {

std::optional<LlmProposerConfig::Roles> parseRoles(std::string_view name)
{
    if (name == "planner-coder")
        return LlmProposerConfig::Roles::PlannerCoder;
    if (name == "single")
        return LlmProposerConfig::Roles::Single;
    return std::nullopt;
}

struct LlmProposer::Attempt {
    std::vector<Exchange> exchanges;
    std::vector<std::pair<std::size_t, std::size_t>> choices; // (exchange, choice)
};

namespace {

std::string hypothesisText(const Hypothesis& h)
{
    std::string text = h.plan;
    if (!h.prediction.empty())
        text += (text.empty() ? "" : "\n") + std::string("Predicted effect: ") + h.prediction;
    return text;
}

bool isServerTrouble(ExchangeCategory c) { return c == ExchangeCategory::Http429 || c == ExchangeCategory::Http5xx; }

Proposal failed(std::string category, std::string detail, std::string hypothesis = {})
{
    Proposal p;
    p.proposer = "llm";
    p.failure = std::move(category);
    p.failureDetail = std::move(detail);
    p.hypothesis = std::move(hypothesis);
    return p;
}

} // namespace

LlmProposer::LlmProposer(std::shared_ptr<ChatClient> client, PromptLibrary prompts, LlmProposerConfig config)
    : m_client(std::move(client))
    , m_prompts(std::move(prompts))
    , m_config(std::move(config))
{
}

LlmProposer::Attempt LlmProposer::ask(
    PromptRole role, const PromptPayload& payload, int count, const std::atomic<bool>* cancel)
{
    if (m_waitBeforeNext.count() > 0) {
        const auto wait = m_waitBeforeNext;
        m_waitBeforeNext = std::chrono::milliseconds(0);
        if (!waitUnlessCancelled(wait, cancel)) {
            Exchange cancelled;
            cancelled.category = ExchangeCategory::Cancelled;
            cancelled.message = "cancelled while waiting after a server failure";
            return { { cancelled }, {} };
        }
    }
    const auto prompt = m_prompts.render(role, payload);
    ChatRequest request;
    request.system = prompt.system;
    request.messages.push_back({ "user", prompt.user });
    request.temperature = m_config.temperature;
    request.maxTokens = m_config.maxTokens;
    SendControl control;
    control.cancel = cancel;
    if (m_config.onText) {
        const auto roleName = promptRoleName(role);
        control.onText = [this, roleName](
                             int alternative, std::string_view text) { m_config.onText(roleName, alternative, text); };
    }
    auto sent = sendAlternatives(*m_client, request, count, control);
    std::optional<std::int64_t> retryAfter;
    bool serverTrouble = false;
    for (const auto& e : sent.exchanges) {
        m_tokens += e.usage.total();
        if (isServerTrouble(e.category)) {
            serverTrouble = true;
            if (e.retryAfterMs)
                retryAfter = std::max(retryAfter.value_or(0), *e.retryAfterMs);
        }
    }
    if (serverTrouble) {
        ++m_serverFailures;
        const auto& retry = m_client->endpoint().retry;
        m_waitBeforeNext
            = retry
                  .waitBefore(m_serverFailures + 1,
                      retryAfter ? std::optional(std::chrono::milliseconds(*retryAfter)) : std::nullopt, m_random)
                  .delay;
    } else if (std::any_of(sent.exchanges.begin(), sent.exchanges.end(), [](const Exchange& e) { return e.ok(); })) {
        m_serverFailures = 0;
    }
    return { std::move(sent.exchanges), std::move(sent.choices) };
}

Proposal LlmProposer::endpointFailure(const Exchange& e, PromptRole role, const std::string& plan)
{
    m_exhausted = m_exhausted || e.category == ExchangeCategory::BudgetExhausted; // nothing more can be asked
    std::string detail = std::string(promptRoleName(role)) + ": " + e.message;
    if (isServerTrouble(e.category) && m_waitBeforeNext.count() > 0)
        detail += "; the next request waits " + std::to_string(m_waitBeforeNext.count()) + " ms";
    return failed(std::string(exchangeCategoryName(e.category)), std::move(detail), plan);
}

const EvaluatedProposal* LlmProposer::failureToFix(const ProposalContext& context) const
{
    // Only the previous round counts: if any of its candidates passed, plan afresh from the best.
    const auto& h = context.history;
    const std::size_t last = std::min(h.size(), m_lastCount);
    const EvaluatedProposal* candidate = nullptr;
    for (std::size_t i = h.size() - last; i < h.size(); ++i) {
        const auto& it = h[i];
        if (it.category == "passed")
            return nullptr;
        const auto depth = m_fixDepth.find(it.sourceHash);
        if (candidate == nullptr && it.proposer == "llm" && isFixableFailure(it) && m_proposed.count(it.sourceHash) != 0
            && m_fixed.count(it.sourceHash) == 0
            && (depth == m_fixDepth.end() ? 0 : depth->second) < m_config.maxFixAttempts)
            candidate = &it;
    }
    return candidate;
}

std::vector<Proposal> LlmProposer::propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    if (m_exhausted || context.problem == nullptr)
        return {};
    count = std::max(1, count);
    auto payload = payloadFor(context, m_config.limits);
    std::vector<Proposal> out;

    if (const auto* toFix = failureToFix(context); toFix && m_config.maxFixAttempts > 0) {
        const auto& broken = m_proposed.at(toFix->sourceHash);
        m_fixed.insert(toFix->sourceHash);
        payload.failure = FailureFacts { toFix->category, toFix->detail, broken.source };
        const int depth = m_fixDepth.count(toFix->sourceHash) ? m_fixDepth.at(toFix->sourceHash) : 0;
        out = candidatesFrom(
            ask(PromptRole::Debugger, payload, count, cancel), PromptRole::Debugger, context, broken, {}, {});
        for (const auto& p : out)
            if (p.failure.empty())
                m_fixDepth[contentHash(p.candidate.source)] = depth + 1;
    } else if (context.best.source.empty()) { // no kernel yet: the first one, from the specification
        out = candidatesFrom(ask(PromptRole::FirstKernel, payload, count, cancel), PromptRole::FirstKernel, context,
            context.best, {}, {});
    } else if (m_config.roles == LlmProposerConfig::Roles::Single) {
        out = candidatesFrom(
            ask(PromptRole::Single, payload, count, cancel), PromptRole::Single, context, context.best, {}, {});
    } else {
        auto plan = ask(PromptRole::Planner, payload, 1, cancel);
        const auto& exchange = plan.exchanges.front();
        std::vector<RoleExchange> planExchange { { PromptRole::Planner, exchange } };
        if (exchange.category == ExchangeCategory::Cancelled)
            return {};
        if (!exchange.ok()) {
            auto p = endpointFailure(exchange, PromptRole::Planner, {});
            p.exchanges = std::move(planExchange);
            out.push_back(std::move(p));
        } else if (exchange.choices.empty()) {
            auto p = failed("no-plan", "planner: the reply had no content");
            p.exchanges = std::move(planExchange);
            out.push_back(std::move(p));
        } else {
            const auto& choice = exchange.choices.front();
            const auto parsed = parsePlanReply(choice.text, choice.finishReason);
            if (!parsed.ok()) {
                auto p = failed(std::string(replyCategoryName(parsed.category)), "planner: " + parsed.message);
                p.exchanges = std::move(planExchange);
                out.push_back(std::move(p));
            } else {
                payload.plan = hypothesisText(parsed.hypothesis);
                out = candidatesFrom(ask(PromptRole::Coder, payload, count, cancel), PromptRole::Coder, context,
                    context.best, parsed.hypothesis, std::move(planExchange));
            }
        }
    }
    m_lastCount = out.size();
    return out;
}

std::vector<Proposal> LlmProposer::candidatesFrom(Attempt attempt, PromptRole role, const ProposalContext& context,
    const Candidate& current, std::optional<Hypothesis> plan, std::vector<RoleExchange> leading)
{
    auto expectations = ReplyExpectations::forProblem(*context.problem, &current);
    if (plan)
        expectations.plan = plan->plan;
    std::vector<Proposal> out;
    // The exchanges go with the first proposal that came from them, so each is stored once.
    std::vector<bool> taken(attempt.exchanges.size(), false);
    auto takeExchanges = [&](std::size_t exchange, std::vector<RoleExchange>& into) {
        if (!leading.empty()) {
            into = std::move(leading);
            leading.clear();
        }
        if (!taken[exchange])
            into.push_back({ role, attempt.exchanges[exchange] });
        taken[exchange] = true;
    };
    for (std::size_t i = 0; i < attempt.exchanges.size(); ++i) {
        const auto& e = attempt.exchanges[i];
        if (e.category == ExchangeCategory::Cancelled)
            return {};
        if (e.ok())
            continue;
        auto p = endpointFailure(e, role, plan ? plan->plan : std::string());
        takeExchanges(i, p.exchanges);
        out.push_back(std::move(p));
    }
    int index = 0;
    for (const auto& [e, c] : attempt.choices) {
        if (!attempt.exchanges[e].ok())
            continue;
        const auto& choice = attempt.exchanges[e].choices[c];
        const auto parsed = parseCandidateReply(choice.text, choice.finishReason, expectations);
        // The planner's hypothesis is what the measurement is held against (the hypothesis log);
        // a debugger's or a single-role reply brings its own.
        const Hypothesis h = plan ? *plan : parsed.hypothesis;
        Proposal p;
        p.proposer = "llm";
        p.hypothesis = hypothesisText(h);
        p.predictedSpeedup = h.predictedSpeedup;
        if (!parsed.ok()) {
            p.failure = std::string(replyCategoryName(parsed.category));
            p.failureDetail = std::string(promptRoleName(role)) + ": " + parsed.message;
            p.candidate.source = parsed.code;
        } else {
            p.candidate = *parsed.candidate;
            p.candidate.fileName
                = "llm-" + std::to_string(context.iteration) + (index > 0 ? "-" + std::to_string(index) : "") + ".cu";
            p.tunables = p.candidate.defaults();
            m_proposed[contentHash(p.candidate.source)] = p.candidate;
        }
        ++index;
        takeExchanges(e, p.exchanges);
        out.push_back(std::move(p));
    }
    // A request that came back without any choice at all still leaves a trace.
    for (std::size_t i = 0; i < attempt.exchanges.size(); ++i)
        if (attempt.exchanges[i].ok() && attempt.exchanges[i].choices.empty()) {
            auto p = failed("no-code", std::string(promptRoleName(role)) + ": the reply had no content");
            takeExchanges(i, p.exchanges);
            out.push_back(std::move(p));
        }
    return out;
}

} // namespace kl
