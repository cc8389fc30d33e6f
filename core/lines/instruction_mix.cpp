#include "core/lines/instruction_mix.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace kl::lines {

namespace {

using C = InstructionClass;

std::string_view skipSpaces(std::string_view text)
{
    const auto first = text.find_first_not_of(" \t{");
    return first == std::string_view::npos ? std::string_view() : text.substr(first);
}

// Drops a leading predicate ("@!P0 ", "@%p1 ").
std::string_view withoutPredicate(std::string_view text)
{
    text = skipSpaces(text);
    if (!text.starts_with('@'))
        return text;
    const auto space = text.find_first_of(" \t");
    return space == std::string_view::npos ? std::string_view() : skipSpaces(text.substr(space));
}

const std::map<std::string_view, C>& sassClasses()
{
    static const std::map<std::string_view, C> classes {
        { "LDG", C::GlobalLoad },
        { "LD", C::GlobalLoad },
        { "STG", C::GlobalStore },
        { "ST", C::GlobalStore },
        { "LDS", C::SharedLoad },
        { "LDSM", C::SharedLoad },
        { "STS", C::SharedStore },
        { "STSM", C::SharedStore },
        { "LDL", C::LocalMemory },
        { "STL", C::LocalMemory },
        { "LDC", C::ConstantLoad },
        { "ULDC", C::ConstantLoad },
        { "LDGSTS", C::AsyncCopy },
        { "LDGDEPBAR", C::AsyncCopy },
        { "UTMALDG", C::AsyncCopy },
        { "UTMASTG", C::AsyncCopy },
        { "UTMAPF", C::AsyncCopy },
        { "UBLKCP", C::AsyncCopy },
        { "UTMACCTL", C::AsyncCopy },
        { "ATOM", C::Atomic },
        { "ATOMG", C::Atomic },
        { "ATOMS", C::Atomic },
        { "RED", C::Atomic },
        { "REDG", C::Atomic },
        { "REDAS", C::Atomic },
        { "FFMA", C::Fp32 },
        { "FADD", C::Fp32 },
        { "FMUL", C::Fp32 },
        { "FMNMX", C::Fp32 },
        { "FSET", C::Fp32 },
        { "FSETP", C::Fp32 },
        { "FSEL", C::Fp32 },
        { "FCHK", C::Fp32 },
        { "FSWZADD", C::Fp32 },
        { "FFMA32I", C::Fp32 },
        { "FADD32I", C::Fp32 },
        { "FMUL32I", C::Fp32 },
        { "HFMA2", C::Fp16 },
        { "HADD2", C::Fp16 },
        { "HMUL2", C::Fp16 },
        { "HMNMX2", C::Fp16 },
        { "HSET2", C::Fp16 },
        { "HSETP2", C::Fp16 },
        { "HFMA2_32I", C::Fp16 },
        { "DFMA", C::Fp64 },
        { "DADD", C::Fp64 },
        { "DMUL", C::Fp64 },
        { "DSETP", C::Fp64 },
        { "DMNMX", C::Fp64 },
        { "MUFU", C::SpecialFunction },
        { "F2F", C::Conversion },
        { "F2I", C::Conversion },
        { "I2F", C::Conversion },
        { "F2FP", C::Conversion },
        { "I2I", C::Conversion },
        { "FRND", C::Conversion },
        { "I2FP", C::Conversion },
        { "F2IP", C::Conversion },
        { "SHFL", C::Warp },
        { "VOTE", C::Warp },
        { "VOTEU", C::Warp },
        { "MATCH", C::Warp },
        { "REDUX", C::Warp },
        { "BRA", C::Control },
        { "BRX", C::Control },
        { "JMP", C::Control },
        { "EXIT", C::Control },
        { "RET", C::Control },
        { "CALL", C::Control },
        { "BAR", C::Control },
        { "BSSY", C::Control },
        { "BSYNC", C::Control },
        { "BREAK", C::Control },
        { "WARPSYNC", C::Control },
        { "DEPBAR", C::Control },
        { "MEMBAR", C::Control },
        { "FENCE", C::Control },
        { "YIELD", C::Control },
        { "SYNCS", C::Control },
        { "ERRBAR", C::Control },
        { "CCTL", C::Control },
        { "BPT", C::Control },
        { "KILL", C::Control },
        { "WARPGROUP", C::Control },
        { "ACQBULK", C::Control },
        { "ELECT", C::Control },
        { "BMOV", C::Control },
        { "IMAD", C::Integer },
        { "IADD3", C::Integer },
        { "IADD", C::Integer },
        { "IMUL", C::Integer },
        { "LOP3", C::Integer },
        { "LOP", C::Integer },
        { "SHF", C::Integer },
        { "SHL", C::Integer },
        { "SHR", C::Integer },
        { "ISETP", C::Integer },
        { "IMNMX", C::Integer },
        { "LEA", C::Integer },
        { "IABS", C::Integer },
        { "POPC", C::Integer },
        { "FLO", C::Integer },
        { "BREV", C::Integer },
        { "PRMT", C::Integer },
        { "SGXT", C::Integer },
        { "BMSK", C::Integer },
        { "IDP", C::Integer },
        { "VIADD", C::Integer },
        { "VIMNMX", C::Integer },
        { "VIADDMNMX", C::Integer },
        { "ISCADD", C::Integer },
        { "IMADSP", C::Integer },
        { "BFE", C::Integer },
        { "BFI", C::Integer },
    };
    return classes;
}

C sassClass(std::string_view opcode)
{
    const auto& classes = sassClasses();
    if (const auto it = classes.find(opcode); it != classes.end())
        return it->second;
    if (opcode.size() >= 3 && opcode.ends_with("MMA"))
        return C::TensorCore; // HMMA, HGMMA, IMMA, IGMMA, QGMMA, DMMA, UTCHMMA, ...
    // The uniform datapath's twins (UIADD3, ULOP3, USHF, UISETP, ULEA, UIMAD) count as their vector op.
    if (opcode.size() > 1 && opcode.front() == 'U')
        if (const auto it = classes.find(opcode.substr(1)); it != classes.end() && it->second == C::Integer)
            return it->second;
    return C::Other; // MOV, UMOV, S2R, CS2R, S2UR, SEL, P2R, R2P, PLOP3, NOP-free rest
}

bool hasPart(const std::vector<std::string_view>& parts, std::string_view part)
{
    for (std::size_t i = 1; i < parts.size(); ++i)
        if (parts[i] == part || parts[i].starts_with(std::string(part) + "::"))
            return true;
    return false;
}

// "ld.global.nc.v4.f32" → {"ld", "global", "nc", "v4", "f32"}
std::vector<std::string_view> ptxParts(std::string_view opcode)
{
    std::vector<std::string_view> parts;
    while (!opcode.empty()) {
        const auto dot = opcode.find('.');
        parts.push_back(opcode.substr(0, dot));
        if (dot == std::string_view::npos)
            break;
        opcode.remove_prefix(dot + 1);
    }
    return parts;
}

C ptxMemoryClass(const std::vector<std::string_view>& parts, bool load)
{
    if (hasPart(parts, "shared"))
        return load ? C::SharedLoad : C::SharedStore;
    if (hasPart(parts, "local"))
        return C::LocalMemory;
    if (load && (hasPart(parts, "param") || hasPart(parts, "const")))
        return C::ConstantLoad;
    if (!load && hasPart(parts, "param"))
        return C::Other; // arguments of a call
    return load ? C::GlobalLoad : C::GlobalStore; // global, or generic (mostly global in practice)
}

C ptxTypedClass(const std::vector<std::string_view>& parts)
{
    for (std::size_t i = parts.size(); i-- > 1;) {
        const auto p = parts[i];
        if (p == "f32")
            return C::Fp32;
        if (p == "f16" || p == "f16x2" || p == "bf16" || p == "bf16x2")
            return C::Fp16;
        if (p == "f64")
            return C::Fp64;
    }
    return C::Integer;
}

} // namespace

std::string_view instructionClassName(InstructionClass c)
{
    switch (c) {
    case C::GlobalLoad:
        return "global loads";
    case C::GlobalStore:
        return "global stores";
    case C::SharedLoad:
        return "shared loads";
    case C::SharedStore:
        return "shared stores";
    case C::LocalMemory:
        return "local memory (spills, stack)";
    case C::ConstantLoad:
        return "constant/parameter loads";
    case C::AsyncCopy:
        return "async copies (cp.async, TMA)";
    case C::Atomic:
        return "atomics and reductions";
    case C::TensorCore:
        return "tensor core (HMMA, WGMMA...)";
    case C::Fp32:
        return "FP32 (FFMA, FADD, FMUL...)";
    case C::Fp16:
        return "FP16/BF16 (HFMA2...)";
    case C::Fp64:
        return "FP64";
    case C::SpecialFunction:
        return "special functions (MUFU)";
    case C::Integer:
        return "integer and address";
    case C::Conversion:
        return "conversions";
    case C::Warp:
        return "warp shuffles and votes";
    case C::Control:
        return "control flow and sync";
    case C::Other:
        return "moves and other";
    }
    return "other";
}

std::optional<InstructionClass> classifySass(std::string_view instruction)
{
    const std::string_view text = withoutPredicate(instruction);
    const auto end = text.find_first_of(" \t.;");
    const std::string_view opcode = text.substr(0, end);
    if (opcode.empty() || opcode == "NOP")
        return std::nullopt;
    return sassClass(opcode);
}

std::optional<InstructionClass> classifyPtx(std::string_view line)
{
    std::string_view text = skipSpaces(line);
    if (text.empty() || text.front() == '.' || text.front() == '/' || text.front() == '}' || text.front() == '('
        || text.front() == ')' || text.front() == '$' || text.find(';') == std::string_view::npos)
        return std::nullopt; // directives, comments, braces, labels, parameter lists
    text = withoutPredicate(text);
    const std::string_view opcode = text.substr(0, text.find_first_of(" \t;"));
    if (opcode.empty() || opcode.back() == ':')
        return std::nullopt;
    const auto parts = ptxParts(opcode);
    const std::string_view base = parts.front();
    if (base == "ld" || base == "ldu")
        return ptxMemoryClass(parts, true);
    if (base == "st")
        return ptxMemoryClass(parts, false);
    if (base == "ldmatrix")
        return C::SharedLoad;
    if (base == "stmatrix")
        return C::SharedStore;
    if (base == "cp")
        return C::AsyncCopy;
    if (base == "atom" || base == "red")
        return C::Atomic;
    if (base == "mma" || base == "wgmma" || (base == "wmma" && hasPart(parts, "mma"))
        || (base == "tcgen05" && hasPart(parts, "mma")))
        return C::TensorCore;
    if (base == "wmma")
        return hasPart(parts, "store") ? C::GlobalStore : C::GlobalLoad; // wmma.load / wmma.store (generic)
    if (base == "cvt")
        return C::Conversion;
    if (base == "shfl" || base == "vote" || base == "match" || base == "redux")
        return C::Warp;
    if (base == "bra" || base == "brx" || base == "ret" || base == "exit" || base == "bar" || base == "barrier"
        || base == "membar" || base == "fence" || base == "call" || base == "trap" || base == "mbarrier"
        || base == "elect")
        return C::Control;
    if (base == "ex2" || base == "lg2" || base == "sin" || base == "cos" || base == "tanh" || base == "rsqrt"
        || ((base == "rcp" || base == "sqrt") && hasPart(parts, "approx")))
        return C::SpecialFunction;
    if (base == "mov" || base == "selp" || base == "cvta" || base == "prefetch" || base == "isspacep"
        || base == "griddepcontrol")
        return C::Other;
    return ptxTypedClass(parts); // add, mul, fma, setp, min, max, and, shl, div, ... by their type
}

InstructionMix sassInstructionMix(const SassListing& listing)
{
    InstructionMix mix;
    mix.source = "SASS";
    for (const SassFunction& function : listing.functions)
        for (const SassInstruction& instruction : function.instructions)
            if (const auto c = classifySass(instruction.text)) {
                ++mix.counts[static_cast<std::size_t>(*c)];
                ++mix.total;
            }
    return mix;
}

InstructionMix ptxInstructionMix(const std::string& ptx)
{
    InstructionMix mix;
    mix.source = "PTX";
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);)
        if (const auto c = classifyPtx(line)) {
            ++mix.counts[static_cast<std::size_t>(*c)];
            ++mix.total;
        }
    return mix;
}

std::vector<MixChange> mixChanges(const InstructionMix& before, const InstructionMix& after)
{
    std::vector<MixChange> rows;
    for (std::size_t i = 0; i < kInstructionClasses; ++i)
        if (before.counts[i] != 0 || after.counts[i] != 0)
            rows.push_back({ static_cast<InstructionClass>(i), before.counts[i], after.counts[i] });
    return rows;
}

std::string mixChangesText(const InstructionMix& before, const InstructionMix& after)
{
    std::string out;
    char row[160];
    std::snprintf(row, sizeof row, "%-32s %8s %8s %8s\n", "instructions", "before", "after", "change");
    out += row;
    const auto line = [&](std::string_view name, std::int64_t b, std::int64_t a) {
        std::snprintf(row, sizeof row, "%-32.*s %8lld %8lld %+8lld\n", static_cast<int>(name.size()), name.data(),
            static_cast<long long>(b), static_cast<long long>(a), static_cast<long long>(a - b));
        out += row;
    };
    for (const MixChange& change : mixChanges(before, after))
        line(instructionClassName(change.instructionClass), change.before, change.after);
    line("total", before.total, after.total);
    return out;
}

} // namespace kl::lines
