#pragma once
// The next round's likely candidates compile while the GPU measures this round's (issue 14). A round
// cannot be proposed before the one before it is decided (its proposals read that round's results),
// so with fresh candidates every round began with NVRTC + ptxas while the GPU waited (the real loop
// ran well under the runner's own rate: docs/measurements.md, 2026-12-03 08:42Z). Now, while a round's jobs run, the
// proposer names what it would likely propose next from what has arrived so far (Proposer::anticipate), those compile
// here on spare CPU threads, and when the real proposals come the loop takes whatever was compiled (or is compiling)
// ahead. A compile is a pure function of its inputs, so a candidate compiled ahead is the candidate compiled on time:
// no proposal, measurement or decision changes; a wrong guess costs CPU only. No Qt.
#include "core/compile/static_report.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kl {

// One candidate compiled ahead: what TuningSession's compile step would have produced. Its listings
// (nvdisasm, slower than the compile) are made once it is proposed, as for any other: made for every
// guess they doubled a guess's cost and kept the workers from the next guesses.
struct CompiledAhead {
    std::optional<StaticReport> report; // none: the candidate was refused before compiling
    std::string errorCategory; // why, as kl::Error said (e.g. "plan.constraint")
    std::string errorDetail;
    double millis = 0.0; // the compile, on the worker
};

class CompileAhead {
public:
    using Work = std::function<CompiledAhead()>;

    // Up to `width` candidates compile at once (threads start with the first guess); 0: none ever does.
    explicit CompileAhead(int width);
    ~CompileAhead(); // what still waits is dropped; what is under way finishes first

    // The likely candidates, the most likely first, by key: replaces the list still waiting; a key
    // compiled or under way is not compiled again.
    void anticipate(std::vector<std::pair<std::string, Work>> likely);
    // Drops the waiting list: the real round's own compiles get the CPU.
    void dropWaiting();
    // The candidate compiled ahead under `key` (waiting while it is under way), handed out once;
    // nullopt when it never started (or its work failed): the caller compiles it.
    std::optional<CompiledAhead> take(const std::string& key);

    struct Tally {
        int compiled = 0; // finished on a worker
        int taken = 0; // of those (or under way), handed to the round that proposed them
    };
    Tally tally() const;

    // How many threads compile ahead on a host with `cpuThreads` (0: unknown): a quarter of them (at
    // least one where there are two), leaving the rest to the round's own compiles and listings, the
    // runner and the loop (half of them guessing slowed the round's compiles more than their hits
    // saved: docs/measurements.md, 2026-12-03 08:42Z); at most 8; none on a single thread.
    static int widthFor(unsigned cpuThreads);
    static int widthForThisHost();

private:
    void work();
    using Result = std::shared_future<std::optional<CompiledAhead>>;
    const int m_width;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::pair<std::string, Work>> m_waiting;
    std::map<std::string, Result> m_started; // under way or finished, not yet taken
    std::deque<std::string> m_startOrder; // oldest first, to bound m_started
    std::vector<std::thread> m_threads;
    bool m_stopping = false;
    Tally m_tally;
};

} // namespace kl
