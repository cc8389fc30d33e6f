#include "core/llm/reply_parser.h"

#include "core/llm/reply_kernels.h"
#include "core/model/error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace kl {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

std::string trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

std::vector<std::string_view> lines(std::string_view text)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        auto line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        out.push_back(line);
        start = end + 1;
    }
    return out;
}

// ---- Markdown code blocks ----

struct CodeBlock {
    std::string language; // the info string's first word, lower case
    std::string text;
    bool closed = false;
};

struct Scanned {
    std::vector<CodeBlock> blocks;
    std::vector<std::string_view> prose; // lines outside code blocks
    std::string proseBeforeFirstBlock;
};

Scanned scan(std::string_view reply)
{
    Scanned s;
    CodeBlock* open = nullptr;
    char fenceChar = 0;
    std::size_t fenceLength = 0;
    bool sawBlock = false;
    for (auto line : lines(reply)) {
        std::size_t indent = 0;
        while (indent < line.size() && indent < 3 && line[indent] == ' ')
            ++indent;
        const auto body = line.substr(indent);
        const char c = body.empty() ? 0 : body.front();
        std::size_t run = 0;
        if (c == '`' || c == '~')
            while (run < body.size() && body[run] == c)
                ++run;
        if (open) {
            if (run >= 3 && c == fenceChar && run >= fenceLength && trim(body.substr(run)).empty()) {
                open->closed = true;
                open = nullptr;
            } else {
                open->text.append(line).push_back('\n');
            }
            continue;
        }
        if (run >= 3) {
            CodeBlock block;
            const auto info = trim(body.substr(run));
            block.language = lower(info.substr(0, info.find_first_of(" \t{")));
            s.blocks.push_back(std::move(block));
            open = &s.blocks.back();
            fenceChar = c;
            fenceLength = run;
            sawBlock = true;
            continue;
        }
        s.prose.push_back(line);
        if (!sawBlock)
            s.proseBeforeFirstBlock.append(line).push_back('\n');
    }
    return s;
}

bool isCudaLanguage(const std::string& language)
{
    static const std::array<const char*, 9> names { "cuda", "cu", "cpp", "c++", "cxx", "cc", "c", "cuh", "hpp" };
    return std::find_if(names.begin(), names.end(), [&](const char* n) { return language == n; }) != names.end();
}

bool isPythonLanguage(const std::string& language)
{
    return language == "python" || language == "py" || language == "python3" || language == "triton";
}

// A block in the problem's language: a Triton reply's ```cuda block is somebody else's kernel.
bool mayBeCandidate(const CodeBlock& b, CandidateLanguage language)
{
    if (language == CandidateLanguage::Triton) {
        if (b.text.find("@triton.jit") != std::string::npos || b.text.find("@kl") != std::string::npos)
            return b.language.empty() || isPythonLanguage(b.language);
        return false;
    }
    if (b.text.find("__global__") != std::string::npos || b.text.find("@kl") != std::string::npos)
        return b.language.empty() || isCudaLanguage(b.language);
    return false;
}

// ---- Plan and prediction ----

std::optional<std::string> taggedBlock(std::string_view reply, const std::string& tag)
{
    const auto text = lower(reply);
    const auto open = text.find("<" + tag + ">");
    if (open == std::string::npos)
        return std::nullopt;
    const auto begin = open + tag.size() + 2;
    const auto close = text.find("</" + tag + ">", begin);
    return trim(reply.substr(begin, close == std::string::npos ? std::string_view::npos : close - begin));
}

enum class Heading { None, Plan, Prediction, Other };

// "## Plan", "**Hypothesis:**", "### Predicted effect"
Heading headingKind(std::string_view line, std::string& rest)
{
    auto t = trim(line);
    bool heading = false;
    if (!t.empty() && t.front() == '#') {
        heading = true;
        t = trim(std::string_view(t).substr(t.find_first_not_of('#')));
    } else if (t.rfind("**", 0) == 0 && t.find("**", 2) != std::string::npos) {
        const auto end = t.find("**", 2);
        rest = trim(std::string_view(t).substr(end + 2));
        if (!rest.empty() && rest.front() == ':')
            rest = trim(std::string_view(rest).substr(1));
        t = t.substr(2, end - 2);
        heading = true;
    }
    if (!heading)
        return Heading::None;
    const auto title = lower(t);
    if (title.rfind("plan", 0) == 0 || title.rfind("hypothesis", 0) == 0 || title.rfind("approach", 0) == 0)
        return Heading::Plan;
    if (title.rfind("predict", 0) == 0 || title.rfind("expected", 0) == 0)
        return Heading::Prediction;
    return Heading::Other;
}

std::optional<double> speedupIn(const std::string& text)
{
    static const std::regex times(R"((\d+(?:\.\d+)?)\s*(?:x|X|\xC3\x97)(?![A-Za-z0-9]))");
    static const std::regex speedup(R"(speed-?up[^0-9\n]{0,24}(\d+(?:\.\d+)?))", std::regex::icase);
    static const std::regex range(
        R"((\d+(?:\.\d+)?)\s*(?:us|\xC2\xB5s|\xCE\xBCs)\s*(?:->|\xE2\x86\x92|to)\s*(?:~\s*)?(\d+(?:\.\d+)?)\s*(?:us|\xC2\xB5s|\xCE\xBCs))",
        std::regex::icase);
    std::smatch m;
    if (std::regex_search(text, m, times) || std::regex_search(text, m, speedup)) {
        const double value = std::stod(m[1]);
        if (value > 0.0 && value < 1000.0)
            return value;
    }
    if (std::regex_search(text, m, range)) {
        const double from = std::stod(m[1]), to = std::stod(m[2]);
        if (from > 0.0 && to > 0.0)
            return from / to;
    }
    return std::nullopt;
}

bool looksLikeRefusal(std::string_view text)
{
    static const std::regex refusal(
        R"(\b(i('| a)m sorry,? but|i can('|no)t (help|assist|comply|provide|do that|write)|i('| a)m (unable|not able) to (help|assist|comply|provide|write)|i won't (be able to )?(help|provide|write)|i must decline))",
        std::regex::icase);
    const std::string head(text.substr(0, 1000));
    return std::regex_search(head, refusal);
}

std::vector<std::string> bufferArgs(const LaunchRule& launch, const std::set<std::string>& buffers)
{
    std::vector<std::string> out;
    for (const auto& arg : launch.args)
        if (buffers.count(arg.expression))
            out.push_back(arg.expression);
    return out;
}

std::string listText(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

ParsedReply fail(ParsedReply reply, ReplyCategory category, std::string message)
{
    reply.category = category;
    reply.message = std::move(message);
    reply.candidate.reset();
    return reply;
}

// Entry points and signatures of an otherwise valid candidate.
ParsedReply checkInterface(ParsedReply reply, const ReplyExpectations& expect)
{
    const Candidate& c = *reply.candidate;
    const bool triton = c.language == CandidateLanguage::Triton;
    const auto kernels = reply::kernelsIn(c.source, c.language);
    std::vector<std::string> defined;
    for (const auto& [name, signature] : kernels)
        defined.push_back(name);
    for (const auto& launch : c.launches)
        if (!kernels.count(launch.kernel))
            return fail(std::move(reply), ReplyCategory::WrongEntryPoint,
                "line " + std::to_string(launch.line) + " launches " + launch.kernel
                    + (triton ? ", but the source defines no @triton.jit function of that name"
                              : ", but the source defines no __global__ function of that name")
                    + (defined.empty() ? std::string() : " (it defines " + listText(defined) + ")"));

    // The candidate's launch lines are the contract: any kernel they name that the source defines
    // is fine, so a model may rename its kernel. A renamed launch is held to the buffers of the
    // launch it replaces (the only one before, when there was exactly one).
    std::map<std::string, const LaunchRule*> beforeLaunch;
    if (expect.current)
        for (const auto& launch : expect.current->launches)
            beforeLaunch.emplace(launch.kernel, &launch);
    const LaunchRule* onlyBefore
        = expect.current && expect.current->launches.size() == 1 ? &expect.current->launches.front() : nullptr;
    const bool onlyNow = c.launches.size() == 1;

    for (const auto& launch : c.launches) {
        auto parameters = kernels.at(launch.kernel).parameters;
        if (triton) {
            // The launch's NAME=EXPR values fill the kernel's tl.constexpr parameters by name; the
            // other parameters take the positional args in order.
            std::vector<std::string> positional;
            std::set<std::string> constexprNames;
            for (const auto& p : parameters)
                if (reply::isConstexprParameter(p))
                    constexprNames.insert(reply::parameterName(p));
                else
                    positional.push_back(p);
            for (const auto& value : launch.constexprs)
                if (!constexprNames.count(value.name))
                    return fail(std::move(reply), ReplyCategory::ChangedSignature,
                        "the launch (line " + std::to_string(launch.line) + ") sets " + value.name + "=, but "
                            + launch.kernel + " has no parameter \"" + value.name + ": tl.constexpr\"");
            parameters = positional;
        }
        if (parameters.size() != launch.args.size())
            return fail(std::move(reply), ReplyCategory::ChangedSignature,
                "kernel " + launch.kernel + " takes " + std::to_string(parameters.size())
                    + " parameters, but its launch (line " + std::to_string(launch.line) + ") passes "
                    + std::to_string(launch.args.size()) + " arguments");
        for (std::size_t i = 0; i < parameters.size(); ++i) {
            const auto& arg = launch.args[i].expression;
            if (triton)
                continue; // Python parameters carry no pointer types
            if (expect.buffers.count(arg) && !reply::isPointerParameter(parameters[i]))
                return fail(std::move(reply), ReplyCategory::ChangedSignature,
                    "argument " + std::to_string(i + 1) + " of " + launch.kernel + " is the buffer " + arg
                        + ", but parameter \"" + parameters[i] + "\" is not a pointer");
            if (expect.scalars.count(arg) && reply::isPointerParameter(parameters[i]))
                return fail(std::move(reply), ReplyCategory::ChangedSignature,
                    "argument " + std::to_string(i + 1) + " of " + launch.kernel + " is the scalar " + arg
                        + ", passed by value, but parameter \"" + parameters[i] + "\" is a pointer");
        }
        const auto it = beforeLaunch.find(launch.kernel);
        const LaunchRule* replaced = it != beforeLaunch.end() ? it->second : (onlyNow ? onlyBefore : nullptr);
        if (replaced) {
            const auto was = bufferArgs(*replaced, expect.buffers);
            const auto now = bufferArgs(launch, expect.buffers);
            if (was != now)
                return fail(std::move(reply), ReplyCategory::ChangedSignature,
                    "the buffers passed to " + launch.kernel + " changed from (" + listText(was) + ") to ("
                        + listText(now) + "); keep the problem's buffers in the same order");
        }
    }
    if (expect.current) {
        std::set<std::string> usedBefore, usedNow;
        for (const auto& launch : expect.current->launches)
            for (const auto& b : bufferArgs(launch, expect.buffers))
                usedBefore.insert(b);
        for (const auto& launch : c.launches)
            for (const auto& b : bufferArgs(launch, expect.buffers))
                usedNow.insert(b);
        for (const auto& b : usedBefore)
            if (!usedNow.count(b))
                return fail(std::move(reply), ReplyCategory::ChangedSignature,
                    "no launch passes the buffer " + b + " any more");
    }
    return reply;
}

} // namespace

std::string_view replyCategoryName(ReplyCategory category)
{
    switch (category) {
    case ReplyCategory::Ok:
        return "ok";
    case ReplyCategory::NoCode:
        return "no-code";
    case ReplyCategory::SeveralCandidates:
        return "several-candidates";
    case ReplyCategory::WrongEntryPoint:
        return "wrong-entry-point";
    case ReplyCategory::ChangedSignature:
        return "changed-signature";
    case ReplyCategory::Truncated:
        return "truncated";
    case ReplyCategory::Refusal:
        return "refusal";
    case ReplyCategory::Oversized:
        return "oversized";
    case ReplyCategory::InvalidDeclarations:
        return "invalid-declarations";
    case ReplyCategory::NoPlan:
        return "no-plan";
    }
    return "unknown";
}

ReplyExpectations ReplyExpectations::forProblem(const Problem& problem, const Candidate* current)
{
    ReplyExpectations e;
    e.current = current;
    e.language = problem.language();
    for (const auto& t : problem.inputs)
        e.buffers.insert(t.name);
    for (const auto& t : problem.outputs)
        e.buffers.insert(t.name);
    for (const auto& s : problem.scalars)
        e.scalars.insert(s.name);
    return e;
}

Hypothesis parseHypothesis(std::string_view reply)
{
    Hypothesis h;
    if (auto plan = taggedBlock(reply, "plan"))
        h.plan = *plan;
    if (auto prediction = taggedBlock(reply, "prediction"))
        h.prediction = *prediction;
    const auto scanned = scan(reply);
    if (h.plan.empty() || h.prediction.empty()) {
        std::string plan, prediction;
        Heading current = Heading::None;
        static const std::regex planLine(R"(^\s*(?:plan|hypothesis)\s*:\s*(.+)$)", std::regex::icase);
        static const std::regex predictionLine(
            R"(^\s*(?:predicted effect|prediction|expected (?:effect|speedup))\s*:\s*(.+)$)", std::regex::icase);
        for (auto line : scanned.prose) {
            std::string rest;
            const auto kind = headingKind(line, rest);
            const std::string text(line);
            std::smatch m;
            if (kind != Heading::None) {
                current = kind;
                if (!rest.empty())
                    (current == Heading::Plan ? plan : prediction) += rest + "\n";
                continue;
            }
            if (std::regex_match(text, m, predictionLine)) {
                prediction += m[1].str() + "\n";
                current = Heading::Prediction;
                continue;
            }
            if (std::regex_match(text, m, planLine)) {
                plan += m[1].str() + "\n";
                current = Heading::Plan;
                continue;
            }
            if (current == Heading::Plan)
                plan += text + "\n";
            else if (current == Heading::Prediction)
                prediction += text + "\n";
        }
        if (h.plan.empty())
            h.plan = trim(plan);
        if (h.prediction.empty())
            h.prediction = trim(prediction);
    }
    if (h.plan.empty())
        h.plan = trim(scanned.proseBeforeFirstBlock).substr(0, 4000);
    h.predictedSpeedup = speedupIn(h.prediction);
    return h;
}

ParsedReply parseCandidateReply(std::string_view text, std::string_view finishReason, const ReplyExpectations& expect)
{
    ParsedReply reply;
    if (text.size() > expect.maxReplyBytes)
        return fail(std::move(reply), ReplyCategory::Oversized,
            "the reply is " + std::to_string(text.size()) + " bytes; replies over "
                + std::to_string(expect.maxReplyBytes) + " bytes are not read");
    reply.hypothesis = parseHypothesis(text);
    if (finishReason == "refusal" || finishReason == "content_filter")
        return fail(std::move(reply), ReplyCategory::Refusal,
            "the model declined (finish reason " + std::string(finishReason) + ")");
    const auto scanned = scan(text);
    for (const auto& block : scanned.blocks)
        if (!block.closed)
            return fail(std::move(reply), ReplyCategory::Truncated,
                "the reply ends inside a code block: it was cut off"
                    + std::string(finishReason == "length" ? " at the token limit" : ""));

    std::vector<const CodeBlock*> withLaunch, withKernel;
    for (const auto& block : scanned.blocks) {
        if (!mayBeCandidate(block, expect.language))
            continue;
        if (block.text.find("@kl launch") != std::string::npos)
            withLaunch.push_back(&block);
        withKernel.push_back(&block);
    }
    // A block with a launch line is the candidate; other kernel snippets (the old code quoted,
    // a fragment explained) are prose. Without launch lines, any kernel block is a candidate.
    const auto& candidates = !withLaunch.empty() ? withLaunch : withKernel;
    if (candidates.empty()) {
        if (finishReason == "length")
            return fail(
                std::move(reply), ReplyCategory::Truncated, "the reply was cut off at the token limit before any code");
        if (looksLikeRefusal(text))
            return fail(std::move(reply), ReplyCategory::Refusal, "the model declined to write the kernel");
        return fail(std::move(reply), ReplyCategory::NoCode,
            expect.language == CandidateLanguage::Triton
                ? "the reply has no ```python block with a @triton.jit kernel and its # @kl launch line"
                : "the reply has no ```cuda block with a kernel and its // @kl launch line");
    }
    if (candidates.size() > 1)
        return fail(std::move(reply), ReplyCategory::SeveralCandidates,
            "the reply has " + std::to_string(candidates.size())
                + " code blocks that could be the candidate; give exactly one");
    reply.code = candidates.front()->text;
    if (reply.code.size() > kMaxCandidateSourceBytes)
        return fail(std::move(reply), ReplyCategory::Oversized,
            "the candidate is " + std::to_string(reply.code.size()) + " bytes; the limit is "
                + std::to_string(kMaxCandidateSourceBytes));
    try {
        reply.candidate = parseCandidate(
            reply.code, expect.language == CandidateLanguage::Triton ? "candidate.py" : "candidate.cu");
    } catch (const Error& e) {
        if (e.category() == "candidate.too-large")
            return fail(std::move(reply), ReplyCategory::Oversized, e.message());
        return fail(std::move(reply), ReplyCategory::InvalidDeclarations,
            e.category() + (e.where().empty() ? "" : " at " + e.where()) + ": " + e.message());
    }
    return checkInterface(std::move(reply), expect);
}

ParsedReply parsePlanReply(std::string_view text, std::string_view finishReason, std::size_t maxReplyBytes)
{
    ParsedReply reply;
    if (text.size() > maxReplyBytes)
        return fail(std::move(reply), ReplyCategory::Oversized,
            "the reply is " + std::to_string(text.size()) + " bytes; replies over " + std::to_string(maxReplyBytes)
                + " bytes are not read");
    if (finishReason == "refusal" || finishReason == "content_filter")
        return fail(std::move(reply), ReplyCategory::Refusal,
            "the model declined (finish reason " + std::string(finishReason) + ")");
    reply.hypothesis = parseHypothesis(text);
    if (finishReason == "length")
        return fail(std::move(reply), ReplyCategory::Truncated, "the plan was cut off at the token limit");
    if (reply.hypothesis.plan.empty()) {
        if (looksLikeRefusal(text))
            return fail(std::move(reply), ReplyCategory::Refusal, "the model declined to plan");
        return fail(std::move(reply), ReplyCategory::NoPlan, "the reply has no plan (a \"## Plan\" section)");
    }
    if (looksLikeRefusal(reply.hypothesis.plan) && reply.hypothesis.prediction.empty())
        return fail(std::move(reply), ReplyCategory::Refusal, "the model declined to plan");
    return reply;
}

} // namespace kl
