#include "cli/review_prompt.h"

#include "cli/table_text.h"
#include "core/model/error.h"
#include "core/report/candidate_changes.h"
#include "core/report/source_diff.h"

#include <iostream>

namespace kl::cli {

ReviewPrompt::ReviewPrompt(std::istream& in, std::ostream& out, std::atomic<bool>* cancel)
    : m_in(in)
    , m_out(out)
    , m_cancel(cancel)
{
}

ReviewDecision ReviewPrompt::review(const Proposal& p, const ProposalContext& ctx)
{
    m_out << "\n=== proposal for round " << ctx.iteration << " from " << p.proposer << " ===\n";
    if (!p.hypothesis.empty())
        m_out << "hypothesis: " << p.hypothesis << "\n";
    if (!p.tunables.empty())
        m_out << "tunables:   " << tunablesText(p.tunables) << "  (best: " << tunablesText(ctx.bestTunables) << ")\n";
    auto changes = report::candidateChanges(ctx.best.source, ctx.bestTunables, p.candidate.source, p.tunables);
    changes.tunables.clear(); // shown above beside the best's
    m_out << report::changesHeaderText(changes);
    const auto diff = report::unifiedDiff(
        ctx.best.source, p.candidate.source, "best/" + ctx.best.fileName, "proposal/" + p.candidate.fileName);
    if (!diff.empty())
        m_out << diff;
    while (true) {
        m_out << "[a]ccept, [r]eject REASON, [s]teer TEXT, [e]dit FILE.cu (replace), [q]uit? " << std::flush;
        std::string line;
        if (!std::getline(m_in, line))
            return { ReviewDecision::Kind::Reject, "no answer (input closed)", {}, std::nullopt, {} };
        const auto space = line.find(' ');
        const std::string verb = line.substr(0, space);
        const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
        if (verb == "a" || verb == "accept")
            return { ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} };
        if ((verb == "r" || verb == "reject") && !rest.empty())
            return { ReviewDecision::Kind::Reject, rest, {}, std::nullopt, {} };
        if ((verb == "s" || verb == "steer") && !rest.empty())
            return { ReviewDecision::Kind::Steer, {}, rest, std::nullopt, {} };
        if ((verb == "e" || verb == "edit") && !rest.empty()) {
            try {
                auto c = loadCandidate(rest);
                return { ReviewDecision::Kind::Replace, "replaced with " + rest, {}, c, p.tunables };
            } catch (const Error& e) {
                m_out << "cannot use " << rest << ": " << e.what() << "\n";
                continue;
            }
        }
        if (verb == "q" || verb == "quit") {
            if (m_cancel)
                m_cancel->store(true);
            return { ReviewDecision::Kind::Reject, "the engineer stopped the session", {}, std::nullopt, {} };
        }
        m_out << "reject and steer need text, edit needs a file\n";
    }
}

} // namespace kl::cli
