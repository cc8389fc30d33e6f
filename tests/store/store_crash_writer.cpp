// A store writer for the crash test: records iterations in a loop and prints each index on
// stdout, flushed, once finishIteration (the COMMIT) has returned. The test SIGKILLs it at
// random moments. Usage: store_crash_writer DB [MAX_ITERATIONS]
#include "core/model/error.h"
#include "core/store/store.h"
#include "store_fixtures.h"

#include <cstdio>
#include <cstdlib>

using namespace kl::store;
namespace fx = kl::store::fixtures;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: store_crash_writer DB [MAX_ITERATIONS]\n");
        return 2;
    }
    const int limit = argc > 2 ? std::atoi(argv[2]) : 1000000;
    try {
        auto store = Store::open(argv[1]);
        const auto sessions = store.listSessions();
        std::int64_t session = 0;
        if (sessions.empty()) {
            SessionRecord record;
            record.problemHash = store.addProblem(fx::problem());
            record.device = "NVIDIA H200 #0";
            record.proposer = "tuner";
            session = store.createSession(record);
        } else {
            session = sessions.front().session.id;
        }
        std::printf("session %lld\n", static_cast<long long>(session));
        std::fflush(stdout);

        const auto rows = store.listIterations(session);
        std::optional<std::int64_t> parent = rows.empty() ? std::nullopt : rows.back().candidateId;
        for (int n = 0; n < limit; ++n) {
            const auto ref = store.beginIteration(session);
            const auto candidate = store.addCandidate(session, fx::candidate(ref.index, parent));
            store.setCandidate(ref, candidate);
            store.recordExchange(ref, fx::exchange(ref.index));
            store.recordResult(ref, fx::passedResult(ref.index));
            store.recordFindings(ref, fx::findings(ref.index));
            DecisionRecord decision;
            decision.kind = DecisionRecord::Kind::AutoKeep;
            decision.reason = "iteration " + std::to_string(ref.index);
            store.recordDecision(ref, decision);
            store.finishIteration(ref);
            std::printf("%d\n", ref.index);
            std::fflush(stdout);
            parent = candidate;
        }
    } catch (const kl::Error& error) {
        std::fprintf(stderr, "%s: %s\n", error.category().c_str(), error.message().c_str());
        return 1;
    }
    return 0;
}
