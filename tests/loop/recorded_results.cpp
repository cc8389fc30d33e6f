#include "tests/loop/recorded_results.h"

#include "core/model/hash.h"
#include "core/protocol/case_speed_of_light.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <fstream>
#include <optional>
#include <stdexcept>

namespace kl::test {

using namespace kl::protocol;

namespace {

bool endsWith(const std::string& text, const std::string& tail)
{
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// A recorded reply becomes a result line again, so that the protocol's own reader decodes it.
EvaluateResult decode(const nlohmann::json& status, const nlohmann::json& category, const nlohmann::json& device,
    const nlohmann::json& timing, const nlohmann::json& profile)
{
    nlohmann::json line { { "v", kProtocolVersion }, { "type", "result" }, { "id", "recorded" }, { "status", status },
        { "category", category }, { "detail", "" } };
    for (const auto& [key, value] : { std::pair { "device", &device }, { "timing", &timing }, { "profile", &profile } })
        if (value->is_object())
            line[key] = *value;
    return line.get<EvaluateResult>();
}

// The first session of a .klsession file: its device and its results in iteration order, read
// through the store opened read-only (never written; an older schema is migrated in memory only).
// A result recorded without a device has the session's.
void readSession(const std::string& path, DeviceDescription& device, std::vector<EvaluateResult>& results)
{
    const auto store = store::Store::open(path, { .readOnly = true });
    std::optional<std::int64_t> first;
    for (const auto& row : store.listSessions())
        if (!first || row.session.id < *first)
            first = row.session.id;
    if (!first)
        return;
    const auto session = store.session(*first);
    for (const auto& row : store.listIterations(*first)) {
        auto stored = store.iteration(*first, row.index);
        if (!stored || !stored->result)
            continue;
        if (!stored->result->device && session)
            stored->result->device = session->deviceInfo;
        auto result = store::storedReply(*stored->result);
        if (!result)
            throw std::runtime_error(
                path + ": iteration " + std::to_string(row.index) + "'s result is not a protocol reply");
        if (results.empty() && result->device)
            device = *result->device;
        results.push_back(std::move(*result));
    }
}

// The recorded case that answers a requested one: the same label, else the one at the same place.
const CaseTiming* recordedCase(const EvaluateResult& result, const std::string& label, std::size_t place)
{
    if (!result.timing || result.timing->cases.empty())
        return nullptr;
    for (const auto& c : result.timing->cases)
        if (c.label == label)
            return &c;
    return &result.timing->cases[place % result.timing->cases.size()];
}

// The recorded profile of the set asked for, relabelled to the request's profiled case; without
// one, what the real runner says when it cannot profile (a runner built without CUPTI).
Profile profileFor(const EvaluateResult& recorded, const EvaluateRequest& request)
{
    const auto set = request.options.profile;
    if (!recorded.profile || recorded.profile->status != ProfileStatus::Ok || recorded.profile->metricSet != set) {
        Profile none;
        none.status = ProfileStatus::Unavailable;
        none.reason = "not-built";
        none.metricSet = set;
        return none;
    }
    Profile profile = *recorded.profile;
    const Case* profiled = nullptr;
    for (const auto& c : request.cases)
        if (c.timed && !c.programs.candidate.launches.empty() && !profiled)
            profiled = &c;
    if (profiled)
        for (auto& k : profile.kernels) {
            k.caseLabel = profiled->label;
            const auto& launches = profiled->programs.candidate.launches;
            bool launched = false;
            for (const auto& l : launches)
                launched = launched || l.kernel == k.kernel;
            if (!launched)
                k.kernel = launches.front().kernel;
        }
    return profile;
}

} // namespace

RecordedResults RecordedResults::load(const std::string& path)
{
    RecordedResults recorded;
    std::vector<EvaluateResult> all;
    if (endsWith(path, ".json")) {
        std::ifstream in(path);
        const auto reply = nlohmann::json::parse(in, nullptr, false);
        if (!reply.is_object())
            throw std::runtime_error(path + ": not a recorded reply (JSON object)");
        all.push_back(decode(reply.value("status", nlohmann::json("ok")),
            reply.value("category", nlohmann::json("passed")), reply.value("device", nlohmann::json()),
            reply.value("timing", nlohmann::json()), reply.value("profile", nlohmann::json())));
        if (all.front().device)
            recorded.m_device = *all.front().device;
    } else {
        readSession(path, recorded.m_device, all);
    }
    if (all.empty() || recorded.m_device.name.empty())
        throw std::runtime_error(path + ": no recorded result with a device");
    recorded.m_results.push_back(all.front());
    for (std::size_t i = 1; i < all.size(); ++i)
        if (all[i].category() == Category::Passed && all[i].timing && !all[i].timing->cases.empty())
            recorded.m_results.push_back(all[i]);
    if (!recorded.m_results.front().timing || recorded.m_results.front().timing->cases.empty())
        throw std::runtime_error(path + ": iteration 1 has no recorded timing");
    return recorded;
}

const EvaluateResult& RecordedResults::resultFor(const std::string& cubin, bool baseline)
{
    const auto hash = contentHash(cubin);
    if (const auto given = m_given.find(hash); given != m_given.end())
        return m_results[given->second];
    std::size_t index = 0;
    if (!baseline && m_results.size() > 1) {
        index = m_next;
        m_next = m_next + 1 < m_results.size() ? m_next + 1 : 1;
    }
    m_given[hash] = index;
    return m_results[index];
}

EvaluateResult RecordedResults::answer(const EvaluateRequest& request, const DeviceDescription& device)
{
    const auto& modules = request.modules;
    // The baseline first: without a baseline module, the first job is the baseline's.
    const EvaluateResult* baseline = nullptr;
    if (modules.baseline)
        baseline = &resultFor(modules.baseline->cubin, true);
    else if (m_given.empty())
        resultFor(modules.candidate.cubin, true);
    const EvaluateResult& candidate = resultFor(modules.candidate.cubin, false);
    const bool ownBaseline = modules.baseline && modules.baseline->cubin == modules.candidate.cubin;

    EvaluateResult r;
    r.header.id = request.id;
    r.header.category = Category::Passed;
    r.device = device;
    r.verification = Verification { true, {} };
    Timing timing;
    timing.smClockMhz = candidate.timing->smClockMhz;
    timing.temperatureC = candidate.timing->temperatureC;
    timing.repetitions = candidate.timing->repetitions;
    std::size_t place = 0;
    for (const auto& c : request.cases) {
        if (!c.timed)
            continue;
        const CaseTiming& measured = *recordedCase(candidate, c.label, place);
        CaseTiming ct;
        ct.label = c.label;
        ct.bytes = c.bytes;
        ct.flops = c.flops;
        ct.candidate = measured.candidate;
        // The baseline as timed in the same recorded job; else the baseline cubin's own recorded time.
        if (modules.baseline) {
            if (measured.baseline)
                ct.baseline = measured.baseline;
            else if (const CaseTiming* own = recordedCase(*baseline, c.label, place); own && !ownBaseline)
                ct.baseline = own->candidate;
            else
                ct.baseline = measured.candidate;
        }
        ct.copy = measured.copy;
        ct.copySource = measured.copySource;
        ct.gbps = c.bytes / ct.candidate.medianUs / 1e3;
        ct.tflops = c.flops / ct.candidate.medianUs / 1e6;
        // A copy of the same bytes: its time over the candidate's is the bandwidth's share of the copy's.
        ct.pctOfCopy
            = ct.copy ? 100.0 * ct.copy->medianUs / ct.candidate.medianUs : 100.0 * ct.gbps / device.copyBandwidthGbps;
        if (ct.baseline)
            ct.speedupVsBaseline = ct.baseline->medianUs / ct.candidate.medianUs;
        ct.compute = c.compute; // speed of light as the runner computes it, from the recorded figures
        ct.computeReason = c.computeReason;
        protocol::addSpeedOfLight(ct, device, timing.smClockMhz.value_or(device.smClockMhz));
        timing.cases.push_back(std::move(ct));
        ++place;
    }
    r.timing = std::move(timing);
    if (request.options.profile != MetricSet::None)
        r.profile = profileFor(candidate, request);
    return r;
}

} // namespace kl::test
