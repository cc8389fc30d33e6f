#pragma once
// Size, launch and constraint expressions ("cdiv(M, ROWS)", "THREADS * VEC <= 4096"), evaluated
// by muParser. Beside muParser's built-ins: cdiv(a,b), floor, ceil, mod(a,b), a % b, and
// roundup(a,b) (a rounded up to a multiple of b).
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace kl {

using Symbols = std::map<std::string, double>;

// The longest expression accepted ("expression.too-long" beyond): a real one is a line; muParser's
// cost grows with the text, and every size set evaluates it again.
constexpr std::size_t kMaxExpressionLength = 4096;

// Throws kl::Error (category "expression.syntax", "expression.unknown-symbol",
// "expression.not-integer", "expression.not-finite", "expression.too-long") with `file` and `where` copied in, so the
// message names the field or line that held the expression.
double evaluate(
    const std::string& text, const Symbols& symbols, const std::string& file = {}, const std::string& where = {});

// As evaluate(), and the result must be a whole number (within 1e-9).
std::int64_t evaluateInteger(
    const std::string& text, const Symbols& symbols, const std::string& file = {}, const std::string& where = {});

// The names an expression uses, whether defined or not. Throws on a syntax error.
std::set<std::string> usedSymbols(const std::string& text, const std::string& file = {}, const std::string& where = {});

} // namespace kl
