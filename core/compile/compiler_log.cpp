// Reads what NVRTC says. Front-end messages (EDG) come as
//
//   baseline.cu(5): error: expected a ";"
//         x[threadIdx.x] = v * 2.0f;
//         ^
//
// with the source line and a caret two columns in; ptxas adds "ptxas error   : ..." and, for
// inline PTX, "ptxas application ptx input, line 28; error   : ...". The name expressions we add
// for the launched kernels are compiled as a file "__nv_name_map".
#include "core/compile/compiler.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace kl {

namespace {

constexpr std::size_t kMaxLogLineChars = 2000;

constexpr const char* kNameMapFile = "__nv_name_map";

std::string lastComponent(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string severityOf(const std::string& word)
{
    if (word == "catastrophic error" || word == "error" || word == "Error" || word == "fatal")
        return "error";
    if (word == "Warning")
        return "warning";
    return word; // "warning", "remark", "note"
}

bool isNoise(const std::string& line)
{
    return line.find("detected in the compilation of") != std::string::npos || line == "Compilation terminated."
        || line.rfind("Remark: The warnings can be suppressed", 0) == 0
        || line.find("Ptx assembly aborted due to errors") != std::string::npos;
}

// The column of the caret under a quoted source line: EDG indents both by two characters.
int caretColumn(const std::string& caretLine)
{
    const auto caret = caretLine.find('^');
    if (caret == std::string::npos || caretLine.find_first_not_of(" \t^") != std::string::npos)
        return 0;
    return static_cast<int>(caret) - 2 + 1;
}

bool isIndented(const std::string& line) { return !line.empty() && (line[0] == ' ' || line[0] == '\t'); }

std::string trimmed(const std::string& line)
{
    const auto b = line.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : line.substr(b);
}

// After an EDG message come indented lines: more of the message ("argument types are: ..."), the
// quoted source line with a caret line under it, then context ("detected during instantiation
// of ... at line 7"). Returns the index of the last line read.
std::size_t readIndentedLines(const std::vector<std::string>& lines, std::size_t header, CompilerDiagnostic& d)
{
    std::size_t end = header + 1;
    std::size_t caret = 0;
    while (end < lines.size() && isIndented(lines[end]) && end < header + 16) {
        if (!caret && end > header + 1 && caretColumn(lines[end]) > 0)
            caret = end;
        ++end;
    }
    if (caret)
        d.column = caretColumn(lines[caret]);
    for (std::size_t k = header + 1; k < end; ++k)
        if (!caret || (k + 1 != caret && k != caret))
            d.message += "; " + trimmed(lines[k]);
    return end - 1;
}

} // namespace

const char* compileErrorKindName(CompileErrorKind kind)
{
    switch (kind) {
    case CompileErrorKind::None:
        return "none";
    case CompileErrorKind::Syntax:
        return "syntax";
    case CompileErrorKind::UndeclaredIdentifier:
        return "undeclared-identifier";
    case CompileErrorKind::TypeMismatch:
        return "type-mismatch";
    case CompileErrorKind::TooManyResources:
        return "too-many-resources";
    case CompileErrorKind::UnsupportedArch:
        return "unsupported-arch";
    case CompileErrorKind::ForbiddenInclude:
        return "forbidden-include";
    case CompileErrorKind::TooLarge:
        return "too-large";
    case CompileErrorKind::MissingKernel:
        return "missing-kernel";
    case CompileErrorKind::NeedsTriton:
        return "needs-triton";
    case CompileErrorKind::MissingHelper:
        return "missing-helper";
    case CompileErrorKind::SandboxWrite:
        return "sandbox-write";
    case CompileErrorKind::SandboxRead:
        return "sandbox-read";
    case CompileErrorKind::SandboxNetwork:
        return "sandbox-network";
    case CompileErrorKind::SandboxProcess:
        return "sandbox-process";
    case CompileErrorKind::SandboxUnavailable:
        return "sandbox-unavailable";
    case CompileErrorKind::TimedOut:
        return "timeout";
    case CompileErrorKind::OutOfMemory:
        return "out-of-memory";
    case CompileErrorKind::Other:
        return "other";
    }
    return "other";
}

CompileErrorKind classifyDiagnostic(const std::string& message)
{
    // First match wins: resource and architecture messages are the most specific.
    static const std::vector<std::pair<std::regex, CompileErrorKind>> rules = [] {
        using K = CompileErrorKind;
        const std::vector<std::pair<const char*, K>> patterns {
            { R"(too much (shared|local) data|too many registers|uses too much|parameter space overflowed|)"
              R"(too many resources|exceeds the maximum|out of (registers|memory))",
                K::TooManyResources },
            { R"(not supported on \.target|requires \.target|not supported (for|on) this (GPU )?architecture|)"
              R"(invalid value for --gpu-architecture|unsupported gpu architecture|requires (sm_|compute capability)|)"
              R"(is not supported on sm_|not supported on target|only supported on sm_)",
                K::UnsupportedArch },
            { R"(identifier "[^"]*" is undefined|has no member|is not a (class|namespace|template)|)"
              R"(must be a class or namespace name|is not a member of|undefined identifier|)"
              R"(^(function|variable|type) "[^"]*" (is )?undeclared)",
                K::UndeclaredIdentifier },
            { R"(cannot be used to initialize an entity of type|no suitable (conversion|constructor)|)"
              R"(is incompatible with|no instance of (overloaded function|function template|constructor)|)"
              R"(no operator "[^"]*" matches|too (few|many) arguments in function call|cannot be assigned to|)"
              R"(invalid type conversion|expression must have [^"]*type|modifiable lvalue|incompatible|cannot convert|)"
              R"(more than one (instance|conversion)|no default constructor|is not a type name)",
                K::TypeMismatch },
            { R"(^expected an? |^expected a declaration|unrecognized token|missing closing quote|)"
              R"(unexpected|unbalanced|invalid preprocessing directive|extra text after expected end|)"
              R"(this declaration has no storage class or type specifier|^unrecognized preprocessing directive|)"
              R"(unnamed prototyped parameters not allowed)",
                K::Syntax },
        };
        std::vector<std::pair<std::regex, CompileErrorKind>> compiled;
        for (const auto& [pattern, kind] : patterns)
            compiled.emplace_back(std::regex(pattern, std::regex::icase), kind);
        return compiled;
    }();
    for (const auto& [pattern, kind] : rules)
        if (std::regex_search(message, pattern))
            return kind;
    return CompileErrorKind::Other;
}

std::vector<CompilerDiagnostic> parseCompilerLog(
    const std::string& log, const std::string& candidateFile, int lineOffset)
{
    static const std::regex frontEnd(
        R"(^(.*)\((\d+)\): (catastrophic error|error|warning|remark|note|Error|Warning)(?: #[0-9]+(?:-D)?)?: (.*)$)");
    static const std::regex ptxasAt(R"(^ptxas (?:application ptx input|.*\.ptx), line (\d+); (\w+)\s*: (.*)$)");
    static const std::regex ptxas(R"(^ptxas (error|fatal|warning)\s*: (.*)$)");
    static const std::regex nvrtc(R"(^nvrtc: (error|warning): (.*)$)");

    std::vector<std::string> lines;
    {
        std::istringstream in(log);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            // std::regex recurses once per character: a line that echoes a 400,000-character
            // identifier overflowed the stack. Its head (where) and tail (what) are kept.
            if (line.size() > kMaxLogLineChars)
                line = line.substr(0, kMaxLogLineChars / 2) + "..." + line.substr(line.size() - kMaxLogLineChars / 2);
            lines.push_back(line);
        }
    }

    std::vector<CompilerDiagnostic> diagnostics;
    std::smatch m;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto& line = lines[i];
        if (isNoise(line))
            continue;
        CompilerDiagnostic d;
        if (std::regex_match(line, m, frontEnd)) {
            d.file = m[1];
            d.line = std::stoi(m[2]);
            d.severity = severityOf(m[3]);
            d.message = m[4];
            i = readIndentedLines(lines, i, d);
            if (d.file == candidateFile || lastComponent(d.file) == lastComponent(candidateFile))
                d.line = std::max(0, d.line - lineOffset);
            d.kind = d.file == kNameMapFile ? CompileErrorKind::MissingKernel : classifyDiagnostic(d.message);
        } else if (std::regex_match(line, m, ptxasAt)) {
            d.file = "ptxas";
            d.ptxLine = std::stoi(m[1]);
            d.severity = severityOf(m[2]);
            d.message = m[3];
            d.kind = classifyDiagnostic(d.message);
        } else if (std::regex_match(line, m, ptxas)) {
            d.file = "ptxas";
            d.severity = severityOf(m[1]);
            d.message = m[2];
            d.kind = classifyDiagnostic(d.message);
        } else if (std::regex_match(line, m, nvrtc)) {
            d.file = "nvrtc";
            d.severity = m[1];
            d.message = m[2];
            d.kind = classifyDiagnostic(d.message);
        } else {
            continue; // ptxas info lines, blank lines, quoted source of a message already read
        }
        if (d.severity != "error")
            d.kind = CompileErrorKind::None;
        diagnostics.push_back(std::move(d));
    }
    return diagnostics;
}

int sourceLineForPtxLine(const std::string& ptx, int ptxLine, const std::string& fileName)
{
    static const std::regex loc(R"(^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+)");
    static const std::regex file(R"x(^\s*\.file\s+(\d+)\s+"([^"]*)")x");
    const std::string wanted = lastComponent(fileName);
    std::istringstream in(ptx);
    std::string line;
    std::pair<int, int> lastLoc { -1, 0 }; // (file index, source line) of the last .loc up to ptxLine
    int fileIndex = -1;
    for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (number <= ptxLine && std::regex_search(line, m, loc))
            lastLoc = { std::stoi(m[1]), std::stoi(m[2]) };
        else if (std::regex_search(line, m, file) && lastComponent(m[2].str()) == wanted)
            fileIndex = std::stoi(m[1]); // .file directives come after the code
    }
    return lastLoc.first == fileIndex && fileIndex >= 0 ? lastLoc.second : 0;
}

} // namespace kl
