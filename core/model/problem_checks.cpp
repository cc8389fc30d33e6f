#include "core/model/problem_checks.h"

#include "core/model/error.h"

#include <cmath>
#include <cstdio>

namespace kl {

namespace {

std::string number(double value)
{
    std::string text = std::to_string(value);
    if (std::fabs(value) >= 1e15 || (value != 0 && std::fabs(value) < 1e-3)) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%g", value);
        text = buffer;
    }
    return text;
}

std::string rangeText(DType type) { return "[" + number(dtypeLowest(type)) + ", " + number(dtypeHighest(type)) + "]"; }

bool within(double value, DType type) { return value >= dtypeLowest(type) && value <= dtypeHighest(type); }
bool whole(double value) { return std::isfinite(value) && std::floor(value) == value; }

struct SizeSetRef {
    const SizeSet& sizes;
    std::string where; // "sizes.main[0]"
};

// An expression's value at one size set, with the problem's own category when it cannot be had.
double valueAt(const std::string& text, const SizeSetRef& at, const std::string& file, const std::string& where,
    const std::string& category)
{
    try {
        return evaluate(text, at.sizes.symbols(), file, where);
    } catch (const Error& e) {
        throw Error(category, file, where, e.message() + " at size set " + at.sizes.label + " (" + at.where + ")");
    }
}

std::int64_t wholeAt(const std::string& text, const SizeSetRef& at, const std::string& file, const std::string& where,
    const std::string& category)
{
    const double value = valueAt(text, at, file, where, category);
    if (!whole(value) || std::fabs(value) > 9.0e15)
        throw Error(category, file, where,
            "\"" + text + "\" = " + number(value) + " at size set " + at.sizes.label + " is not a whole number");
    return static_cast<std::int64_t>(value);
}

void checkTensor(const TensorSpec& t, const std::string& where, const SizeSetRef& at, const std::string& file)
{
    double elements = 1.0;
    double rowLength = 1.0;
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
        const auto dimWhere = where + ".shape[" + std::to_string(d) + "]";
        const auto dim = wholeAt(t.shape[d], at, file, dimWhere, "problem.bad-shape");
        if (dim < 1)
            throw Error("problem.bad-shape", file, dimWhere,
                "\"" + t.shape[d] + "\" = " + std::to_string(dim) + " at size set " + at.sizes.label
                    + ": every dimension must be at least 1");
        elements *= static_cast<double>(dim);
        rowLength = static_cast<double>(dim);
    }
    if (!t.rowPadding.empty()) {
        const auto padWhere = where + ".row_padding";
        const auto padding = wholeAt(t.rowPadding, at, file, padWhere, "problem.bad-padding");
        if (padding < 0)
            throw Error("problem.bad-padding", file, padWhere,
                "\"" + t.rowPadding + "\" = " + std::to_string(padding) + " at size set " + at.sizes.label
                    + ": row padding must not be negative");
        elements = elements / rowLength * (rowLength + static_cast<double>(padding));
    }
    const double bytes = elements * static_cast<double>(dtypeSize(t.dtype));
    if (bytes > kMaxTensorBytes)
        throw Error("problem.bad-shape", file, where + ".shape",
            t.name + " is " + number(bytes) + " bytes at size set " + at.sizes.label + "; a tensor may have at most "
                + number(kMaxTensorBytes));
}

} // namespace

void checkCount(std::size_t count, std::size_t limit, const std::string& category, const std::string& file,
    const std::string& where)
{
    if (count > limit)
        throw Error(category, file, where,
            std::to_string(count) + " entries; at most " + std::to_string(limit) + " are accepted");
}

void checkScalarValue(const ScalarSpec& scalar, const std::string& file, const std::string& where)
{
    if (!within(scalar.value, scalar.dtype))
        throw Error("problem.bad-scalar", file, where,
            number(scalar.value) + " does not fit " + std::string(dtypeName(scalar.dtype)) + " "
                + rangeText(scalar.dtype));
    if (!isFloating(scalar.dtype) && !whole(scalar.value))
        throw Error("problem.bad-scalar", file, where,
            number(scalar.value) + " is not a whole number, as " + std::string(dtypeName(scalar.dtype)) + " needs");
}

void checkDistribution(const Distribution& d, DType type, const std::string& file, const std::string& where)
{
    const auto check = [&](double value, const char* field) {
        if (!within(value, type))
            throw Error("problem.bad-distribution", file, where + "." + field,
                number(value) + " is outside what " + std::string(dtypeName(type)) + " holds " + rangeText(type));
        if (d.kind == Distribution::Kind::Integers && (!whole(value) || std::fabs(value) > 9007199254740992.0))
            throw Error("problem.bad-distribution", file, where + "." + field,
                number(value) + " is not a whole number within ±2^53: integers are drawn between whole bounds");
    };
    switch (d.kind) {
    case Distribution::Kind::Normal:
        check(d.a, "mean");
        if (!std::isfinite(d.b) || d.b > dtypeHighest(type))
            throw Error("problem.bad-distribution", file, where + ".std",
                number(d.b) + " is outside what " + std::string(dtypeName(type)) + " holds");
        break;
    case Distribution::Kind::Uniform:
    case Distribution::Kind::Integers:
        check(d.a, "low");
        check(d.b, "high");
        break;
    case Distribution::Kind::Constant:
        check(d.a, "value");
        break;
    }
}

void checkAtEverySize(const Problem& p)
{
    const std::string file = p.file.string();
    std::vector<SizeSetRef> sets;
    for (std::size_t i = 0; i < p.mainSizes.size(); ++i)
        sets.push_back({ p.mainSizes[i], "sizes.main[" + std::to_string(i) + "]" });
    for (std::size_t i = 0; i < p.fuzzSizes.size(); ++i)
        sets.push_back({ p.fuzzSizes[i], "sizes.fuzz[" + std::to_string(i) + "]" });
    for (const auto& at : sets) {
        for (std::size_t i = 0; i < p.inputs.size(); ++i)
            checkTensor(p.inputs[i], "inputs[" + std::to_string(i) + "]", at, file);
        for (std::size_t i = 0; i < p.outputs.size(); ++i)
            checkTensor(p.outputs[i], "outputs[" + std::to_string(i) + "]", at, file);
        const double bytes = valueAt(p.bytesExpression, at, file, "bytes", "problem.bad-bytes");
        if (!(bytes > 0))
            throw Error("problem.bad-bytes", file, "bytes",
                "\"" + p.bytesExpression + "\" = " + number(bytes) + " at size set " + at.sizes.label
                    + ": the bytes one call moves must be above zero");
        if (!p.flopsExpression.empty()) {
            const double flops = valueAt(p.flopsExpression, at, file, "flops", "problem.bad-flops");
            if (flops < 0)
                throw Error("problem.bad-flops", file, "flops",
                    "\"" + p.flopsExpression + "\" = " + number(flops) + " at size set " + at.sizes.label
                        + ": FLOPs must not be negative");
        }
    }
}

} // namespace kl
