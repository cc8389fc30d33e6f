#pragma once
// Two iterations' compiled code compared (issue 28, "PTX/SASS diff"): the SASS of both where both were
// disassembled, else their PTX, saying why; the diff on text that leaves out what moves with every edit
// (instruction offsets and encodings, .loc lines), and the instruction mix of each with the change.
// The GUI's Code Diff tab and any printout draw this value.
#include "core/lines/instruction_mix.h"
#include "core/report/source_diff.h"
#include "core/store/code_listings.h"

#include <string>

namespace kl::report {

// The SASS as the diff reads it: per function its name, then one instruction a line without its
// offset or encoding (those shift with every instruction added before them).
std::string comparableSass(const lines::SassListing& listing);
// The PTX without .loc/.file lines, comments and blank lines (line numbers shift with every edit).
std::string comparablePtx(const std::string& ptx);

struct CodeComparison {
    std::string kind; // "SASS" | "PTX"; empty when one side has neither
    std::string note; // why PTX and not SASS, or why nothing; empty for SASS on both sides
    std::string beforeText; // comparable text of each side
    std::string afterText;
    SourceDiff diff;
    lines::InstructionMix beforeMix;
    lines::InstructionMix afterMix;
    bool comparable() const { return !kind.empty(); }
};

// `beforeName`/`afterName` name the sides in the note ("iteration 3").
CodeComparison compareCode(const store::CodeListings& before, const store::CodeListings& after,
    const std::string& beforeName, const std::string& afterName);

} // namespace kl::report
