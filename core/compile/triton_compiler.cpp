#include "core/compile/triton_compiler.h"

#include "core/compile/compile_cache.h"
#include "core/compile/confinement.h"
#include "core/compile/launch_args.h"
#include "core/compile/python_tool.h"
#include "core/compile/warm_python_tool.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/launch_plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>

namespace kl {

namespace {

std::string lower(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

bool contains(const std::string& haystack, const char* needle) { return haystack.find(needle) != std::string::npos; }

CompileResult failed(CompileErrorKind kind, const std::string& file, int line, std::string message)
{
    CompileResult r;
    r.kind = kind;
    CompilerDiagnostic d;
    d.file = file;
    d.line = line;
    d.severity = "error";
    d.message = message;
    d.kind = kind;
    r.diagnostics.push_back(d);
    r.summary = std::string(compileErrorKindName(kind)) + " error"
        + (line > 0 ? " at " + file + ":" + std::to_string(line) : std::string()) + ": " + message;
    r.log = message;
    return r;
}

// Line `line` (1-based) of the source, trimmed; "" when there is none.
std::string sourceLineText(const std::string& source, int line)
{
    if (line <= 0)
        return {};
    std::size_t pos = 0;
    for (int n = 1; n < line; ++n) {
        pos = source.find('\n', pos);
        if (pos == std::string::npos)
            return {};
        ++pos;
    }
    const auto end = std::min(source.find('\n', pos), source.size());
    const std::string text = source.substr(pos, end - pos);
    const auto first = text.find_first_not_of(" \t");
    const auto last = text.find_last_not_of(" \t\r");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

std::string firstLines(const std::string& text, std::size_t most)
{
    std::string out;
    std::size_t lines = 0, pos = 0;
    while (pos < text.size() && lines < most) {
        const auto end = std::min(text.find('\n', pos), text.size());
        out += (out.empty() ? "" : "; ") + text.substr(pos, end - pos);
        pos = end + 1;
        ++lines;
    }
    return out;
}

} // namespace

std::string tritonTypeName(DType type)
{
    switch (type) {
    case DType::F16:
        return "fp16";
    case DType::BF16:
        return "bf16";
    case DType::F32:
        return "fp32";
    case DType::F64:
        return "fp64";
    case DType::I8:
        return "i8";
    case DType::U8:
        return "u8";
    case DType::I32:
        return "i32";
    case DType::I64:
        return "i64";
    }
    return "i32";
}

namespace {

bool isInteger(DType type)
{
    return type == DType::I8 || type == DType::U8 || type == DType::I32 || type == DType::I64;
}

// For each launch argument: a multiple of 16 at every main size? Any main size the launch cannot
// be planned at (a broken constraint) specialises nothing: the compile must not assume what it
// cannot check.
std::vector<bool> multiplesOf16AtMainSizes(
    const Problem& problem, const Candidate& candidate, const TunableValues& tunables)
{
    std::vector<bool> divisible(candidate.launches.front().args.size(), !problem.mainSizes.empty());
    try {
        for (const auto& sizes : problem.mainSizes) {
            const LaunchPlan plan = planLaunches(problem, candidate, sizes, tunables);
            const auto& args = plan.launches.front().args;
            for (std::size_t i = 0; i < divisible.size(); ++i) {
                const bool multiple = i < args.size() && args[i].kind == PlannedArg::Kind::Value
                    && std::fmod(args[i].value, 16.0) == 0.0;
                divisible[i] = divisible[i] && multiple;
            }
        }
    } catch (const Error&) {
        std::fill(divisible.begin(), divisible.end(), false);
    }
    return divisible;
}

} // namespace

std::vector<std::string> tritonSignature(
    const Problem& problem, const Candidate& candidate, const TunableValues* tunables)
{
    std::vector<std::string> signature;
    if (candidate.launches.empty())
        return signature;
    const auto& rule = candidate.launches.front();
    std::vector<bool> divisible;
    for (const auto& arg : rule.args) {
        const TensorSpec* tensor = problem.tensor(arg.expression);
        const auto scratch = std::find_if(candidate.scratch.begin(), candidate.scratch.end(),
            [&](const ScratchBuffer& s) { return s.name == arg.expression; });
        if (tensor || scratch != candidate.scratch.end()) {
            signature.push_back("*" + tritonTypeName(tensor ? tensor->dtype : scratch->dtype) + ":16");
            continue;
        }
        const ScalarSpec* scalar = problem.scalar(arg.expression);
        const DType type = scalar && !arg.typeGiven ? scalar->dtype : arg.type; // an expression: i32 unless "as TYPE"
        signature.push_back(tritonTypeName(type));
        if (!isInteger(type))
            continue;
        if (divisible.empty())
            divisible = multiplesOf16AtMainSizes(
                problem, candidate, tunables ? candidate.withOverrides(*tunables) : candidate.defaults());
        if (divisible[signature.size() - 1])
            signature.back() += ":16";
    }
    return signature;
}

std::vector<std::string> tritonDivisibleArguments(const CompileResult& compiled)
{
    std::vector<std::string> names;
    for (const auto& option : compiled.options) {
        if (option.rfind("divisible=", 0) != 0)
            continue;
        std::size_t pos = std::string("divisible=").size();
        while (pos < option.size()) {
            const auto end = std::min(option.find(',', pos), option.size());
            if (end > pos)
                names.push_back(option.substr(pos, end - pos));
            pos = end + 1;
        }
    }
    return names;
}

std::string tritonCompileRequest(const Candidate& candidate, const CompileOptions& options)
{
    const auto& rule = candidate.launches.front();
    const std::string where = "line " + std::to_string(rule.line);
    Symbols symbols;
    for (const auto& [name, value] : candidate.withOverrides(options.tunables))
        symbols[name] = static_cast<double>(value);
    nlohmann::json constexprs = nlohmann::json::object();
    for (const auto& c : rule.constexprs) {
        const double value = evaluate(c.expression, symbols, candidate.fileName, where);
        if (std::floor(value) == value && std::fabs(value) < 9.0e15)
            constexprs[c.name] = static_cast<std::int64_t>(value);
        else
            constexprs[c.name] = value;
    }
    std::string arch = options.arch; // "sm_90" → 90
    const auto digits = arch.find_first_of("0123456789");
    const int capability = digits == std::string::npos ? 90 : std::atoi(arch.c_str() + digits);
    const nlohmann::json request { { "source", candidate.source }, { "file", candidate.fileName },
        { "kernel", rule.kernel }, { "signature", options.tritonSignature }, { "constexprs", constexprs },
        { "num_warps", evaluateInteger(rule.numWarps, symbols, candidate.fileName, where) },
        { "num_stages", evaluateInteger(rule.numStages, symbols, candidate.fileName, where) },
        { "capability", capability }, { "line", rule.line } };
    return request.dump();
}

// Triton's CompilationError quotes the source ("at 14:31:", the lines, a caret) before the reason:
// only the reason says what went wrong (a quoted "dtype=" is no type error).
std::string reasonOf(const std::string& message)
{
    std::size_t reason = 0, pos = 0;
    while (pos < message.size()) {
        const auto end = std::min(message.find('\n', pos), message.size());
        const std::string line = message.substr(pos, end - pos);
        if (line.find('^') != std::string::npos && line.find_first_not_of(" \t^") == std::string::npos)
            reason = end + 1;
        pos = end + 1;
    }
    return reason < message.size() ? message.substr(reason) : std::string();
}

// The innermost reason in a traceback of nested Triton errors: the line after the last caret line
// that is not Python's own traceback text ("Shape element 0 must be a power of 2").
std::string reasonInTraceback(const std::string& traceback)
{
    std::string reason;
    bool afterCaret = false;
    std::size_t pos = 0;
    while (pos < traceback.size()) {
        const auto end = std::min(traceback.find('\n', pos), traceback.size());
        const std::string line = traceback.substr(pos, end - pos);
        pos = end + 1;
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos)
            continue;
        if (line.find('^') != std::string::npos && line.find_first_not_of(" \t^~") == std::string::npos) {
            afterCaret = true;
            continue;
        }
        if (afterCaret && line.rfind("Traceback", first) != first && line.rfind("The above exception", first) != first
            && line.rfind("File ", first) != first && line.rfind("During handling", first) != first
            && line.find("Error: at ") == std::string::npos) // the outer error's own excerpt header
            reason = line.substr(first);
        afterCaret = false;
    }
    return reason;
}

CompileErrorKind sandboxKind(const std::string& refused)
{
    if (refused == "write")
        return CompileErrorKind::SandboxWrite;
    if (refused == "read")
        return CompileErrorKind::SandboxRead;
    if (refused == "network")
        return CompileErrorKind::SandboxNetwork;
    return CompileErrorKind::SandboxProcess;
}

CompileErrorKind classifyTritonError(const std::string& exception, const std::string& message)
{
    if (exception == "MemoryError")
        return CompileErrorKind::OutOfMemory;
    const std::string m = lower(reasonOf(message));
    // Triton's blocks have power-of-two shapes (tl.arange, tl.zeros, ...): a shape is part of a
    // block's type, so a BLOCK_N of 1000 is a type error of the line that builds the block.
    if (contains(m, "power of 2") || contains(m, "power of two"))
        return CompileErrorKind::TypeMismatch;
    if (exception == "SyntaxError" || exception == "IndentationError" || exception == "TabError")
        return CompileErrorKind::Syntax;
    if (exception == "NameError" || exception == "UnboundLocalError" || contains(m, "is not defined"))
        return CompileErrorKind::UndeclaredIdentifier;
    if (exception == "OutOfResources" || contains(m, "out of resource") || contains(m, "shared memory")
        || contains(m, "too many resources") || contains(m, "registers"))
        return CompileErrorKind::TooManyResources;
    if (exception == "TypeError" || contains(exception, "TypeError"))
        return CompileErrorKind::TypeMismatch;
    if (exception == "MissingKernel")
        return CompileErrorKind::MissingKernel;
    if (exception == "NeedsTriton")
        return CompileErrorKind::NeedsTriton;
    if (exception == "NotImplementedError" || contains(m, "not supported") || contains(m, "unsupported")
        || contains(m, "not implemented"))
        return CompileErrorKind::UnsupportedArch;
    if (contains(m, "incompatible") || contains(m, "invalid operands") || contains(m, "type mismatch")
        || contains(m, "must have the same") || contains(m, "dtype") || contains(m, "cannot be cast")
        || (contains(m, "expected") && contains(m, "type")))
        return CompileErrorKind::TypeMismatch;
    if (contains(m, "invalid syntax") || contains(m, "unexpected indent"))
        return CompileErrorKind::Syntax;
    return CompileErrorKind::Other;
}

CompileResult readTritonReply(
    const std::string& replyJson, const std::string& cubin, const Candidate& candidate, const CompileOptions& options)
{
    const nlohmann::json reply = nlohmann::json::parse(replyJson, nullptr, false);
    if (reply.is_discarded() || !reply.is_object())
        return failed(CompileErrorKind::Other, candidate.fileName, 0,
            "the Triton helper's reply is not JSON: " + replyJson.substr(0, 200));
    const std::string version = reply.value("triton_version", "");
    if (!reply.value("ok", false)) {
        const std::string exception = reply.value("exception", "");
        std::string message = reply.value("message", "");
        const int line = reply.value("line", 0);
        // A CompilationError's message may quote the source and stop there; its cause is in the traceback.
        if (reasonOf(message).empty())
            if (const std::string reason = reasonInTraceback(reply.value("traceback", "")); !reason.empty())
                message += (message.empty() || message.back() == '\n' ? "" : "\n") + reason;
        std::string text = (exception.empty() ? "" : exception + ": ");
        if (const std::string reason = firstLines(reasonOf(message), 3); !reason.empty() && reason != message) {
            text += reason; // the reason first, then the offending line as the candidate has it
            if (const std::string code = sourceLineText(candidate.source, line); !code.empty())
                text += " (line " + std::to_string(line) + ": " + code + ")";
        } else {
            text += firstLines(message, 6);
        }
        const CompileErrorKind kind = exception == "SandboxViolation" ? sandboxKind(reply.value("sandbox", ""))
                                                                      : classifyTritonError(exception, message);
        CompileResult r = failed(kind, candidate.fileName, line, text);
        r.diagnostics.front().column = reply.value("column", 0);
        r.log = reply.value("traceback", message);
        r.nvrtcVersion = version.empty() ? "" : "triton " + version;
        r.compileMillis = reply.value("compile_ms", 0.0);
        return r;
    }
    CompileResult r;
    if (cubin.empty())
        return failed(CompileErrorKind::Other, candidate.fileName, 0, "the Triton helper gave no cubin");
    r.cubin = cubin;
    r.ptx = reply.value("ptx", "");
    r.log = reply.value("ptxas_log", "");
    r.nvrtcVersion = "triton " + version;
    r.compileMillis = reply.value("compile_ms", 0.0);
    r.options = { "num_warps=" + std::to_string(reply.value("num_warps", 0)),
        "num_stages=" + std::to_string(reply.value("num_stages", 0)), "target=" + reply.value("target", "") };
    // What the kernel was specialised on, as the JIT would have: the integers guarded in the kernel
    // (a launch where one is not a multiple of 16 runs the general copy), or why that was dropped.
    std::string divisible;
    const nlohmann::json specialisation = reply.value("specialisation", nlohmann::json::object());
    for (const auto& name : specialisation.value("divisible", nlohmann::json::array()))
        if (name.is_string())
            divisible += (divisible.empty() ? "" : ",") + name.get<std::string>();
    if (!divisible.empty())
        r.options.push_back("divisible=" + divisible);
    std::string dropped;
    if (const auto d = specialisation.find("dropped"); d != specialisation.end() && d->is_string())
        dropped = d->get<std::string>();
    const nlohmann::json metadata = reply.value("metadata", nlohmann::json::object());
    KernelResources k;
    k.name = candidate.launches.front().kernel;
    k.loweredName = metadata.value("name", k.name);
    k.arch = options.arch;
    // ptxas -v on Triton's PTX: registers, spills, stack, the same report as for CUDA candidates.
    for (const auto& reported : parsePtxasInfo(r.log))
        if (reported.loweredName == k.loweredName || reported.name == k.loweredName) {
            const std::string name = k.name, lowered = k.loweredName;
            k = reported;
            k.name = name;
            k.loweredName = lowered;
        }
    k.launchSharedBytes = metadata.value("shared", std::int64_t { 0 });
    for (const auto& extra : reply.value("implicit_params", nlohmann::json::array()))
        k.implicitParameters.push_back({ extra.value("name", ""), extra.value("size", std::int64_t { 0 }),
            extra.value("align", std::int64_t { 1 }) });
    if (const auto parameters = ptxEntryParameters(r.ptx, k.loweredName)) {
        k.parameters = *parameters;
        k.parametersKnown = true;
    }
    if (k.arch.empty())
        k.arch = "sm_" + std::to_string(reply.value("capability", 90));
    r.kernels.push_back(k);
    r.ok = true;
    r.summary = "compiled by Triton " + version;
    if (!divisible.empty())
        r.summary += "; specialised on " + divisible + " as multiples of 16 (checked in the kernel at each launch)";
    else if (!dropped.empty())
        r.summary += "; not specialised (the guarded compile failed: " + firstLines(dropped, 1) + ")";
    return r;
}

std::filesystem::path tritonHelperPath() { return pythonHelperPath("triton_aot.py", "KL_TRITON_HELPER"); }

namespace {

// Compiles go to a warm helper (warm_python_tool.h): one per interpreter and helper, so that a test or
// a session that points KL_PYTHON or KL_TRITON_HELPER elsewhere gets its own. KL_TRITON_WARM=0: every
// compile starts its own Python, as before (9-10 s each for a kernel written by torch.compile).
PythonToolRun tritonHelperRun(const std::filesystem::path& helper, const std::string& request,
    std::chrono::milliseconds limit, ConfinementMode mode)
{
    const std::string python = pythonExecutable();
    if (const char* warm = std::getenv("KL_TRITON_WARM"); warm && std::string_view(warm) == "0")
        return runPythonTool(python, helper, request, limit, mode);
    static std::mutex mutex;
    static std::map<std::tuple<std::string, std::string, ConfinementMode>, std::unique_ptr<WarmPythonTool>> tools;
    WarmPythonTool* tool = nullptr;
    {
        std::lock_guard lock(mutex);
        auto& slot = tools[{ python, helper.string(), mode }];
        if (!slot) // as many as compile at once: the compile-ahead threads and the session's own
            slot = std::make_unique<WarmPythonTool>(
                python, helper, int(std::clamp(std::thread::hardware_concurrency() / 2, 1u, 4u)), mode);
        tool = slot.get();
    }
    return tool->run(request, limit);
}

// The replies of compiles that succeeded, by everything the compile saw (the interpreter, the helper, the
// confinement and the request: source, signature, constexprs, options, target), for this process. Triton's
// own on-disk cache cannot serve here: each sandboxed compile gets a private, emptied cache folder, since a
// shared one would let one candidate plant entries for another's. This cache is written only by this side,
// from a compile's own reply, under that compile's own request.
std::mutex g_replyMutex;
std::map<std::string, std::pair<std::string, std::string>> g_replies; // key -> (reply.json, kernel.cubin)
constexpr std::size_t kMaxCachedReplies = 512;

std::optional<std::pair<std::string, std::string>> cachedTritonReply(const std::string& key)
{
    std::lock_guard lock(g_replyMutex);
    const auto found = g_replies.find(key);
    if (found == g_replies.end())
        return std::nullopt;
    return found->second;
}

void keepTritonReply(const std::string& key, const std::string& reply, const std::string& cubin)
{
    std::lock_guard lock(g_replyMutex);
    if (g_replies.size() >= kMaxCachedReplies)
        g_replies.erase(g_replies.begin());
    g_replies[key] = { reply, cubin };
}

// Three minutes: Triton compiles a large kernel in seconds; $KL_TRITON_COMPILE_LIMIT_S changes it.
std::chrono::milliseconds compileLimit()
{
    if (const char* text = std::getenv("KL_TRITON_COMPILE_LIMIT_S"); text && std::atof(text) > 0)
        return std::chrono::milliseconds(static_cast<long long>(std::atof(text) * 1000));
    return std::chrono::minutes(3);
}

std::string limitText(std::chrono::milliseconds limit)
{
    const double seconds = double(limit.count()) / 1000.0;
    return seconds >= 60 && limit.count() % 60000 == 0 ? std::to_string(limit.count() / 60000) + " min"
                                                       : std::to_string(int(seconds + 0.5)) + " s";
}

} // namespace

CompileResult compileTritonCandidate(const Candidate& candidate, const CompileOptions& options)
{
    if (candidate.launches.empty())
        return failed(CompileErrorKind::MissingKernel, candidate.fileName, 0, "the candidate launches no kernel");
    if (options.tritonSignature.size() != candidate.launches.front().args.size())
        return failed(CompileErrorKind::Other, candidate.fileName, candidate.launches.front().line,
            "no Triton signature for this launch (compile it with its problem: tritonSignature())");
    std::string request;
    try {
        request = tritonCompileRequest(candidate, options);
    } catch (const Error& e) {
        return failed(CompileErrorKind::Other, candidate.fileName, candidate.launches.front().line, e.message());
    }
    const auto helper = tritonHelperPath();
    if (!std::filesystem::is_regular_file(helper))
        return failed(
            CompileErrorKind::MissingHelper, candidate.fileName, 0, missingHelperMessage(helper, "KL_TRITON_HELPER"));
    // The module is executed to compile it: model-written Python, so it runs in the sandbox, or not at all
    // unless the engineer opted in (docs/llm.md, "What runs where").
    const ConfinementPolicy policy = modelCodePolicy();
    if (policy.mode == ConfinementMode::Refused && !interpreterImports(pythonExecutable(), "triton"))
        return failed(CompileErrorKind::NeedsTriton, candidate.fileName, 0,
            "needs Triton: " + pythonExecutable() + " cannot import it (set KL_PYTHON to a Python with Triton)");
    if (policy.mode == ConfinementMode::Refused)
        return failed(CompileErrorKind::SandboxUnavailable, candidate.fileName, 0,
            "a Triton candidate's module is Python that runs to compile it, and it runs only in a sandbox: "
                + policy.detail
                + ". Install bubblewrap (Debian/Ubuntu: apt install bubblewrap), or accept the risk with "
                  "--allow-unconfined-python (GUI: Session > Run Model-Written Python Unconfined)");
    const auto cacheKey
        = pythonExecutable() + '\n' + helper.string() + '\n' + std::to_string(int(policy.mode)) + '\n' + request;
    if (const auto hit = cachedTritonReply(cacheKey)) {
        CompileResult r = readTritonReply(hit->first, hit->second, candidate, options);
        r.cache = CacheUse::MemoryHit;
        return r;
    }
    const auto limit = compileLimit();
    const PythonToolRun run = tritonHelperRun(helper, request, limit, policy.mode);
    if (!run.started)
        return failed(CompileErrorKind::NeedsTriton, candidate.fileName, 0,
            "needs Triton: " + run.stderrText + " (set KL_PYTHON to a Python with Triton)");
    if (run.timedOut)
        return failed(CompileErrorKind::TimedOut, candidate.fileName, 0,
            "the Triton compile ran past its " + limitText(limit) + " limit and was killed");
    if (run.strays > 0)
        return failed(CompileErrorKind::SandboxProcess, candidate.fileName, 0,
            "the candidate left " + std::to_string(run.strays) + " process" + (run.strays == 1 ? "" : "es")
                + " running after its compile (killed)");
    if (run.reply.empty())
        return failed(CompileErrorKind::Other, candidate.fileName, 0,
            "the Triton helper ended (status " + std::to_string(run.exitStatus)
                + ") without a reply: " + firstLines(run.stderrText, 8));
    const auto cubin = run.files.find("kernel.cubin");
    CompileResult r
        = readTritonReply(run.reply, cubin == run.files.end() ? std::string() : cubin->second, candidate, options);
    if (r.compileMillis <= 0.0)
        r.compileMillis = run.millis;
    r.cache = CacheUse::Miss;
    if (r.ok)
        keepTritonReply(cacheKey, run.reply, cubin->second);
    return r;
}

} // namespace kl
