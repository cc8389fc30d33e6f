#pragma once
// Triton candidates, compiled ahead of time by the Python helper python/kernelloop/triton_aot.py
// (Triton's own compiler for the target, no GPU launch) into a cubin plus metadata; from there a
// Triton kernel is a cubin like any other. The helper speaks JSON (request file in; reply.json and kernel.cubin out);
// reading its reply and naming its errors is here, in C++, so that CI tests it on recorded replies.
#include "core/compile/compiler.h"
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kl {

// Triton's name for a dtype: f16 → "fp16", bf16 → "bf16", f32 → "fp32", i32 → "i32", ...
std::string tritonTypeName(DType type);

// The positional argument types of the candidate's launch ("*fp16" for a buffer, the scalar's or
// the expression's type for a value), in order. Throws kl::Error("plan.unknown-name") like the
// launch plan does for an argument that is neither.
// Specialisation, as Triton's JIT would do it: buffers are "*fp16:16" (the runner allocates each
// 256-byte aligned), and an integer argument that is a multiple of 16 at every main size (with these
// tunables; the candidate's defaults when none are given) is "i32:16". The helper then guards it in
// the kernel (python/kernelloop/triton_aot.py): other sizes take an unspecialised copy of the body.
std::vector<std::string> tritonSignature(
    const Problem& problem, const Candidate& candidate, const TunableValues* tunables = nullptr);

// The integer arguments a compiled Triton kernel was specialised on (multiples of 16, guarded in
// the kernel), from CompileResult::options' "divisible=" entry; empty when none.
std::vector<std::string> tritonDivisibleArguments(const CompileResult& compiled);

// The helper's request for one compile: kernel, signature, constexpr values (evaluated over the
// tunables), num_warps, num_stages, the target. Throws kl::Error (expression.*) with the line.
std::string tritonCompileRequest(const Candidate& candidate, const CompileOptions& options);

// A reply of the helper turned into a CompileResult: the cubin, the PTX, the kernel with its
// parameters (the declared ones and what Triton adds), registers/spills from the ptxas report,
// shared memory; or the error categorised (syntax, undeclared-identifier, type-mismatch,
// too-many-resources, unsupported-arch, missing-kernel, needs-triton) with the candidate's line.
// `cubin` is the kernel.cubin the helper wrote beside its reply.
CompileResult readTritonReply(
    const std::string& replyJson, const std::string& cubin, const Candidate& candidate, const CompileOptions& options);

// The category of what the sandbox refused ("write", "read", "network", "process": python/kernelloop/confine.py).
CompileErrorKind sandboxKind(const std::string& refused);

// The category of a Triton error from its exception type and message.
CompileErrorKind classifyTritonError(const std::string& exception, const std::string& message);

// Where the helper is: $KL_TRITON_HELPER, else pythonHelperPath("triton_aot.py").
std::filesystem::path tritonHelperPath();

// The whole compile: request, helper, reply. Never throws for a bad candidate; a missing Python or
// Triton is CompileErrorKind::NeedsTriton, a missing helper CompileErrorKind::MissingHelper. The helper
// runs sandboxed (core/compile/confinement.h); without a sandbox or an opt-in: SandboxUnavailable.
CompileResult compileTritonCandidate(const Candidate& candidate, const CompileOptions& options);

} // namespace kl
