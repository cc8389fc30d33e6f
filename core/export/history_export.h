#pragma once
// A session's history as a file: the `history` columns, one row per iteration, as CSV (RFC 4180)
// or JSON, for spreadsheets and notebooks. With the session's figures (readFigures) each row also
// says which runner and GPU measured it and, for a PyTorch reference, its speedups over eager and
// torch.compile, and its first size's % of speed of light, which bound binds and the compute ceiling
// with why ("FP32 CUDA cores: not a matrix product") (pct_of_sol, sol_bound, sol_ceiling); without them
// those columns are empty.
#include "core/figures/iteration_figures.h"
#include "core/store/records.h"

#include <string>
#include <vector>

namespace kl::history {

std::string historyCsv(
    const std::vector<store::IterationRow>& rows, const std::vector<figures::IterationFigures>& figures = {});
// The JSON document's text, indented by two, with a final newline.
std::string historyJson(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows,
    const std::vector<figures::IterationFigures>& figures = {});

} // namespace kl::history
