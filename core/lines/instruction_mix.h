#pragma once
// What a kernel's code is made of: its instructions counted by class (global/shared loads and stores,
// FP32, tensor core, integer, control, conversions, ...), statically from the SASS listing or the PTX,
// and two kernels' mixes side by side with the change. What Compiler Explorer users read off a diff
// of two compiles ("the rewrite traded 32 LDG for 8 LDG.128"), counted for them.
#include "core/lines/sass_listing.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lines {

enum class InstructionClass {
    GlobalLoad, // LDG, generic LD; ld.global, ld (generic), ldu
    GlobalStore, // STG, generic ST; st.global, st
    SharedLoad, // LDS, LDSM; ld.shared, ldmatrix
    SharedStore, // STS, STSM; st.shared, stmatrix
    LocalMemory, // LDL, STL: spills and stack; ld.local, st.local
    ConstantLoad, // LDC, ULDC; ld.param, ld.const
    AsyncCopy, // LDGSTS, UTMALDG, UBLKCP; cp.async, cp.async.bulk
    Atomic, // ATOM, ATOMS, ATOMG, RED; atom, red
    TensorCore, // HMMA, HGMMA, IMMA, ...; mma, wgmma, wmma.mma, tcgen05.mma
    Fp32, // FFMA, FADD, FMUL, FMNMX, FSETP, ...; *.f32
    Fp16, // HFMA2, HADD2, HMUL2, ...; *.f16, *.f16x2, *.bf16, *.bf16x2
    Fp64, // DFMA, DADD, DMUL, ...; *.f64
    SpecialFunction, // MUFU; ex2, lg2, sin, cos, tanh, rsqrt, rcp/sqrt .approx
    Integer, // IMAD, IADD3, LOP3, SHF, ISETP, LEA, ...; integer-typed arithmetic and logic
    Conversion, // F2F, F2I, I2F, F2FP, FRND; cvt
    Warp, // SHFL, VOTE, MATCH, REDUX; shfl, vote, match, redux
    Control, // BRA, EXIT, BAR, BSSY, WARPSYNC, MEMBAR, ...; bra, ret, bar, fence, call
    Other, // MOV, S2R, SEL, P2R, ...; mov, selp, cvta
};
constexpr std::size_t kInstructionClasses = static_cast<std::size_t>(InstructionClass::Other) + 1;

// "global loads", "FP32 (FFMA, FADD, FMUL...)": the class as the review's table names it.
std::string_view instructionClassName(InstructionClass c);

// The class of one SASS instruction ("@!P0 LDG.E.128 R4, desc[UR4][R2.64]" → GlobalLoad); nullopt for
// NOP, the padding after the last EXIT, which is not code the kernel runs.
std::optional<InstructionClass> classifySass(std::string_view instruction);
// The class of one PTX line; nullopt for a line that is no instruction (directives, labels, braces).
std::optional<InstructionClass> classifyPtx(std::string_view line);

struct InstructionMix {
    std::string source; // "SASS" | "PTX"
    std::array<std::int64_t, kInstructionClasses> counts {};
    std::int64_t total = 0;
    std::int64_t count(InstructionClass c) const { return counts[static_cast<std::size_t>(c)]; }
};

InstructionMix sassInstructionMix(const SassListing& listing); // every function of the listing
InstructionMix ptxInstructionMix(const std::string& ptx);

struct MixChange {
    InstructionClass instructionClass = InstructionClass::Other;
    std::int64_t before = 0;
    std::int64_t after = 0;
    std::int64_t delta() const { return after - before; }
};
// One row per class either side has, in the enum's order, then nothing else.
std::vector<MixChange> mixChanges(const InstructionMix& before, const InstructionMix& after);

// The table `show` and the tests print: "class  before  after  change" rows and a total row.
std::string mixChangesText(const InstructionMix& before, const InstructionMix& after);

} // namespace kl::lines
