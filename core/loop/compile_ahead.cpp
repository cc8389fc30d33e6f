#include "core/loop/compile_ahead.h"

#include <algorithm>

namespace kl {

namespace {
// Guesses nobody took are dropped past this many (each holds a cubin and its PTX).
constexpr std::size_t kKeptGuesses = 64;
} // namespace

CompileAhead::CompileAhead(int width)
    : m_width(std::max(0, width))
{
}

CompileAhead::~CompileAhead()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_waiting.clear();
    }
    m_wake.notify_all();
    for (auto& t : m_threads)
        t.join();
}

int CompileAhead::widthFor(unsigned cpuThreads) { return cpuThreads < 2 ? 0 : std::clamp(int(cpuThreads) / 4, 1, 8); }

int CompileAhead::widthForThisHost() { return widthFor(std::thread::hardware_concurrency()); }

void CompileAhead::anticipate(std::vector<std::pair<std::string, Work>> likely)
{
    if (m_width == 0)
        return;
    {
        std::lock_guard lock(m_mutex);
        m_waiting.clear();
        for (auto& item : likely)
            if (!m_started.count(item.first))
                m_waiting.push_back(std::move(item));
        while (int(m_threads.size()) < m_width && m_threads.size() < m_waiting.size())
            m_threads.emplace_back([this] { work(); });
    }
    m_wake.notify_all();
}

void CompileAhead::dropWaiting()
{
    std::lock_guard lock(m_mutex);
    m_waiting.clear();
}

std::optional<CompiledAhead> CompileAhead::take(const std::string& key)
{
    Result result;
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_started.find(key);
        if (it == m_started.end())
            return std::nullopt;
        result = it->second;
        m_started.erase(it);
        m_startOrder.erase(std::find(m_startOrder.begin(), m_startOrder.end(), key));
    }
    auto compiled = result.get(); // waits while a worker still compiles it
    if (compiled) {
        std::lock_guard lock(m_mutex);
        ++m_tally.taken;
    }
    return compiled;
}

CompileAhead::Tally CompileAhead::tally() const
{
    std::lock_guard lock(m_mutex);
    return m_tally;
}

void CompileAhead::work()
{
    for (;;) {
        std::pair<std::string, Work> item;
        std::promise<std::optional<CompiledAhead>> promise;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || !m_waiting.empty(); });
            if (m_stopping)
                return;
            item = std::move(m_waiting.front());
            m_waiting.pop_front();
            if (m_started.count(item.first))
                continue; // anticipated twice before it started
            m_started.emplace(item.first, promise.get_future().share());
            m_startOrder.push_back(item.first);
            // Only finished guesses are dropped (one under way may be taken any moment); the rest waits.
            while (m_startOrder.size() > kKeptGuesses) {
                const auto& oldest = m_startOrder.front();
                const auto& started = m_started.at(oldest);
                if (started.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                    break;
                m_started.erase(oldest);
                m_startOrder.pop_front();
            }
        }
        std::optional<CompiledAhead> compiled;
        try {
            compiled = item.second();
        } catch (...) {
            // Not compiled ahead: the round compiles it itself and reports what went wrong there.
        }
        if (compiled) {
            std::lock_guard lock(m_mutex);
            ++m_tally.compiled;
        }
        promise.set_value(std::move(compiled));
    }
}

} // namespace kl
