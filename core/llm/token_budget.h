#pragma once
// A token allowance shared by every client of a session (k parallel requests draw from the same
// budget). Once it is spent, clients refuse to send and report "budget-exhausted".
#include "core/exchange/exchange.h"

#include <atomic>
#include <cstdint>

namespace kl {

class TokenBudget {
public:
    explicit TokenBudget(std::int64_t limitTokens);

    std::int64_t limit() const { return m_limit; }
    std::int64_t used() const { return m_used.load(); }
    std::int64_t remaining() const;
    bool exhausted() const { return remaining() <= 0; }
    void record(const Usage& usage);

private:
    const std::int64_t m_limit;
    std::atomic<std::int64_t> m_used { 0 };
};

} // namespace kl
