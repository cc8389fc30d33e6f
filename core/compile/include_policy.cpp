#include "core/compile/include_policy.h"

#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace kl {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxLocalHeaders = 64;
constexpr std::size_t kMaxLocalHeaderBytes = 4 * kMaxCandidateSourceBytes;

bool isIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\f\v");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t\r\f\v") - b + 1);
}

// A quote after a pp-number that starts with a digit is a C++14 digit separator (1'000'000).
bool isDigitSeparator(const std::string& text)
{
    std::size_t start = text.size();
    while (start > 0 && (isIdentifierChar(text[start - 1]) || text[start - 1] == '.' || text[start - 1] == '\''))
        --start;
    return start < text.size() && std::isdigit(static_cast<unsigned char>(text[start]));
}

// R"delim( ... )delim", possibly with an encoding prefix, not the tail of a longer identifier.
bool endsWithRawPrefix(const std::string& text)
{
    static const std::regex prefix(R"((^|[^A-Za-z0-9_])(u8|u|U|L)?R$)");
    return !text.empty() && text.back() == 'R' && std::regex_search(text, prefix);
}

// The line with the contents of string and character literals blanked, so that identifiers
// found in it are code.
std::string blankLiterals(const std::string& text)
{
    std::string code = text;
    char quote = 0;
    for (std::size_t i = 0; i < code.size(); ++i) {
        const char c = code[i];
        if (quote) {
            if (c == '\\' && i + 1 < code.size()) {
                code[i] = code[i + 1] = ' ';
                ++i;
            } else if (c == quote) {
                quote = 0;
            } else {
                code[i] = ' ';
            }
        } else if (c == '"' || (c == '\'' && !isDigitSeparator(text.substr(0, i)))) {
            quote = c;
        }
    }
    return code;
}

class IncludeChecker {
public:
    explicit IncludeChecker(fs::path includeDir)
        : m_dir(std::move(includeDir))
    {
    }

    // False once something is refused; the reason is in m_result.refusal.
    bool check(const std::string& source, const std::string& file)
    {
        for (const auto& l : logicalLines(source))
            if (!checkDirective(l, file) || !checkOperators(l, file))
                return false;
        return true;
    }

    IncludeCheck take() { return std::move(m_result); }

private:
    bool refuse(const std::string& file, int line, const std::string& message,
        CompileErrorKind kind = CompileErrorKind::ForbiddenInclude)
    {
        CompilerDiagnostic d;
        d.file = file;
        d.line = line;
        d.column = 1;
        d.severity = "error";
        d.message = message;
        d.kind = kind;
        m_result.refusal = d;
        return false;
    }

    bool checkDirective(const LogicalLine& l, const std::string& file)
    {
        std::string rest = trim(l.text);
        if (rest.rfind('#', 0) == 0)
            rest = trim(rest.substr(1));
        else if (rest.rfind("%:", 0) == 0) // the digraph of '#'
            rest = trim(rest.substr(2));
        else
            return true;
        std::size_t end = 0;
        while (end < rest.size() && isIdentifierChar(rest[end]))
            ++end;
        const std::string directive = rest.substr(0, end);
        const std::string operand = trim(rest.substr(end));
        if (directive == "include" || directive == "include_next")
            return checkOperand(operand, "#" + directive, file, l.line);
        if (directive == "import" || directive == "embed")
            return refuse(file, l.line, "#" + directive + " is not allowed in a candidate");
        if (directive == "line")
            return refuse(file, l.line,
                "#line is not allowed in a candidate: it changes where errors point and where quoted "
                "includes are searched");
        if (directive == "pragma")
            return checkPragma(operand, file, l.line);
        return true;
    }

    bool checkPragma(const std::string& text, const std::string& file, int line)
    {
        static const std::regex includeLike(R"(\b(include\w*|dependency|system_header)\b)");
        if (std::regex_search(text, includeLike))
            return refuse(file, line, "pragma \"" + text + "\" is not allowed in a candidate");
        return true;
    }

    // __has_include(...), __has_embed(...) and _Pragma("...") may appear in any line.
    bool checkOperators(const LogicalLine& l, const std::string& file)
    {
        const std::string code = blankLiterals(l.text);
        for (std::size_t i = 0; i < code.size();) {
            if (!isIdentifierChar(code[i]) || (i > 0 && isIdentifierChar(code[i - 1]))) {
                ++i;
                continue;
            }
            std::size_t end = i;
            while (end < code.size() && isIdentifierChar(code[end]))
                ++end;
            const std::string word = code.substr(i, end - i);
            std::size_t open = code.find_first_not_of(" \t", end);
            const bool call = open != std::string::npos && code[open] == '(';
            if (word == "__has_embed")
                return refuse(file, l.line, "__has_embed is not allowed in a candidate");
            if (call && (word == "__has_include" || word == "__has_include_next")) {
                const auto close = code.find(')', open);
                const auto inner
                    = trim(l.text.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1));
                // A tested local header is handed to NVRTC too, so that it answers from memory.
                if (!checkOperand(inner, word, file, l.line))
                    return false;
            }
            if (call && word == "_Pragma") {
                const auto close = code.find(')', open);
                if (!checkPragma(l.text.substr(open + 1, close - open - 1), file, l.line))
                    return false;
            }
            i = end;
        }
        return true;
    }

    // `operand` follows #include or sits in __has_include( ): "name", <name>, or something computed.
    bool checkOperand(const std::string& operand, const std::string& what, const std::string& file, int line)
    {
        const char open = operand.empty() ? '\0' : operand[0];
        const char closeChar = open == '"' ? '"' : '>';
        const auto close = open == '"' || open == '<' ? operand.find(closeChar, 1) : std::string::npos;
        if (close == std::string::npos)
            return refuse(file, line,
                what + " " + operand
                    + ": a file name computed by the preprocessor cannot be checked; write it in quotes "
                      "(a file in the problem folder) or angle brackets (a CUDA header)");
        const std::string name = operand.substr(1, close - 1);
        const std::string shown = what + " " + operand.substr(0, close + 1);
        if (name.empty())
            return refuse(file, line, shown + ": empty file name");
        if (name[0] == '/' || name[0] == '~' || (name.size() > 1 && name[1] == ':'))
            return refuse(file, line, shown + ": absolute paths are not allowed");
        if (name.find('\\') != std::string::npos)
            return refuse(file, line, shown + ": backslashes are not allowed in include names");
        std::istringstream parts(name);
        for (std::string part; std::getline(parts, part, '/');)
            if (part == "..")
                return refuse(file, line, shown + ": \"..\" is not allowed (it leaves the problem folder)");
        if (open == '<')
            return true; // a CUDA header, searched only in the toolkit's folders
        return includeLocal(name, shown, file, line);
    }

    bool includeLocal(const std::string& name, const std::string& shown, const std::string& file, int line)
    {
        if (m_seen.count(name))
            return true;
        if (m_dir.empty())
            return refuse(file, line, shown + ": this candidate has no problem folder to include from");
        std::error_code ec;
        const fs::path dir = fs::canonical(m_dir, ec);
        const fs::path path = fs::canonical(m_dir / name, ec);
        if (ec || dir.empty())
            return refuse(file, line,
                shown + ": no such file in the problem folder " + m_dir.string()
                    + " (CUDA headers are included with <...>)");
        const auto relative = path.lexically_relative(dir);
        if (relative.empty() || *relative.begin() == "..")
            return refuse(file, line, shown + ": resolves outside the problem folder (through a symbolic link)");
        if (!fs::is_regular_file(path, ec))
            return refuse(file, line, shown + ": not a regular file");
        const auto size = fs::file_size(path, ec);
        if (ec || size > kMaxCandidateSourceBytes || m_bytes + size > kMaxLocalHeaderBytes
            || m_result.headers.size() >= kMaxLocalHeaders)
            return refuse(file, line, shown + ": too large (or too many local headers)", CompileErrorKind::TooLarge);
        std::ifstream in(path, std::ios::binary);
        std::ostringstream content;
        content << in.rdbuf();
        m_seen.insert(name);
        m_bytes += size;
        m_result.headers.push_back({ name, content.str() });
        return check(m_result.headers.back().content, name);
    }

    fs::path m_dir;
    IncludeCheck m_result;
    std::set<std::string> m_seen;
    std::uintmax_t m_bytes = 0;
};

} // namespace

std::vector<LogicalLine> logicalLines(const std::string& s)
{
    enum class State { Code, LineComment, BlockComment, Literal, RawLiteral };
    std::vector<LogicalLine> lines;
    LogicalLine current { 1, {} };
    State state = State::Code;
    char quote = 0;
    std::string rawEnd; // )delim"
    int line = 1;
    const auto n = s.size();
    for (std::size_t i = 0; i < n;) {
        const char c = s[i];
        // Line splices first (translation phase 2), everywhere.
        if (c == '\\' && i + 1 < n && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n'))) {
            i += s[i + 1] == '\n' ? 2 : 3;
            ++line;
            continue;
        }
        if (c == '\n') {
            ++line;
            ++i;
            if (state == State::BlockComment) // the whole comment is already one space
                continue;
            if (state == State::RawLiteral) {
                current.text += ' ';
                continue;
            }
            state = State::Code;
            lines.push_back(std::move(current));
            current = { line, {} };
            continue;
        }
        switch (state) {
        case State::LineComment:
            ++i;
            break;
        case State::BlockComment:
            if (c == '*' && i + 1 < n && s[i + 1] == '/') {
                state = State::Code;
                i += 2;
            } else {
                ++i;
            }
            break;
        case State::Literal:
            current.text += c;
            if (c == '\\' && i + 1 < n && s[i + 1] != '\n') {
                current.text += s[i + 1];
                i += 2;
                break;
            }
            if (c == quote)
                state = State::Code;
            ++i;
            break;
        case State::RawLiteral:
            if (s.compare(i, rawEnd.size(), rawEnd) == 0) {
                current.text += rawEnd;
                i += rawEnd.size();
                state = State::Code;
            } else {
                current.text += c;
                ++i;
            }
            break;
        case State::Code:
            if (c == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')) {
                state = s[i + 1] == '/' ? State::LineComment : State::BlockComment;
                current.text += ' ';
                i += 2;
                break;
            }
            if (c == '"' && endsWithRawPrefix(current.text)) {
                const auto paren = s.find('(', i + 1);
                if (paren != std::string::npos && paren - i - 1 <= 16) {
                    rawEnd = ")" + s.substr(i + 1, paren - i - 1) + "\"";
                    current.text += s.substr(i, paren - i + 1);
                    i = paren + 1;
                    state = State::RawLiteral;
                    break;
                }
            }
            if (c == '"' || (c == '\'' && !isDigitSeparator(current.text))) {
                quote = c;
                state = State::Literal;
            }
            current.text += c;
            ++i;
            break;
        }
    }
    lines.push_back(std::move(current));
    return lines;
}

IncludeCheck checkIncludes(
    const std::string& source, const std::string& fileName, const std::filesystem::path& includeDir)
{
    IncludeChecker checker(includeDir);
    checker.check(source, fileName);
    return checker.take();
}

} // namespace kl
