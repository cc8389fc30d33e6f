#include "core/figures/contenders.h"

#include "core/model/number_text.h"
#include "core/store/store.h"

#include <cmath>
#include <cstdio>

namespace kl::figures {

namespace {

// A median or speedup the runner gave, where it is one (finite, above zero).
std::optional<double> positive(std::optional<double> value)
{
    return value && std::isfinite(*value) && *value > 0.0 ? value : std::nullopt;
}

std::optional<double> medianOf(const std::optional<protocol::TimingSummary>& timed)
{
    return timed ? positive(timed->medianUs) : std::nullopt;
}

} // namespace

std::vector<Contenders> contendersOf(const protocol::Timing& timing)
{
    std::vector<Contenders> out;
    for (const protocol::CaseTiming& timedCase : timing.cases) {
        Contenders c;
        c.size = timedCase.label;
        c.eagerUs = medianOf(timedCase.eager);
        c.torchCompileUs = medianOf(timedCase.torchCompile);
        c.speedupVsEager = positive(timedCase.speedupVsEager);
        c.speedupVsCompile = positive(timedCase.speedupVsCompile);
        c.torchCompileError = timedCase.torchCompileError;
        if (c.present())
            out.push_back(std::move(c));
    }
    return out;
}

std::string contendersText(const Contenders& c)
{
    std::string text;
    const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (c.eagerUs)
        add("vs eager " + (c.speedupVsEager ? fixed(*c.speedupVsEager, 2) + "x" : std::string("-")) + " (eager "
            + fixed(*c.eagerUs, 2) + " us)");
    if (c.torchCompileUs)
        add("vs torch.compile " + (c.speedupVsCompile ? fixed(*c.speedupVsCompile, 2) + "x" : std::string("-"))
            + " (torch.compile " + fixed(*c.torchCompileUs, 2) + " us)");
    else if (!c.torchCompileError.empty())
        add("torch.compile not timed: " + c.torchCompileError);
    return text;
}

std::map<int, std::vector<Contenders>> readContenders(const store::Store& store, std::int64_t sessionId)
{
    std::map<int, std::vector<Contenders>> out;
    bool firstTimed = true;
    for (const auto& [index, timing] : store.sessionTimings(sessionId)) {
        auto contenders = contendersOf(timing);
        if (firstTimed && contenders.empty())
            return out; // the runner times contenders in every job of such a problem, or in none
        firstTimed = false;
        if (!contenders.empty())
            out[index] = std::move(contenders);
    }
    return out;
}

} // namespace kl::figures
