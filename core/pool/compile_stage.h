#pragma once
// How the k candidates of a round reach the pool. Each is compiled and statically analysed here (CPU
// work in this process, ~250 ms on the H200 host) and queued on the pool as soon as it is ready. One
// compile at a time starves a pool: with 8 GPUs the last runner waits 8 x 250 ms for its job while the
// others sit idle after theirs, and 8 GPUs give ~2.6x one GPU (docs/measurements.md, "pool
// simulation"). Compiling one candidate per usable runner at once (up to the CPU's threads) keeps
// every GPU fed. No Qt.
#include <condition_variable>
#include <functional>
#include <mutex>

namespace kl::pool {

// How many candidates to compile at once for a pool of `usableRunners` on a host with `cpuThreads`
// (0: unknown, taken as one): at least 1, at most both.
int compileWidth(int usableRunners, unsigned cpuThreads);
int compileWidth(int usableRunners); // on this host (std::thread::hardware_concurrency)

// Calls prepare(i) for every i in [0, count) on up to `width` threads, started in index order (the
// first candidates of a round reach the pool first); returns when every call has returned. A width
// of 1 calls them one after another on the calling thread. prepare must not throw.
void compileConcurrently(int count, int width, const std::function<void(int)>& prepare);

// How wide a round of `candidates` compiles for a pool of `usableRunners`: the whole round at once (at
// least one per runner), at most the CPU's threads, so that a round's compiles (~250 ms each with
// NVRTC on the H200 host) keep up with a runner that measures a candidate in less (issue 14).
int roundCompileWidth(int usableRunners, int candidates, unsigned cpuThreads);
int roundCompileWidth(int usableRunners, int candidates); // on this host

// Candidates compiled side by side still reach the pool in the order proposed, so that a runner
// measures them in the order it did when they compiled one after another: `wait(i)` blocks until
// every turn before i has passed, `pass(i)` (after waiting for it) lets i + 1 go. Every turn must
// pass, queued or not.
class TurnOrder {
public:
    void wait(int turn);
    void pass(int turn);

private:
    std::mutex m_mutex;
    std::condition_variable m_turned;
    int m_next = 0;
};

} // namespace kl::pool
