#pragma once
// The machine code (SASS) of a cubin as text tools print it, linked to source lines and to the PC
// samples. Reads `nvdisasm -g` (line markers "//## File ..., line N" before the instructions they
// cover) and `cuobjdump -sass` (no line markers: lines then come from the samples' own mapping).
#include "core/lines/pc_sampling.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lines {

struct SassInstruction {
    std::uint64_t offset = 0; // byte offset in its function (CUPTI's pcOffset)
    std::string text; // "LDG.E R2, desc[UR4][R2.64]", without the trailing ';' or the encoding
    std::string file; // empty without a line marker
    int line = 0;
};

struct SassFunction {
    std::string name; // the symbol (lowered) name
    std::vector<SassInstruction> instructions;
};

struct SassListing {
    std::vector<SassFunction> functions;
    const SassFunction* function(std::string_view name) const;
    bool hasLineInfo() const;
};

// Never throws: lines it does not understand are skipped (an empty listing for text that is not SASS).
SassListing parseSass(const std::string& text);

// One instruction with the samples CUPTI took at its PC, and its source line (the listing's, else
// the samples').
struct SampledInstruction {
    SassInstruction instruction;
    std::int64_t samples = 0;
    std::string dominantStall;
};
std::vector<SampledInstruction> sampledInstructions(const SassFunction& function, const PcSampling& sampling);

// The instructions generated for a source line (both directions of the source ↔ SASS link).
std::vector<std::uint64_t> offsetsForLine(const std::vector<SampledInstruction>& listing, int line);

} // namespace kl::lines
