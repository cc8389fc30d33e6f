#include "core/figures/contenders.h"

#include "core/store/store.h"

#include <cmath>
#include <cstdio>

namespace kl::figures {

namespace {

std::optional<double> positive(const nlohmann::json& object, const char* key)
{
    if (!object.is_object())
        return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number())
        return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) && v > 0.0 ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> medianOf(const nlohmann::json& timedCase, const char* key)
{
    const auto it = timedCase.find(key);
    return it == timedCase.end() ? std::nullopt : positive(*it, "median_us");
}

std::string fixed(double v, int decimals)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

} // namespace

std::vector<Contenders> contendersOf(const nlohmann::json& timing)
{
    std::vector<Contenders> out;
    if (!timing.is_object() || !timing.contains("cases") || !timing["cases"].is_array())
        return out;
    for (const nlohmann::json& timedCase : timing["cases"]) {
        if (!timedCase.is_object())
            continue;
        Contenders c;
        const auto label = timedCase.find("label");
        c.size = label != timedCase.end() && label->is_string() ? label->get<std::string>() : std::string();
        c.eagerUs = medianOf(timedCase, "eager");
        c.torchCompileUs = medianOf(timedCase, "torch_compile");
        c.speedupVsEager = positive(timedCase, "speedup_vs_eager");
        c.speedupVsCompile = positive(timedCase, "speedup_vs_compile");
        const auto error = timedCase.find("torch_compile_error");
        if (error != timedCase.end() && error->is_string())
            c.torchCompileError = error->get<std::string>();
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
