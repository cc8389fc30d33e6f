#pragma once
// What a candidate may #include. A candidate is untrusted text (an LLM wrote it), and NVRTC would
// otherwise read any file the process can: quoted includes are searched beside the program name,
// that is in the current folder, and angle includes along -I. So before compiling:
//   - <...> names CUDA headers (NVRTC's own, the toolkit's include folders); no ".." or absolute path;
//   - "..." names a file in the problem's folder, read here and handed to NVRTC in memory under the
//     name as written (NVRTC looks in-memory headers up by that exact name, so nested quoted
//     includes are relative to the problem folder too); no "..", no absolute path, no symlink out;
//   - anything the preprocessor would compute (#include MACRO), #line (it moves where quoted
//     includes are searched and where errors point), #import, #embed, __has_include of a file
//     outside the folder and include-like pragmas are refused.
#include "core/compile/compiler.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct LocalHeader {
    std::string name; // as written between the quotes
    std::string content; // read from the problem folder
};

struct IncludeCheck {
    std::vector<LocalHeader> headers; // to pass to nvrtcCreateProgram
    std::optional<CompilerDiagnostic> refusal; // ForbiddenInclude or TooLarge, naming file and line
};

// Checks `source` (named `fileName` in messages) and, recursively, the local headers it includes.
IncludeCheck checkIncludes(
    const std::string& source, const std::string& fileName, const std::filesystem::path& includeDir);

// The source split into logical lines: line splices joined, comments replaced by a space, each
// with the physical line it starts on. Exposed for tests.
struct LogicalLine {
    int line = 0;
    std::string text;
};
std::vector<LogicalLine> logicalLines(const std::string& source);

} // namespace kl
