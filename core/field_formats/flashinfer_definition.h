#pragma once
// A KernelLoop problem as a FlashInfer Trace Definition and its size sets as Workloads.
//
// Axes come from the size symbols: one that has the same value in every main and fuzz size set is
// "const", the others "var". A shape dimension that is not a bare symbol gets an axis of its own (const
// where it is the same everywhere, else var with a constraint "<axis> == <expression>"). Inputs are the
// tensors then the scalars (shape null, their value in each workload as a "scalar" input); a tensor's
// description says how KernelLoop draws it and whether its rows are padded in verification.
//
// The reference: a PyTorch reference is kept as written with a run(...) added that takes the inputs in
// the Definition's order and returns the outputs, as FlashInfer-Bench calls it. A CUDA reference has no
// PyTorch text to give: its run raises NotImplementedError saying so, the CUDA source is exported as the
// solution "<name>_reference", and the definition's "kernelloop" field keeps it for import-trace.
// The "kernelloop" field (ignored by FlashInfer-Bench, whose models drop unknown fields) holds the
// problem file as written and its sources: what FlashInfer Trace has no word for (tolerances,
// distributions, padded rows, bytes and FLOPs) travels there.
#include "core/field_formats/export_redaction.h"
#include "core/model/problem.h"
#include "core/store/records.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl::fieldformats {

struct DefinitionAxis {
    std::string name;
    bool constant = false;
    std::int64_t value = 0; // const axes
    std::string expression; // what it is in the problem's terms: a symbol or a shape expression
};

struct ExportedDefinition {
    std::string name; // the Definition's name (safeName of the problem's, made unique by the caller)
    std::string opType;
    std::vector<DefinitionAxis> axes;
    std::map<std::string, std::string> axisOf; // shape expression -> axis name
    Json json;

    // The var axes' values at a size set (what a Workload binds).
    std::map<std::string, std::int64_t> varValues(const SizeSet& sizes) const;
};

// Throws kl::Error "trace.unsupported-dtype" for a tensor or scalar whose dtype FlashInfer Trace has
// no name for (f64, u8).
ExportedDefinition exportDefinition(
    const Problem& problem, const store::ProblemRecord& record, const std::string& name);

// A Workload line (a Trace with only definition and workload): `role` "main" or "fuzz" and the size's
// label go in its "kernelloop" field.
Json workloadLine(
    const ExportedDefinition& definition, const Problem& problem, const SizeSet& sizes, const std::string& role);
// The workload object alone (what a Trace line embeds).
Json workloadOf(const ExportedDefinition& definition, const Problem& problem, const SizeSet& sizes);

} // namespace kl::fieldformats
