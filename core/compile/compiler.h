#pragma once
// Offline compilation of a candidate with NVRTC (no GPU, no driver) and what the compiler says
// about it. The static report is telemetry: registers, shared memory, stack, spills, barriers.
#include "core/compile/compile_cache.h"
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl {

enum class CompileErrorKind {
    None,
    Syntax, // expected a ';', unexpected token, ...
    UndeclaredIdentifier,
    TypeMismatch, // no conversion, no matching overload, incompatible types
    TooManyResources, // ptxas: too much shared data, too many registers / entry function uses too much
    UnsupportedArch, // a feature or instruction not available on the target
    ForbiddenInclude, // absolute path, "..", a file outside the problem folder
    TooLarge, // source over the size limit
    MissingKernel, // a launch names a kernel the source does not define
    NeedsTriton, // a Triton candidate where Python or Triton is missing
    MissingHelper, // the installation lacks python/kernelloop/triton_aot.py
    // A Triton candidate's module or compile did what a kernel file has no business doing
    // (core/compile/confinement.h): refused, and nothing of it is used.
    SandboxWrite, // wrote outside its private folder
    SandboxRead, // read under a hidden place (the home directory, /run, another /tmp)
    SandboxNetwork, // opened a connection
    SandboxProcess, // started or signalled a process, or left one running after the compile
    SandboxUnavailable, // no bubblewrap here and no opt-in (--allow-unconfined-python): not run at all
    TimedOut, // the compile ran past its limit and was killed
    OutOfMemory, // past its memory bound
    Other,
};
const char* compileErrorKindName(CompileErrorKind kind); // "syntax", "undeclared-identifier", ...

struct CompilerDiagnostic {
    std::string file; // the candidate's file name for lines in the candidate, else the header's
    int line = 0; // 1-based line in the candidate source as the user wrote it; 0 if none
    int column = 0;
    std::string severity; // "error" | "warning"
    std::string message;
    CompileErrorKind kind = CompileErrorKind::Other;
    int ptxLine = 0; // for ptxas errors: the line in the generated PTX (mapped to `line` through -lineinfo)
};

// One parameter of a kernel as its PTX .entry declares it.
struct KernelParameter {
    std::string ptxType; // ".u64", ".f32", ".b8" (an aggregate: bytes = its array length)
    int bytes = 0;
};

// What ptxas said about one kernel.
struct KernelResources {
    std::string name; // as in the source (unmangled)
    std::string loweredName; // the symbol in the cubin (for cuModuleGetFunction)
    int registers = 0;
    int barriers = 0;
    std::int64_t staticSharedBytes = 0;
    std::int64_t constantBytes = 0;
    std::int64_t stackFrameBytes = 0; // local memory even without spills
    std::int64_t spillStoreBytes = 0;
    std::int64_t spillLoadBytes = 0;
    std::int64_t cumulativeStackBytes = 0;
    std::string arch; // "sm_90", the target ptxas compiled this entry for
    std::vector<KernelParameter> parameters; // from the PTX, in order
    bool parametersKnown = false; // false when the PTX did not show the entry's parameter list
    // Triton: the dynamic shared memory every launch must ask for, and the pointer parameters its
    // compiler appends after the declared ones (global and profile scratch): a buffer of
    // bytesPerProgram * programs when non-zero, else a null pointer.
    std::int64_t launchSharedBytes = 0;
    struct ImplicitParameter {
        std::string name; // "global_scratch", "profile_scratch"
        std::int64_t bytesPerProgram = 0;
        std::int64_t align = 1;
    };
    std::vector<ImplicitParameter> implicitParameters;
};

struct CompileOptions {
    std::string arch = "sm_90";
    TunableValues tunables; // passed as -DNAME=VALUE
    std::vector<std::string> extraOptions; // e.g. "-lineinfo", "--use_fast_math"
    bool lineInfo = true; // for PC sampling → source lines
    std::filesystem::path includeDir; // the problem's folder: the only folder #include may use
    // Triton: the positional arguments' types as Triton writes them ("*fp16", "i32", "fp32"), from
    // tritonSignature() (core/compile/triton_compiler.h); Triton compiles one kernel per signature.
    std::vector<std::string> tritonSignature;
};

struct CompileResult {
    bool ok = false;
    CompileErrorKind kind = CompileErrorKind::None; // of the first error
    std::string summary; // one line for the engineer or the LLM
    std::vector<CompilerDiagnostic> diagnostics;
    std::string log; // NVRTC's whole program log
    std::string ptx;
    std::string cubin; // binary, empty on failure
    std::vector<KernelResources> kernels; // one per kernel the launches name
    double compileMillis = 0.0;
    std::string nvrtcVersion; // "13.0"; for Triton candidates "triton 3.6.0"
    std::vector<std::string> options; // what NVRTC was given, for reproducing the compile
    CacheUse cache = CacheUse::Off; // whether NVRTC ran (miss, off) or its output came from compile_cache.h
    const KernelResources* kernel(const std::string& name) const;
};

// Compiles a candidate (CUDA through NVRTC; Triton through the Python helper, see
// triton_compiler.h). Never throws for a bad candidate: errors come back categorised.
CompileResult compileCandidate(const Candidate& candidate, const CompileOptions& options);

// Parses NVRTC/ptxas log text (exposed for golden tests over captured logs). Lines of
// `candidateFile` (the name the log uses for the candidate) move up by `lineOffset`; diagnostics
// about the name expressions of launched kernels ("__nv_name_map") are MissingKernel.
std::vector<CompilerDiagnostic> parseCompilerLog(
    const std::string& log, const std::string& candidateFile, int lineOffset);
// Every entry function ptxas reports, in log order; name = loweredName = the symbol ptxas printed.
// Understands both NVRTC's ("ptxas         .     0 bytes stack frame") and nvcc's layout.
std::vector<KernelResources> parsePtxasInfo(const std::string& log);
CompileErrorKind classifyDiagnostic(const std::string& message);

// The candidate source line that generated `ptxLine` of `ptx`, from the last ".loc" before it whose
// file is `fileName` (compared by its last path component); 0 if unknown (no -lineinfo).
int sourceLineForPtxLine(const std::string& ptx, int ptxLine, const std::string& fileName);

// Largest per-thread local memory (stack frame) a launch may use on any architecture we target.
constexpr std::int64_t kMaxLocalBytesPerThread = 512 * 1024;

} // namespace kl
