#include "core/report/same_problem.h"

namespace kl::report {

std::vector<store::SessionRow> sameProblemSessions(
    const std::vector<store::SessionRow>& all, const store::SessionRecord& of)
{
    std::vector<store::SessionRow> same;
    for (const store::SessionRow& row : all) {
        if (row.session.id == of.id)
            continue;
        if (row.session.problemHash == of.problemHash
            || (!of.problemName.empty() && row.session.problemName == of.problemName))
            same.push_back(row);
    }
    return same;
}

std::string sessionTitle(const store::SessionRecord& session)
{
    std::string title = "session " + std::to_string(session.id) + " (" + session.proposer;
    if (!session.label.empty())
        title += ", \"" + session.label + "\"";
    return title + ")";
}

} // namespace kl::report
