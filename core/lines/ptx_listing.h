#pragma once
// The PTX of a candidate linked to its source lines through the `.loc` directives NVRTC writes
// with -lineinfo: the fallback view where no disassembler is installed.
#include <string>
#include <string_view>
#include <vector>

namespace kl::lines {

struct PtxLine {
    int number = 0; // 1-based line of the PTX text
    std::string text;
    // Of the last .loc before it in its function (its inlined_at call site for code inlined from
    // another file); 0 for directives and unknown.
    int sourceLine = 0;
    std::string sourceFile;
};

struct PtxListing {
    std::vector<PtxLine> lines;
    // PTX line numbers generated for a source line (of `file` when given, by last path component).
    std::vector<int> ptxLinesFor(int sourceLine, std::string_view file = {}) const;
    int sourceLineOf(int ptxLine) const; // 0 when unknown
};

// Never throws. Only instruction lines carry a source line; .loc, .file, labels, braces and
// declarations do not.
PtxListing parsePtx(const std::string& ptx);

} // namespace kl::lines
