#include "core/pool/compile_stage.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kl::pool {

int compileWidth(int usableRunners, unsigned cpuThreads)
{
    const int cpus = cpuThreads == 0 ? 1 : int(cpuThreads);
    return std::max(1, std::min(usableRunners, cpus));
}

int compileWidth(int usableRunners) { return compileWidth(usableRunners, std::thread::hardware_concurrency()); }

void compileConcurrently(int count, int width, const std::function<void(int)>& prepare)
{
    if (width <= 1 || count <= 1) {
        for (int i = 0; i < count; ++i)
            prepare(i);
        return;
    }
    // Each thread takes the next index: the order candidates start in is the order proposed.
    std::atomic<int> next { 0 };
    std::vector<std::thread> threads;
    const int n = std::min(width, count);
    threads.reserve(std::size_t(n));
    for (int t = 0; t < n; ++t)
        threads.emplace_back([&] {
            for (int i = next++; i < count; i = next++)
                prepare(i);
        });
    for (auto& t : threads)
        t.join();
}

int roundCompileWidth(int usableRunners, int candidates, unsigned cpuThreads)
{
    return compileWidth(std::max(usableRunners, candidates), cpuThreads);
}

int roundCompileWidth(int usableRunners, int candidates)
{
    return roundCompileWidth(usableRunners, candidates, std::thread::hardware_concurrency());
}

void TurnOrder::wait(int turn)
{
    std::unique_lock lock(m_mutex);
    m_turned.wait(lock, [&] { return m_next >= turn; });
}

void TurnOrder::pass(int turn)
{
    std::unique_lock lock(m_mutex);
    m_turned.wait(lock, [&] { return m_next >= turn; });
    if (m_next == turn)
        ++m_next;
    m_turned.notify_all();
}

} // namespace kl::pool
