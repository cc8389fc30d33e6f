#include "widgets/session_view.h"

#include <algorithm>

namespace kl::gui {

const store::IterationRow* SessionView::row(int index) const
{
    // Indices count from 1 without gaps in a finished session; search in case of gaps.
    if (index >= 1 && index <= static_cast<int>(rows.size()) && rows[index - 1].index == index)
        return &rows[index - 1];
    const auto it
        = std::find_if(rows.begin(), rows.end(), [index](const store::IterationRow& r) { return r.index == index; });
    return it == rows.end() ? nullptr : &*it;
}

void SessionView::indexCandidates()
{
    firstIterationOf.clear();
    for (const store::IterationRow& r : rows)
        if (r.candidateId)
            firstIterationOf.emplace(*r.candidateId, r.index);
}

int SessionView::iterationOf(std::int64_t candidateId) const
{
    const auto it = firstIterationOf.find(candidateId);
    return it == firstIterationOf.end() ? 0 : it->second;
}

int SessionView::parentIteration(int index) const
{
    const store::IterationRow* r = row(index);
    if (!r || !r->candidateId)
        return 0;
    const auto it = parentOf.find(*r->candidateId);
    if (it == parentOf.end() || !it->second)
        return 0;
    return iterationOf(*it->second);
}

int SessionView::baselineIteration() const
{
    for (const store::IterationRow& r : rows)
        if (r.proposerDetail == "baseline")
            return r.index;
    // No baseline kernel (PyTorch eager was the baseline): the first kernel that passed is what the
    // others are compared with; none when nothing passed.
    for (const store::IterationRow& r : rows)
        if (r.category == "passed")
            return r.index;
    return 0;
}

const figures::IterationFigures* SessionView::figuresOf(int index) const
{
    if (index >= 1 && index <= static_cast<int>(figures.size()) && figures[index - 1].index == index)
        return &figures[index - 1];
    const auto it = std::find_if(
        figures.begin(), figures.end(), [index](const figures::IterationFigures& f) { return f.index == index; });
    return it == figures.end() ? nullptr : &*it;
}

} // namespace kl::gui
