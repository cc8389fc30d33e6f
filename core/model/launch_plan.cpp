#include "core/model/launch_plan.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace kl {

namespace {

std::string lineOf(int line) { return "line " + std::to_string(line); }

PlannedBuffer planTensor(
    const TensorSpec& t, PlannedBuffer::Role role, const Symbols& sizes, bool padded, const std::string& file)
{
    PlannedBuffer b;
    b.name = t.name;
    b.role = role;
    b.dtype = t.dtype;
    std::vector<std::int64_t> dims;
    for (const auto& e : t.shape) {
        dims.push_back(evaluateInteger(e, sizes, file, t.name + ".shape"));
        if (dims.back() < 0)
            throw Error("plan.bad-shape", file, t.name + ".shape", "\"" + e + "\" is negative");
    }
    b.rowLength = dims.back();
    for (std::size_t i = 0; i + 1 < dims.size(); ++i)
        b.rows *= dims[i];
    b.rowStride = b.rowLength;
    if (padded && !t.rowPadding.empty())
        b.rowStride += evaluateInteger(t.rowPadding, sizes, file, t.name + ".row_padding");
    return b;
}

} // namespace

void checkArgValue(DType type, double value, const std::string& file, const std::string& where)
{
    if (isFloating(type)) {
        if (!std::isfinite(value))
            throw Error(
                "protocol.bad-arg", file, where, "a " + std::string(dtypeName(type)) + " argument must be finite");
        return;
    }
    std::int64_t low = std::numeric_limits<std::int64_t>::min(), high = std::numeric_limits<std::int64_t>::max();
    switch (type) {
    case DType::I8:
        low = -128, high = 127;
        break;
    case DType::U8:
        low = 0, high = 255;
        break;
    case DType::I32:
        low = std::numeric_limits<std::int32_t>::min(), high = std::numeric_limits<std::int32_t>::max();
        break;
    default:
        break;
    }
    // i64's high as a double rounds up to 2^63, which no i64 holds.
    const bool fits = std::isfinite(value) && value == std::floor(value) && value >= static_cast<double>(low)
        && (high == std::numeric_limits<std::int64_t>::max() ? value < static_cast<double>(high)
                                                             : value <= static_cast<double>(high));
    if (!fits)
        throw Error("protocol.bad-arg", file, where,
            nlohmann::json(value).dump() + " does not fit " + std::string(dtypeName(type)));
}

const PlannedBuffer* LaunchPlan::buffer(const std::string& name) const
{
    for (const auto& b : buffers)
        if (b.name == name)
            return &b;
    return nullptr;
}

Symbols planSymbols(const Problem& problem, const SizeSet& sizes, const TunableValues& tunables, bool padded)
{
    Symbols symbols = sizes.symbols();
    for (const auto& [name, value] : tunables)
        symbols[name] = static_cast<double>(value);
    for (const auto& s : problem.scalars)
        symbols[s.name] = s.value;
    const auto sizeSymbols = sizes.symbols();
    for (const auto* list : { &problem.inputs, &problem.outputs })
        for (const auto& t : *list) {
            const auto b = planTensor(t, PlannedBuffer::Role::Input, sizeSymbols, padded, problem.file.string());
            symbols["stride_" + t.name] = static_cast<double>(b.rowStride);
        }
    return symbols;
}

std::optional<Constraint> brokenConstraint(
    const Candidate& candidate, const Problem& problem, const SizeSet& sizes, const TunableValues& tunables)
{
    const auto symbols = planSymbols(problem, sizes, tunables, false);
    for (const auto& c : candidate.constraints)
        if (evaluate(c.expression, symbols, candidate.fileName, lineOf(c.line)) == 0.0)
            return c;
    return std::nullopt;
}

LaunchPlan planLaunches(const Problem& problem, const Candidate& candidate, const SizeSet& sizes,
    const TunableValues& tunables, bool padded)
{
    const auto& file = candidate.fileName;
    if (auto broken = brokenConstraint(candidate, problem, sizes, tunables))
        throw Error("plan.constraint", file, lineOf(broken->line),
            "constraint \"" + broken->expression + "\" does not hold at " + sizes.label);

    LaunchPlan plan;
    plan.sizes = sizes;
    plan.padded = padded;
    const auto sizeSymbols = sizes.symbols();
    for (const auto& t : problem.inputs)
        plan.buffers.push_back(planTensor(t, PlannedBuffer::Role::Input, sizeSymbols, padded, problem.file.string()));
    for (const auto& t : problem.outputs)
        plan.buffers.push_back(planTensor(t, PlannedBuffer::Role::Output, sizeSymbols, padded, problem.file.string()));

    const auto symbols = planSymbols(problem, sizes, tunables, padded);
    for (const auto& s : candidate.scratch) {
        PlannedBuffer b;
        b.name = s.name;
        b.role = PlannedBuffer::Role::Scratch;
        b.dtype = s.dtype;
        b.rowLength = b.rowStride = evaluateInteger(s.count, symbols, file, lineOf(s.line));
        b.zeroed = s.zeroed;
        if (b.rowLength < 1 || b.bytes() > (std::int64_t(64) << 30))
            throw Error("plan.bad-scratch", file, lineOf(s.line),
                "scratch " + s.name + " of " + std::to_string(b.rowLength) + " elements is out of range");
        if (problem.tensor(s.name) || problem.scalar(s.name))
            throw Error(
                "plan.duplicate", file, lineOf(s.line), "scratch " + s.name + " has the name of a tensor or scalar");
        plan.buffers.push_back(b);
    }

    for (const auto& rule : candidate.launches) {
        const auto where = lineOf(rule.line);
        PlannedLaunch l;
        l.kernel = rule.kernel;
        static const std::array<std::int64_t, 3> maxGrid { 2147483647, 65535, 65535 };
        static const std::array<std::int64_t, 3> maxBlock { 1024, 1024, 64 };
        for (int d = 0; d < 3; ++d) {
            l.grid[d] = evaluateInteger(rule.grid[d], symbols, file, where);
            l.block[d] = evaluateInteger(rule.block[d], symbols, file, where);
            if (l.grid[d] < 1 || l.grid[d] > maxGrid[d])
                throw Error("plan.bad-launch", file, where,
                    rule.kernel + ": grid dimension " + std::to_string(d) + " = " + std::to_string(l.grid[d])
                        + " is outside 1.." + std::to_string(maxGrid[d]) + " at " + sizes.label);
            if (l.block[d] < 1 || l.block[d] > maxBlock[d])
                throw Error("plan.bad-launch", file, where,
                    rule.kernel + ": block dimension " + std::to_string(d) + " = " + std::to_string(l.block[d])
                        + " is outside 1.." + std::to_string(maxBlock[d]));
        }
        if (candidate.language == CandidateLanguage::Triton) {
            // Triton runs num_warps warps per program; its compiler sizes shared memory (added later).
            const auto warps = evaluateInteger(rule.numWarps, symbols, file, where);
            if (warps < 1 || warps > 32 || (warps & (warps - 1)) != 0)
                throw Error("plan.bad-launch", file, where,
                    rule.kernel + ": num_warps = " + std::to_string(warps) + " (a power of two from 1 to 32)");
            l.block = { warps * 32, 1, 1 };
        }
        if (l.threadsPerBlock() > 1024)
            throw Error("plan.bad-launch", file, where,
                rule.kernel + ": " + std::to_string(l.threadsPerBlock()) + " threads per block (at most 1024)");
        l.sharedBytes = evaluateInteger(rule.sharedBytes, symbols, file, where);
        if (l.sharedBytes < 0)
            throw Error("plan.bad-launch", file, where, rule.kernel + ": negative shared memory");
        for (const auto& a : rule.args) {
            PlannedArg arg;
            if (plan.buffer(a.expression)) {
                if (a.typeGiven)
                    throw Error("plan.bad-arg", file, where,
                        rule.kernel + ": \"" + a.expression
                            + "\" is a buffer, passed as a pointer: \"as TYPE\" applies to values only");
                arg.kind = PlannedArg::Kind::Buffer;
                arg.buffer = a.expression;
            } else if (const auto* s = problem.scalar(a.expression); s && !a.typeGiven) {
                arg.type = s->dtype;
                arg.value = s->value;
            } else {
                try {
                    arg.value = evaluate(a.expression, symbols, file, where);
                } catch (const Error& e) {
                    if (e.category() == "expression.unknown-symbol")
                        throw Error("plan.unknown-name", file, where,
                            rule.kernel + ": argument \"" + a.expression
                                + "\" is not a buffer, a scalar, or an expression over sizes and tunables ("
                                + e.message() + ")");
                    throw;
                }
                arg.type = a.type;
            }
            if (arg.kind == PlannedArg::Kind::Value)
                try {
                    checkArgValue(arg.type, arg.value, file, where);
                } catch (const Error& e) {
                    throw Error(e.category(), file, where,
                        rule.kernel + ": argument \"" + a.expression + "\" = " + e.message() + " at " + sizes.label);
                }
            l.args.push_back(arg);
        }
        plan.launches.push_back(std::move(l));
    }
    return plan;
}

std::vector<std::string> tunableDefines(const TunableValues& tunables)
{
    std::vector<std::string> defines;
    for (const auto& [name, value] : tunables)
        defines.push_back("-D" + name + "=" + std::to_string(value));
    return defines;
}

} // namespace kl
