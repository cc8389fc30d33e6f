#pragma once
// The diff of two candidate sources (dtl), as values both front ends draw: hunks of typed lines
// for an inline view, rows for a side-by-side view, and the unified text `show` prints.
#include <optional>
#include <string>
#include <vector>

namespace kl::report {

struct DiffLine {
    enum class Kind { Same, Added, Removed };
    Kind kind = Kind::Same;
    std::string text;
    int beforeLine = 0; // 1-based; 0 for an added line
    int afterLine = 0; // 1-based; 0 for a removed line
};

struct DiffHunk {
    int beforeStart = 0; // as in "@@ -beforeStart,beforeCount +afterStart,afterCount @@"
    int beforeCount = 0;
    int afterStart = 0;
    int afterCount = 0;
    std::vector<DiffLine> lines;
};

struct SourceDiff {
    std::vector<DiffHunk> hunks; // empty when the sources are the same
    int added = 0;
    int removed = 0;
    bool same() const { return hunks.empty(); }
};

// `context`: unchanged lines kept around each change (hunks closer than twice that merge).
SourceDiff diffSources(const std::string& before, const std::string& after, int context = 3);

// Unified format with "--- beforeName" / "+++ afterName" headers; empty when the sources are the same.
std::string unifiedDiffText(const SourceDiff& diff, const std::string& beforeName, const std::string& afterName);
std::string unifiedDiff(
    const std::string& before, const std::string& after, const std::string& beforeName, const std::string& afterName);

// One row of a side-by-side view: a removed run is paired with the added run after it.
struct SideBySideRow {
    enum class Kind { Same, Changed, Removed, Added, HunkBreak };
    Kind kind = Kind::Same;
    std::optional<int> beforeLine;
    std::string beforeText;
    std::optional<int> afterLine;
    std::string afterText;
};
std::vector<SideBySideRow> sideBySide(const SourceDiff& diff);

// Two columns of `columnWidth` characters each ("<", ">", "|" markers in between), for a terminal.
std::string sideBySideText(const SourceDiff& diff, int columnWidth = 60);

} // namespace kl::report
