#pragma once
// A launch plan: a candidate's declarations resolved for one size set and one choice of
// tunables into plain numbers, which is all the runner needs (it evaluates no expressions).
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kl {

struct PlannedBuffer {
    enum class Role { Input, Output, Scratch };
    std::string name;
    Role role = Role::Input;
    DType dtype = DType::F32;
    std::int64_t rows = 1; // product of all dimensions but the last (1 for 1-D)
    std::int64_t rowLength = 0; // last dimension
    std::int64_t rowStride = 0; // elements between rows: rowLength, or more when padded
    bool zeroed = false; // scratch: cleared before each launch sequence
    std::int64_t elements() const { return rows * rowStride; }
    std::int64_t bytes() const { return elements() * static_cast<std::int64_t>(dtypeSize(dtype)); }
};

struct PlannedArg {
    enum class Kind { Buffer, Value };
    Kind kind = Kind::Value;
    std::string buffer; // Kind::Buffer
    DType type = DType::I32;
    double value = 0.0; // Kind::Value, converted to `type` when packed
};

struct PlannedLaunch {
    std::string kernel;
    std::array<std::int64_t, 3> grid { 1, 1, 1 };
    std::array<std::int64_t, 3> block { 1, 1, 1 };
    std::int64_t sharedBytes = 0;
    std::vector<PlannedArg> args;
    std::int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
    std::int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
};

struct LaunchPlan {
    SizeSet sizes;
    bool padded = false;
    std::vector<PlannedBuffer> buffers; // the problem's inputs and outputs, then the candidate's scratch
    std::vector<PlannedLaunch> launches;
    const PlannedBuffer* buffer(const std::string& name) const;
};

// The symbols a candidate's expressions see: sizes, tunables, stride_<tensor> for each tensor.
Symbols planSymbols(const Problem& problem, const SizeSet& sizes, const TunableValues& tunables, bool padded);

// The first constraint (the candidate's) that `tunables` break at `sizes`, if any.
std::optional<Constraint> brokenConstraint(
    const Candidate& candidate, const Problem& problem, const SizeSet& sizes, const TunableValues& tunables);

// A scalar argument's value must fit its type where it is packed for the kernel: finite, and for an
// integer type whole and within its range (2^40 is no i32, 1e-5 no integer at all). One rule for the
// planner (so that `check` refuses what `evaluate` would) and the runner protocol. Throws
// kl::Error("protocol.bad-arg") with `file` and `where`.
void checkArgValue(DType type, double value, const std::string& file = {}, const std::string& where = {});

// Resolves everything. Throws kl::Error: "plan.constraint" when a constraint is broken,
// "plan.bad-launch" for a grid/block that is zero, negative or beyond CUDA's limits,
// "plan.unknown-name" for an argument that is neither a buffer, a scalar nor an expression
// over known symbols, "plan.bad-arg" for a tensor given a type ("x as f32": a pointer has none),
// "protocol.bad-arg" for a value its type cannot hold (checkArgValue), and the expression.*
// categories with the candidate's line.
LaunchPlan planLaunches(const Problem& problem, const Candidate& candidate, const SizeSet& sizes,
    const TunableValues& tunables, bool padded = false);

// The -D options that carry tunables to the compiler.
std::vector<std::string> tunableDefines(const TunableValues& tunables);

} // namespace kl
