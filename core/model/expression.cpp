#include "core/model/expression.h"

#include "core/model/error.h"

#include <muParser.h>

#include <cmath>
#include <vector>

namespace kl {

namespace {

double cdiv(double a, double b) { return std::ceil(a / b); }
double mod(double a, double b) { return std::fmod(a, b); }
double roundup(double a, double b) { return std::ceil(a / b) * b; }
double floorFn(double a) { return std::floor(a); }
double ceilFn(double a) { return std::ceil(a); }

void defineExtras(mu::Parser& parser)
{
    parser.DefineFun("cdiv", cdiv);
    parser.DefineFun("mod", mod);
    parser.DefineFun("roundup", roundup);
    parser.DefineFun("floor", floorFn);
    parser.DefineFun("ceil", ceilFn);
    parser.DefineOprt("%", mod, mu::prMUL_DIV, mu::oaLEFT);
}

// Collects every name without evaluating: undefined ones are reported to the caller by name
// instead of muParser's "unexpected token".
std::set<std::string> collect(const std::string& text, const std::string& file, const std::string& where)
{
    mu::Parser parser;
    defineExtras(parser);
    try {
        parser.SetExpr(text);
        std::set<std::string> names;
        for (const auto& [name, ptr] : parser.GetUsedVar())
            names.insert(name);
        return names;
    } catch (const mu::Parser::exception_type& e) {
        throw Error("expression.syntax", file, where,
            "cannot parse \"" + text + "\": " + e.GetMsg() + " (at position " + std::to_string(e.GetPos()) + ")");
    }
}

// muParser accepts two things no field of ours means: "M, N" (several results, of which Eval()
// returns the last) and "THREADS = 5" (an assignment, which is "true" as a constraint).
void checkForm(const std::string& text, const std::string& file, const std::string& where)
{
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '(')
            ++depth;
        else if (c == ')')
            --depth;
        else if (c == ',' && depth <= 0)
            throw Error("expression.syntax", file, where,
                "\"" + text + "\" holds more than one expression (a comma outside parentheses): write one per field");
        else if (c == '=') {
            const char before = i > 0 ? text[i - 1] : ' ';
            const char after = i + 1 < text.size() ? text[i + 1] : ' ';
            const bool comparison = before == '<' || before == '>' || before == '!' || before == '=' || after == '=';
            if (!comparison)
                throw Error(
                    "expression.syntax", file, where, "\"" + text + "\" assigns with \"=\"; compare with \"==\"");
        }
    }
}

} // namespace

std::set<std::string> usedSymbols(const std::string& text, const std::string& file, const std::string& where)
{
    if (text.size() > kMaxExpressionLength)
        throw Error("expression.too-long", file, where,
            "the expression has " + std::to_string(text.size()) + " characters; at most "
                + std::to_string(kMaxExpressionLength) + " are accepted");
    if (text.find_first_not_of(" \t") == std::string::npos)
        throw Error("expression.syntax", file, where, "empty expression");
    checkForm(text, file, where);
    return collect(text, file, where);
}

double evaluate(const std::string& text, const Symbols& symbols, const std::string& file, const std::string& where)
{
    const auto names = usedSymbols(text, file, where);
    mu::Parser parser;
    defineExtras(parser);
    std::vector<double> storage;
    storage.reserve(names.size());
    for (const auto& name : names) {
        auto it = symbols.find(name);
        if (it == symbols.end()) {
            std::string known;
            for (const auto& [k, v] : symbols)
                known += (known.empty() ? "" : ", ") + k;
            throw Error("expression.unknown-symbol", file, where,
                "unknown symbol \"" + name + "\" in \"" + text + "\" (known: " + known + ")");
        }
        storage.push_back(it->second);
        parser.DefineVar(name, &storage.back());
    }
    try {
        parser.SetExpr(text);
        const double value = parser.Eval();
        if (!std::isfinite(value))
            throw Error("expression.not-finite", file, where, "\"" + text + "\" is not finite");
        return value;
    } catch (const mu::Parser::exception_type& e) {
        throw Error("expression.syntax", file, where, "cannot evaluate \"" + text + "\": " + e.GetMsg());
    }
}

std::int64_t evaluateInteger(
    const std::string& text, const Symbols& symbols, const std::string& file, const std::string& where)
{
    const double value = evaluate(text, symbols, file, where);
    const double rounded = std::round(value);
    if (std::fabs(value - rounded) > 1e-9 || std::fabs(rounded) > 9.0e15)
        throw Error("expression.not-integer", file, where,
            "\"" + text + "\" = " + std::to_string(value) + " is not a whole number");
    return static_cast<std::int64_t>(rounded);
}

} // namespace kl
