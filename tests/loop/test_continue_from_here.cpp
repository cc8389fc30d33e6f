// "Continue from here" as its own value (core/loop/continue_from_here.h), without a loop: a measured
// iteration becomes the incumbent whole (its timings are the bar); one that was not measured becomes
// only the base the proposer edits and the parent in the tree; an iteration the loop did not record,
// or none asked, changes nothing; the last request before a round wins and is used once.
#include "core/loop/continue_from_here.h"

#include <QtTest/QTest>

using namespace kl;

namespace {

EvaluatedCandidate evaluated(int index, const std::string& category, bool timed)
{
    EvaluatedCandidate e;
    e.proposal.candidate.source = "// kernel " + std::to_string(index);
    e.proposal.tunables = { { "VEC", index } };
    e.outcome.index = index;
    e.outcome.category = category;
    e.outcome.candidateId = 100 + index;
    e.outcome.sourceHash = "hash" + std::to_string(index);
    e.outcome.tunables = e.proposal.tunables;
    e.outcome.speedup = timed ? std::optional<double>(1.0 + index / 10.0) : std::nullopt;
    if (timed)
        e.timings.push_back({ "8192x4096", { 40.0, 41.0 }, 72.0 });
    return e;
}

Incumbent incumbentOf(const EvaluatedCandidate& e) { return { e.proposal, e.outcome, e.timings, e.statics }; }

} // namespace

class TestContinueFromHere : public QObject {
    Q_OBJECT

private slots:
    void aMeasuredIterationBecomesTheIncumbentWhole()
    {
        ContinueFromHere here;
        const auto best = evaluated(4, "passed", true);
        here.remember(best);
        here.remember(evaluated(2, "passed", true));
        Incumbent incumbent = incumbentOf(best);
        here.ask(2);
        const auto previous = here.adopt(incumbent);
        QCOMPARE(previous, std::optional<int>(4));
        QCOMPARE(incumbent.outcome.index, 2);
        QCOMPARE(incumbent.outcome.speedup, std::optional<double>(1.2));
        QCOMPARE(incumbent.timings.size(), std::size_t(1));
        QCOMPARE(incumbent.proposal.candidate.source, std::string("// kernel 2"));
        // Used once: the next round keeps it.
        QVERIFY(!here.adopt(incumbent));
        QCOMPARE(incumbent.outcome.index, 2);
    }

    void aFailedIterationIsOnlyTheBase()
    {
        ContinueFromHere here;
        const auto best = evaluated(4, "passed", true);
        here.remember(best);
        here.remember(evaluated(5, "wrong-result", false));
        Incumbent incumbent = incumbentOf(best);
        here.ask(5);
        QCOMPARE(here.adopt(incumbent), std::optional<int>(4));
        // The source, tunables and parent are iteration 5's; the bar (speedup, timings) stays the best's.
        QCOMPARE(incumbent.outcome.index, 5);
        QCOMPARE(incumbent.outcome.candidateId, std::optional<std::int64_t>(105));
        QCOMPARE(incumbent.outcome.sourceHash, std::string("hash5"));
        QCOMPARE(incumbent.proposal.candidate.source, std::string("// kernel 5"));
        QCOMPARE(incumbent.outcome.speedup, std::optional<double>(1.4));
        QCOMPARE(incumbent.outcome.category, std::string("passed"));
        QCOMPARE(incumbent.timings.size(), std::size_t(1));
    }

    void unknownOrNoRequestChangesNothing()
    {
        ContinueFromHere here;
        const auto best = evaluated(4, "passed", true);
        here.remember(best);
        auto unstored = evaluated(6, "passed", true);
        unstored.outcome.candidateId.reset(); // no candidate row: nothing to return to
        here.remember(unstored);
        Incumbent incumbent = incumbentOf(best);
        QVERIFY(!here.adopt(incumbent)); // none asked
        here.ask(9); // never recorded
        QVERIFY(!here.adopt(incumbent));
        here.ask(6);
        QVERIFY(!here.adopt(incumbent));
        here.ask(0); // not an iteration: ignored
        here.ask(4); // the incumbent itself: nothing changes
        QVERIFY(!here.adopt(incumbent));
        QCOMPARE(incumbent.outcome.index, 4);
    }

    void theLastRequestBeforeARoundWins()
    {
        ContinueFromHere here;
        for (int i = 1; i <= 3; ++i)
            here.remember(evaluated(i, "passed", true));
        Incumbent incumbent = incumbentOf(evaluated(3, "passed", true));
        here.ask(1);
        here.ask(2);
        QCOMPARE(here.adopt(incumbent), std::optional<int>(3));
        QCOMPARE(incumbent.outcome.index, 2);
    }
};

QTEST_GUILESS_MAIN(TestContinueFromHere)
#include "test_continue_from_here.moc"
