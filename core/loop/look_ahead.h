#pragma once
// Looking ahead while the GPU works (issue 14): before the loop waits for one of a round's results,
// the proposer names what it would likely propose next if what has arrived were all there is
// (Proposer::anticipate), and those guesses compile on spare threads (compile_ahead.h). The next
// round takes a candidate compiled ahead instead of compiling it. A compile is a pure function of its
// inputs, so no proposal, measurement or decision changes; a wrong guess costs CPU only. No Qt.
#include "core/compile/compiler.h"
#include "core/loop/compile_ahead.h"
#include "core/loop/proposer_briefing.h"
#include "core/loop/tuning_session.h"

#include <memory>
#include <optional>
#include <vector>

namespace kl {

class LookAhead {
public:
    // `width` threads (> 0) compile guesses for `problem` on a device of `limits`, as the loop's own
    // compile step would with `options`; `candidatesPerRound` is the round's k.
    LookAhead(const Problem& problem, const ProposerBriefing& briefing, CompileOptions options, DeviceLimits limits,
        int width, int candidatesPerRound);
    ~LookAhead(); // what still waits is dropped, a compile under way finishes first

    // Round `nextRound`'s likely proposals, with `remaining` rounds left in the budget, guessed from
    // what has arrived this round (`arrived`, in order) and what still runs (`running`, in order; the
    // first is the one the loop waits for now). `incumbent`: the loop's best so far (null before the
    // baseline passed).
    void guess(const Proposer& proposer, int nextRound, int remaining, const Incumbent* incumbent,
        const std::vector<EvaluatedCandidate>& arrived, const std::vector<const EvaluatedCandidate*>& running);
    // The proposal's compile, when it was guessed (waiting for one under way); none: compile it now.
    std::optional<CompiledAhead> take(const Proposal& proposal);
    // The real round's proposals are in: guesses not yet started are dropped (the CPU is theirs now).
    void dropWaiting();
    CompileAhead::Tally tally() const;

private:
    ProposalContext anticipatedContext(int nextRound, int remaining, const Incumbent* incumbent,
        const std::vector<EvaluatedCandidate>& arrived, const std::vector<const EvaluatedCandidate*>& running) const;
    CompiledAhead compile(const Proposal& proposal) const; // what the loop's compile step gives

    const Problem& m_problem;
    const ProposerBriefing& m_briefing;
    const CompileOptions m_options;
    const DeviceLimits m_limits;
    const int m_candidatesPerRound;
    // Last: its threads use the members above and are joined first.
    std::unique_ptr<CompileAhead> m_compiles;
};

} // namespace kl
