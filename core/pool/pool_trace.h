#pragma once
// $KL_LOOP_TRACE=1: one stderr line per step of the loop and the pool ("[trace] 1234.5 ms what"),
// milliseconds since the first traced step of the process, to see where a session's wall time goes
// around the runner's jobs (docs/runner-pool.md, "Where the time goes"). Off by default: one test of
// a flag read once. No Qt.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kl::pool {

inline bool traceEnabled()
{
    static const bool enabled = [] {
        const char* text = std::getenv("KL_LOOP_TRACE");
        return text && *text && std::string(text) != "0";
    }();
    return enabled;
}

inline void trace(const std::string& what)
{
    if (!traceEnabled())
        return;
    static const auto origin = std::chrono::steady_clock::now();
    static std::mutex mutex;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - origin).count();
    std::lock_guard lock(mutex);
    std::fprintf(stderr, "[trace] %9.1f ms %s\n", ms, what.c_str());
}

} // namespace kl::pool
