#include "core/model/names.h"

#include <algorithm>
#include <array>

namespace kl {

namespace {

bool isLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool hasIdentifierForm(std::string_view text)
{
    return !text.empty() && isLetter(text.front())
        && std::all_of(text.begin(), text.end(), [](char c) { return isLetter(c) || isDigit(c); });
}

// C++ keywords a macro could clash with, CUDA's qualifiers and built-in variables.
constexpr std::array<std::string_view, 103> kReserved { "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand",
    "bitor", "bool", "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield",
    "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
    "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
    "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "threadIdx",
    "blockIdx", "blockDim", "gridDim", "warpSize", "clusterDim", "clusterIdx", "half", "nv_bfloat16", "NULL",
    "assert" };

} // namespace

bool isIdentifier(std::string_view text) { return text.size() <= kMaxNameLength && hasIdentifierForm(text); }

std::string nameProblem(std::string_view text)
{
    if (text.empty())
        return "is empty";
    if (text.size() > kMaxNameLength)
        return "has " + std::to_string(text.size()) + " characters; a name has at most "
            + std::to_string(kMaxNameLength);
    if (!hasIdentifierForm(text))
        return "is not an identifier (a letter or _, then letters, digits or _)";
    return {};
}

bool isReservedName(std::string_view text)
{
    if (text.rfind("__", 0) == 0 || (text.size() > 1 && text[0] == '_' && text[1] >= 'A' && text[1] <= 'Z'))
        return true;
    return std::find(kReserved.begin(), kReserved.end(), text) != kReserved.end();
}

std::string quotedForMessage(std::string_view text, std::size_t keep)
{
    if (text.size() <= keep)
        return "\"" + std::string(text) + "\"";
    return "\"" + std::string(text.substr(0, keep)) + "...\"";
}

} // namespace kl
