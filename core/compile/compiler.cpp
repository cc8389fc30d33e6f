// compileCandidate: the include check, then one NVRTC program that gives the cubin, the PTX and
// the ptxas report together (NVRTC 13 keeps the PTX when compiling for a real sm_XX, so a second
// program is not needed), then the log read back into categorised diagnostics.
#include "core/compile/compiler.h"

#include "core/compile/compile_cache.h"
#include "core/compile/include_policy.h"
#include "core/compile/launch_args.h"
#include "core/compile/triton_compiler.h"
#include "core/model/launch_plan.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>

#ifndef KL_CUDA_INCLUDE_DIR
#define KL_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace kl {

namespace {

constexpr std::int64_t kMaxStaticSharedBytes = 48 * 1024; // ptxas' limit for __shared__ arrays

std::string lastComponent(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

CompilerDiagnostic error(std::string file, int line, std::string message, CompileErrorKind kind)
{
    CompilerDiagnostic d;
    d.file = std::move(file);
    d.line = line;
    d.severity = "error";
    d.message = std::move(message);
    d.kind = kind;
    return d;
}

// Options a candidate may add. Anything that adds a search path, pre-includes a file or writes one
// (e.g. --fdevice-time-trace) is refused: the include policy depends on it.
std::optional<CompilerDiagnostic> checkExtraOption(const std::string& option)
{
    static const std::regex includeLike(R"(^(-I|--include-path|-include|--pre-include|-isystem|-idirafter|-iquote))");
    if (std::regex_search(option, includeLike))
        return error({}, 0, "option " + option + " is not allowed: includes come from the problem folder only",
            CompileErrorKind::ForbiddenInclude);
    static const std::regex allowed(
        R"(^(-lineinfo|--generate-line-info|-G|--device-debug|-w|--disable-warnings|-restrict|--restrict|)"
        R"(-extra-device-vectorization|--extra-device-vectorization|)"
        R"((-|--)(use_fast_math|maxrregcount=\d+|ftz=(true|false)|prec-div=(true|false)|prec-sqrt=(true|false)|)"
        R"(fmad=(true|false)|dopt=(on|off)|std=c\+\+(17|20)|diag-suppress=[0-9,]+|diag-error=[0-9,]+|)"
        R"(ptxas-options=[-A-Za-z0-9_=,.]+)|-Xptxas=[-A-Za-z0-9_=,.]+|)"
        R"((-D|--define-macro=)[A-Za-z_][A-Za-z0-9_]*(=[-A-Za-z0-9_.+*/()<> ]*)?|(-U|--undefine-macro=)[A-Za-z_]\w*)$)");
    if (!std::regex_match(option, allowed))
        return error({}, 0, "option " + option + " is not allowed", CompileErrorKind::Other);
    return std::nullopt;
}

std::string nvrtcVersionText()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

std::string programLog(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0)
        return {};
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    log.resize(size - 1); // the terminating NUL
    return log;
}

std::string programPtx(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcGetPTXSize(program, &size) != NVRTC_SUCCESS || size <= 1)
        return {};
    std::string ptx(size, '\0');
    if (nvrtcGetPTX(program, ptx.data()) != NVRTC_SUCCESS)
        return {};
    ptx.resize(size - 1);
    return ptx;
}

std::string programCubin(nvrtcProgram program)
{
    std::size_t size = 0;
    if (nvrtcGetCUBINSize(program, &size) != NVRTC_SUCCESS || size == 0)
        return {};
    std::string cubin(size, '\0');
    if (nvrtcGetCUBIN(program, cubin.data()) != NVRTC_SUCCESS)
        return {};
    return cubin;
}

// The kernels the launches name, each once, in launch order, with the line of its first launch.
std::vector<std::pair<std::string, int>> launchedKernels(const Candidate& candidate)
{
    std::vector<std::pair<std::string, int>> kernels;
    for (const auto& l : candidate.launches)
        if (std::none_of(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == l.kernel; }))
            kernels.emplace_back(l.kernel, l.line);
    return kernels;
}

// Errors about the name expressions become one MissingKernel error per kernel, at its launch line.
void reportMissingKernels(
    std::vector<CompilerDiagnostic>& diagnostics, const Candidate& candidate, const std::string& file)
{
    static const std::regex quotedName(R"x("\s*([A-Za-z_]\w*)\s*")x");
    const auto kernels = launchedKernels(candidate);
    std::vector<CompilerDiagnostic> kept, missing;
    std::set<std::string> named;
    for (auto& d : diagnostics) {
        if (d.kind != CompileErrorKind::MissingKernel) {
            kept.push_back(std::move(d));
            continue;
        }
        std::smatch m;
        std::string kernel = std::regex_search(d.message, m, quotedName) ? m[1].str() : std::string();
        auto it = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == kernel; });
        if (it == kernels.end() && kernels.size() == 1)
            it = kernels.begin();
        if (it == kernels.end() || !named.insert(it->first).second)
            continue;
        missing.push_back(error(file, it->second,
            "launch names kernel \"" + it->first
                + "\", which the source does not define as a __global__ function (NVRTC: " + d.message + ")",
            CompileErrorKind::MissingKernel));
    }
    // A kernel may look missing only because the source around it failed to compile: then the
    // source's errors are the story.
    if (std::none_of(kept.begin(), kept.end(), [](const auto& d) { return d.severity == "error"; }))
        kept.insert(kept.end(), missing.begin(), missing.end());
    diagnostics = std::move(kept);
}

std::string summarise(const CompileResult& r, const std::string& arch)
{
    if (r.ok) {
        std::string text
            = "compiled for " + arch + " in " + std::to_string(static_cast<long>(r.compileMillis)) + " ms:";
        for (std::size_t i = 0; i < r.kernels.size(); ++i) {
            const auto& k = r.kernels[i];
            text += (i ? "; " : " ") + k.name + " " + std::to_string(k.registers) + " registers, "
                + std::to_string(k.staticSharedBytes) + " B static shared, " + std::to_string(k.stackFrameBytes)
                + " B stack, ";
            text += k.spillStoreBytes || k.spillLoadBytes ? std::to_string(k.spillStoreBytes) + "/"
                    + std::to_string(k.spillLoadBytes) + " B spilled (stores/loads)"
                                                          : std::string("no spills");
        }
        return text;
    }
    const auto first
        = std::find_if(r.diagnostics.begin(), r.diagnostics.end(), [](const auto& d) { return d.severity == "error"; });
    if (first == r.diagnostics.end())
        return std::string(compileErrorKindName(r.kind)) + " error";
    const auto errors = std::count_if(
        r.diagnostics.begin(), r.diagnostics.end(), [](const auto& d) { return d.severity == "error"; });
    std::string text = std::string(compileErrorKindName(r.kind)) + " error";
    if (!first->file.empty()) {
        text += " at " + lastComponent(first->file);
        if (first->line > 0)
            text += ":" + std::to_string(first->line) + (first->column > 0 ? ":" + std::to_string(first->column) : "");
    }
    text += ": " + first->message;
    if (errors > 1)
        text += " (and " + std::to_string(errors - 1) + " more error" + (errors > 2 ? "s)" : ")");
    return text;
}

class Compilation {
public:
    Compilation(const Candidate& candidate, const CompileOptions& options)
        : m_candidate(candidate)
        , m_options(options)
        , m_file(candidate.fileName.empty() ? "candidate.cu" : candidate.fileName)
        , m_programName(lastComponent(m_file).empty() ? "candidate.cu" : lastComponent(m_file))
    {
    }

    CompileResult run()
    {
        m_result.nvrtcVersion = nvrtcVersionText();
        if (m_candidate.source.size() > kMaxCandidateSourceBytes)
            return fail(error(m_file, 0,
                "source is " + std::to_string(m_candidate.source.size()) + " bytes; the limit is "
                    + std::to_string(kMaxCandidateSourceBytes),
                CompileErrorKind::TooLarge));
        if (m_candidate.source.find('\0') != std::string::npos)
            return fail(error(m_file, 0, "source contains a NUL byte", CompileErrorKind::Other));
        for (const auto& option : m_options.extraOptions)
            if (auto refused = checkExtraOption(option))
                return fail(*refused);
        auto includes = checkIncludes(m_candidate.source, m_programName, m_options.includeDir);
        if (includes.refusal) {
            if (includes.refusal->file == m_programName)
                includes.refusal->file = m_file;
            return fail(*includes.refusal);
        }
        return compile(includes.headers);
    }

private:
    std::vector<std::string> options() const
    {
        // --no-cache: NVRTC 12.9+ otherwise takes a cubin it compiled before from the driver's cache
        // (where a driver is installed) and skips ptxas, whose -v report is where the registers,
        // shared memory and spills come from; the static report would then read 0 registers.
        std::vector<std::string> o { "-arch=" + m_options.arch, "--ptxas-options=-v", "-default-device", "--no-cache" };
        const bool ownStd = std::any_of(m_options.extraOptions.begin(), m_options.extraOptions.end(),
            [](const auto& e) { return e.find("std=") != std::string::npos; });
        if (!ownStd)
            o.push_back("-std=c++17");
        const std::filesystem::path cuda = KL_CUDA_INCLUDE_DIR;
        o.push_back("-I" + cuda.string());
        if (std::error_code ec; std::filesystem::is_directory(cuda / "cccl", ec)) // libcu++, CUB (CUDA 13)
            o.push_back("-I" + (cuda / "cccl").string());
        // The candidate's compiler flags are tunables too (candidate.h): their values become options,
        // the rest macros. A lineinfo flag at 0 turns the default -lineinfo off.
        const auto flags = m_candidate.compilerOptions(m_options.tunables);
        const auto* lineInfoFlag = m_candidate.tunable("lineinfo");
        const bool lineInfoOff = lineInfoFlag && lineInfoFlag->compilerFlag
            && std::find(flags.begin(), flags.end(), "-lineinfo") == flags.end();
        if (m_options.lineInfo && !lineInfoOff)
            o.push_back("-lineinfo");
        for (const auto& d : tunableDefines(m_candidate.macros(m_options.tunables)))
            o.push_back(d);
        for (const auto& flag : flags)
            if (flag != "-lineinfo" || !m_options.lineInfo)
                o.push_back(flag);
        o.insert(o.end(), m_options.extraOptions.begin(), m_options.extraOptions.end());
        return o;
    }

    // NVRTC's output for this program: from the compile cache when it has compiled the very same
    // inputs before, else from NVRTC (then stored). Deterministic outcomes only are stored: a
    // success or a compile error, never an NVRTC failure such as running out of memory.
    std::optional<NvrtcOutput> runNvrtc(const std::vector<LocalHeader>& headers, const std::vector<std::string>& names)
    {
        NvrtcInputs inputs { m_result.nvrtcVersion, m_programName, m_candidate.source, m_result.options, {}, names };
        for (const auto& h : headers)
            inputs.headers.emplace_back(h.name, h.content);
        CompileCache& cache = compileCache();
        if (auto cached = cache.lookup(inputs, m_result.cache))
            return cached;

        std::vector<const char*> headerTexts, headerNames;
        for (const auto& h : headers) {
            headerTexts.push_back(h.content.c_str());
            headerNames.push_back(h.name.c_str());
        }
        nvrtcProgram program = nullptr;
        if (const auto rc = nvrtcCreateProgram(&program, m_candidate.source.c_str(), m_programName.c_str(),
                static_cast<int>(headers.size()), headerTexts.data(), headerNames.data());
            rc != NVRTC_SUCCESS) {
            m_createError = std::string("NVRTC: ") + nvrtcGetErrorString(rc);
            return std::nullopt;
        }
        struct Destroy {
            nvrtcProgram& p;
            ~Destroy() { nvrtcDestroyProgram(&p); }
        } destroy { program };
        for (const auto& name : names)
            nvrtcAddNameExpression(program, name.c_str());
        std::vector<const char*> argv;
        for (const auto& o : m_result.options)
            argv.push_back(o.c_str());
        NvrtcOutput out;
        const auto rc = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
        out.status = static_cast<int>(rc);
        out.log = programLog(program);
        out.ptx = programPtx(program); // present even when ptxas failed: maps its errors to lines
        if (rc == NVRTC_SUCCESS) {
            out.cubin = programCubin(program);
            for (const auto& name : names)
                if (const char* lowered = nullptr;
                    nvrtcGetLoweredName(program, name.c_str(), &lowered) == NVRTC_SUCCESS && lowered)
                    out.loweredNames[name] = lowered;
        }
        if (rc == NVRTC_SUCCESS || rc == NVRTC_ERROR_COMPILATION)
            cache.store(inputs, out);
        return out;
    }

    CompileResult compile(const std::vector<LocalHeader>& headers)
    {
        const auto kernels = launchedKernels(m_candidate);
        std::vector<std::string> names;
        for (const auto& [kernel, line] : kernels)
            names.push_back(kernel);
        m_result.options = options();
        const std::optional<NvrtcOutput> nvrtc = runNvrtc(headers, names);
        if (!nvrtc)
            return fail(error(m_file, 0, m_createError, CompileErrorKind::Other));
        const auto rc = static_cast<nvrtcResult>(nvrtc->status);
        m_result.log = nvrtc->log;
        m_result.ptx = nvrtc->ptx;
        m_result.diagnostics = parseCompilerLog(m_result.log, m_programName, 0);
        for (auto& d : m_result.diagnostics) {
            if (d.file == m_programName)
                d.file = m_file;
            if (d.ptxLine > 0)
                if (const int line = sourceLineForPtxLine(m_result.ptx, d.ptxLine, m_programName); line > 0) {
                    d.file = m_file;
                    d.line = line;
                }
        }
        reportMissingKernels(m_result.diagnostics, m_candidate, m_file);
        const auto resources = parsePtxasInfo(m_result.log);

        if (rc != NVRTC_SUCCESS) {
            explainSilentFailure(rc, resources);
            return finish(false);
        }
        m_result.cubin = nvrtc->cubin;
        for (const auto& [kernel, line] : kernels) {
            const auto lowered = nvrtc->loweredNames.find(kernel);
            if (lowered == nvrtc->loweredNames.end())
                return fail(error(
                    m_file, line, "no lowered name for kernel \"" + kernel + "\"", CompileErrorKind::MissingKernel));
            KernelResources k;
            k.loweredName = lowered->second;
            const auto found = std::find_if(
                resources.begin(), resources.end(), [&](const auto& r) { return r.loweredName == k.loweredName; });
            if (found != resources.end())
                k = *found;
            k.name = kernel;
            if (auto parameters = ptxEntryParameters(m_result.ptx, k.loweredName)) {
                k.parameters = std::move(*parameters);
                k.parametersKnown = true;
            }
            if (k.stackFrameBytes > kMaxLocalBytesPerThread)
                m_result.diagnostics.push_back(error(m_file, line,
                    "kernel " + kernel + " needs " + std::to_string(k.stackFrameBytes)
                        + " bytes of local memory per thread (stack frame); a thread may have at most "
                        + std::to_string(kMaxLocalBytesPerThread),
                    CompileErrorKind::TooManyResources));
            m_result.kernels.push_back(std::move(k));
        }
        return finish(std::none_of(m_result.diagnostics.begin(), m_result.diagnostics.end(),
            [](const auto& d) { return d.severity == "error"; }));
    }

    // NVRTC 13 drops ptxas' "uses too much shared data" line (nvcc prints it) and fails silently.
    void explainSilentFailure(nvrtcResult rc, const std::vector<KernelResources>& resources)
    {
        if (std::any_of(m_result.diagnostics.begin(), m_result.diagnostics.end(),
                [](const auto& d) { return d.severity == "error"; }))
            return;
        for (const auto& k : resources)
            if (k.staticSharedBytes > kMaxStaticSharedBytes) {
                m_result.diagnostics.push_back(error("ptxas", 0,
                    "Entry function '" + k.loweredName + "' uses too much shared data ("
                        + std::to_string(k.staticSharedBytes) + " bytes, " + std::to_string(kMaxStaticSharedBytes)
                        + " max); use dynamic shared memory above 48 KiB",
                    CompileErrorKind::TooManyResources));
                return;
            }
        m_result.diagnostics.push_back(error(m_file, 0,
            std::string("NVRTC failed without a message: ") + nvrtcGetErrorString(rc), CompileErrorKind::Other));
    }

    CompileResult fail(CompilerDiagnostic diagnostic)
    {
        m_result.diagnostics.push_back(std::move(diagnostic));
        return finish(false);
    }

    CompileResult finish(bool ok)
    {
        m_result.ok = ok;
        m_result.kind = CompileErrorKind::None;
        if (!ok) {
            m_result.cubin.clear();
            const auto first = std::find_if(m_result.diagnostics.begin(), m_result.diagnostics.end(),
                [](const auto& d) { return d.severity == "error"; });
            m_result.kind = first != m_result.diagnostics.end() ? first->kind : CompileErrorKind::Other;
        }
        m_result.compileMillis
            = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_start).count();
        m_result.summary = summarise(m_result, m_options.arch);
        return std::move(m_result);
    }

    const Candidate& m_candidate;
    const CompileOptions& m_options;
    const std::string m_file;
    const std::string m_programName;
    const std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    CompileResult m_result;
    std::string m_createError;
};

} // namespace

const KernelResources* CompileResult::kernel(const std::string& name) const
{
    for (const auto& k : kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

CompileResult compileCandidate(const Candidate& candidate, const CompileOptions& options)
{
    if (candidate.language == CandidateLanguage::Triton)
        return compileTritonCandidate(candidate, options);
    return Compilation(candidate, options).run();
}

} // namespace kl
