#include "core/llm/reply_kernels.h"

#include <cctype>
#include <regex>

namespace kl::reply {

namespace {

std::string trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

// Comments become spaces (newlines kept), so that kernel names in comments and the // @kl lines
// are not taken for definitions.
std::string withoutComments(const std::string& source)
{
    std::string out = source;
    for (std::size_t i = 0; i + 1 < out.size();) {
        if (out[i] == '/' && out[i + 1] == '/') {
            while (i < out.size() && out[i] != '\n')
                out[i++] = ' ';
        } else if (out[i] == '/' && out[i + 1] == '*') {
            out[i] = out[i + 1] = ' ';
            i += 2;
            while (i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/')) {
                if (out[i] != '\n')
                    out[i] = ' ';
                ++i;
            }
            if (i + 1 < out.size())
                out[i] = out[i + 1] = ' ';
            i += 2;
        } else if (out[i] == '"') {
            for (++i; i < out.size() && out[i] != '"' && out[i] != '\n'; ++i)
                if (out[i] == '\\')
                    ++i;
            ++i;
        } else {
            ++i;
        }
    }
    return out;
}

std::vector<std::string> splitParameters(const std::string& list)
{
    std::vector<std::string> out;
    int depth = 0;
    std::string current;
    for (char c : list) {
        if (c == '(' || c == '<' || c == '[')
            ++depth;
        if (c == ')' || c == '>' || c == ']')
            --depth;
        if (c == ',' && depth == 0) {
            out.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty())
        out.push_back(trim(current));
    if (out.size() == 1 && out.front() == "void")
        out.clear();
    return out;
}

std::map<std::string, KernelSignature> cudaKernelsIn(const std::string& source)
{
    const std::string code = withoutComments(source);
    std::map<std::string, KernelSignature> kernels;
    static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");
    for (auto pos = code.find("__global__"); pos != std::string::npos; pos = code.find("__global__", pos + 10)) {
        // The name is the identifier before the first "(" that does not belong to an attribute.
        std::size_t i = pos + 10;
        std::string name;
        while (i < code.size() && code[i] != ';' && code[i] != '{') {
            if (code[i] == '(') {
                std::size_t back = i;
                while (back > pos && std::isspace(static_cast<unsigned char>(code[back - 1])))
                    --back;
                std::size_t start = back;
                while (start > pos
                    && (std::isalnum(static_cast<unsigned char>(code[start - 1])) || code[start - 1] == '_'))
                    --start;
                const std::string word = code.substr(start, back - start);
                int depth = 0;
                std::size_t close = i;
                for (; close < code.size(); ++close) {
                    if (code[close] == '(')
                        ++depth;
                    else if (code[close] == ')' && --depth == 0)
                        break;
                }
                if (word == "__launch_bounds__" || word == "__attribute__" || word == "alignas" || word == "__align__"
                    || word == "__maxnreg__" || word == "__cluster_dims__") {
                    i = close + 1;
                    continue;
                }
                if (std::regex_match(word, identifier) && close < code.size())
                    kernels[word].parameters = splitParameters(code.substr(i + 1, close - i - 1));
                break;
            }
            ++i;
        }
    }
    return kernels;
}

// Python comments and strings become spaces (newlines kept), so that "# @kl launch k" and a
// docstring naming a function are not taken for definitions.
std::string withoutPythonCommentsAndStrings(const std::string& source)
{
    std::string out = source;
    for (std::size_t i = 0; i < out.size();) {
        if (out[i] == '#') {
            while (i < out.size() && out[i] != '\n')
                out[i++] = ' ';
        } else if (out[i] == '"' || out[i] == '\'') {
            const char quote = out[i];
            const bool triple = i + 2 < out.size() && out[i + 1] == quote && out[i + 2] == quote;
            const std::size_t width = triple ? 3 : 1;
            for (std::size_t k = 0; k < width; ++k)
                out[i++] = ' ';
            while (i < out.size()) {
                if (out[i] == '\\' && i + 1 < out.size()) {
                    out[i] = ' ';
                    if (out[i + 1] != '\n')
                        out[i + 1] = ' ';
                    i += 2;
                    continue;
                }
                if (!triple && out[i] == '\n')
                    break;
                if (out[i] == quote
                    && (!triple || (i + 2 < out.size() && out[i + 1] == quote && out[i + 2] == quote))) {
                    for (std::size_t k = 0; k < width; ++k)
                        out[i++] = ' ';
                    break;
                }
                if (out[i] != '\n')
                    out[i] = ' ';
                ++i;
            }
        } else {
            ++i;
        }
    }
    return out;
}

// Each "@triton.jit" (or "@triton.jit(...)") decorator and the "def NAME(...)" that follows it,
// other decorators (@triton.autotune, @triton.heuristics) in between allowed.
std::map<std::string, KernelSignature> tritonKernelsIn(const std::string& source)
{
    const std::string code = withoutPythonCommentsAndStrings(source);
    std::map<std::string, KernelSignature> kernels;
    static const std::regex def(R"(^[ \t]*def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\()");
    for (auto pos = code.find("@triton.jit"); pos != std::string::npos; pos = code.find("@triton.jit", pos + 11)) {
        const auto defAt = code.find("def ", pos);
        if (defAt == std::string::npos)
            break;
        const auto lineStart = code.rfind('\n', defAt);
        const auto from = lineStart == std::string::npos ? 0 : lineStart + 1;
        std::smatch m;
        const std::string rest = code.substr(from, code.find('\n', defAt) - from);
        if (!std::regex_search(rest, m, def))
            continue;
        const std::size_t open = from + static_cast<std::size_t>(m.length(0)) - 1;
        int depth = 0;
        std::size_t close = open;
        for (; close < code.size(); ++close) {
            if (code[close] == '(' || code[close] == '[')
                ++depth;
            else if ((code[close] == ')' || code[close] == ']') && --depth == 0)
                break;
        }
        if (close >= code.size())
            continue;
        kernels[m[1].str()].parameters = splitParameters(code.substr(open + 1, close - open - 1));
    }
    return kernels;
}

} // namespace

std::map<std::string, KernelSignature> kernelsIn(const std::string& source, CandidateLanguage language)
{
    return language == CandidateLanguage::Triton ? tritonKernelsIn(source) : cudaKernelsIn(source);
}

bool isPointerParameter(const std::string& parameter)
{
    return parameter.find('*') != std::string::npos || parameter.find('[') != std::string::npos;
}

bool isConstexprParameter(const std::string& parameter)
{
    const auto colon = parameter.find(':');
    return colon != std::string::npos && parameter.find("constexpr", colon) != std::string::npos;
}

std::string parameterName(const std::string& parameter)
{
    return trim(parameter.substr(0, parameter.find_first_of(":=")));
}

} // namespace kl::reply
