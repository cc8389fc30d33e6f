// The history file: CSV and JSON writers over the rows and the figures.
#include "core/export/history_export.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>

namespace kl::history {

using figures::IterationFigures;
using figures::SizeFigures;

namespace {

std::string quoted(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string number(const std::optional<double>& value)
{
    if (!value)
        return {};
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", *value);
    return buffer;
}

nlohmann::json optional(const std::optional<double>& value)
{
    return value ? nlohmann::json(*value) : nlohmann::json();
}

std::map<int, const IterationFigures*> byIndex(const std::vector<IterationFigures>& figures)
{
    std::map<int, const IterationFigures*> index;
    for (const IterationFigures& f : figures)
        index.emplace(f.index, &f);
    return index;
}

// "FP32 CUDA cores: not a matrix product": the ceiling speed of light holds the size's FLOPs to; empty
// where the runner named none.
std::string ceilingOf(const SizeFigures* size)
{
    return size && size->compute ? ceilingText(*size->compute, size->computeReason) : std::string();
}

// The columns after top_finding: who measured the row, PyTorch as a contender, and speed of light
// (the row's first size, as its other figures) with the ceiling it holds the FLOPs to.
std::string figureFields(const IterationFigures* f)
{
    if (!f)
        return ",,,,,,,,";
    const SizeFigures* first = f->sizes.empty() ? nullptr : &f->sizes.front();
    return "," + quoted(f->endpoint) + "," + quoted(f->gpuModel) + "," + (f->gpu >= 0 ? std::to_string(f->gpu) : "")
        + "," + number(speedupVsEager(*f)) + "," + number(speedupVsCompile(*f)) + ","
        + number(first ? first->pctOfSol : std::nullopt) + ","
        + (first && first->solBound ? std::string(boundName(*first->solBound)) : std::string()) + ","
        + quoted(ceilingOf(first));
}

nlohmann::json pytorchJson(const IterationFigures& f)
{
    nlohmann::json sizes = nlohmann::json::array();
    for (const SizeFigures& s : f.sizes)
        if (s.eagerUs || s.torchCompileUs || !s.torchCompileError.empty())
            sizes.push_back({ { "size", s.size }, { "eager_us", optional(s.eagerUs) },
                { "torch_compile_us", optional(s.torchCompileUs) }, { "vs_eager", optional(s.speedupVsEager) },
                { "vs_torch_compile", optional(s.speedupVsCompile) },
                { "torch_compile_error",
                    s.torchCompileError.empty() ? nlohmann::json() : nlohmann::json(s.torchCompileError) } });
    return sizes;
}

} // namespace

std::string historyCsv(const std::vector<store::IterationRow>& rows, const std::vector<IterationFigures>& figures)
{
    const auto figuresAt = byIndex(figures);
    std::string out = "iteration,round,proposer,proposer_detail,state,status,category,median_us,gbps,pct_of_copy,"
                      "speedup,predicted_speedup,decision,top_finding_rule,top_finding,runner,gpu_model,gpu,vs_eager,"
                      "vs_torch_compile,pct_of_sol,sol_bound,sol_ceiling\n";
    for (const store::IterationRow& r : rows) {
        const auto f = figuresAt.find(r.index);
        out += std::to_string(r.index) + "," + (r.round ? std::to_string(*r.round) : std::string()) + ","
            + quoted(store::proposedBy(r)) + "," + quoted(r.proposerDetail) + "," + quoted(r.state) + ","
            + quoted(r.status) + "," + quoted(r.category) + "," + number(r.medianUs) + "," + number(r.gbps) + ","
            + number(r.pctOfCopy) + "," + number(r.speedup) + "," + number(r.predictedSpeedup) + ","
            + (r.lastDecision ? std::string(store::decisionName(*r.lastDecision)) : std::string()) + ","
            + quoted(r.topFindingRule) + "," + quoted(r.topFindingMessage)
            + figureFields(f == figuresAt.end() ? nullptr : f->second) + "\n";
    }
    return out;
}

std::string historyJson(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows,
    const std::vector<IterationFigures>& figures)
{
    const auto figuresAt = byIndex(figures);
    nlohmann::json iterations = nlohmann::json::array();
    for (const store::IterationRow& r : rows) {
        nlohmann::json row = { { "iteration", r.index },
            { "round", r.round ? nlohmann::json(*r.round) : nlohmann::json() }, { "proposer", store::proposedBy(r) },
            { "proposer_detail", r.proposerDetail }, { "state", r.state }, { "status", r.status },
            { "category", r.category }, { "median_us", optional(r.medianUs) }, { "gbps", optional(r.gbps) },
            { "pct_of_copy", optional(r.pctOfCopy) }, { "speedup", optional(r.speedup) },
            { "predicted_speedup", optional(r.predictedSpeedup) },
            { "decision", r.lastDecision ? nlohmann::json(store::decisionName(*r.lastDecision)) : nlohmann::json() },
            { "top_finding_rule", r.topFindingRule }, { "top_finding", r.topFindingMessage } };
        if (const auto at = figuresAt.find(r.index); at != figuresAt.end()) {
            const IterationFigures& f = *at->second;
            row["runner"] = f.endpoint.empty() ? nlohmann::json() : nlohmann::json(f.endpoint);
            row["gpu_model"] = f.gpuModel.empty() ? nlohmann::json() : nlohmann::json(f.gpuModel);
            row["gpu"] = f.gpu >= 0 ? nlohmann::json(f.gpu) : nlohmann::json();
            row["vs_eager"] = optional(figures::speedupVsEager(f));
            row["vs_torch_compile"] = optional(figures::speedupVsCompile(f));
            const SizeFigures* first = f.sizes.empty() ? nullptr : &f.sizes.front();
            row["pct_of_sol"] = optional(first ? first->pctOfSol : std::nullopt);
            row["sol_bound"]
                = first && first->solBound ? nlohmann::json(boundName(*first->solBound)) : nlohmann::json();
            const std::string ceiling = ceilingOf(first);
            row["sol_ceiling"] = ceiling.empty() ? nlohmann::json() : nlohmann::json(ceiling);
            if (auto pytorch = pytorchJson(f); !pytorch.empty())
                row["pytorch"] = std::move(pytorch); // per main size, timed in the same job as the candidate
        }
        iterations.push_back(std::move(row));
    }
    const nlohmann::json history = { { "session", session.id }, { "problem", session.problemName },
        { "device", session.device }, { "proposer", session.proposer }, { "status", session.status },
        { "label", session.label }, { "iterations", iterations } };
    return history.dump(2) + "\n";
}

} // namespace kl::history
