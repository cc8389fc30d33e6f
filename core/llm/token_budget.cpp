#include "core/llm/token_budget.h"

#include <algorithm>

namespace kl {

TokenBudget::TokenBudget(std::int64_t limitTokens)
    : m_limit(std::max<std::int64_t>(0, limitTokens))
{
}

std::int64_t TokenBudget::remaining() const { return std::max<std::int64_t>(0, m_limit - m_used.load()); }

void TokenBudget::record(const Usage& usage) { m_used += usage.total(); }

} // namespace kl
