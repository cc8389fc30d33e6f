// A stand-in for kernelloop-runner at the process boundary, for testing the loop without a GPU.
// It speaks protocol v1 through the real message code and times nothing. By default it makes its
// numbers up: a "Model GPU", and a candidate's "time" a deterministic function of its cubin (so
// different tunables give different, repeatable times), with small seeded noise on the samples.
//
// With KL_MODEL_RUNNER_RECORDED=FILE it replays what the real runner measured on an NVIDIA H200
// instead (tests/loop/recorded_results.h): FILE is a recorded session (resources/sessions/
// layernorm_gelu-h200.klsession, read-only) or one recorded reply (tests/fixtures/findings/*-h200.json).
// Describe answers the recorded device (name, SMs, clocks, copy bandwidth); each evaluate answers the
// recorded timing (candidate, baseline and copy summaries with their samples; speed of light computed from
// them as the runner does) and, for the metric set
// asked, the recorded profile (else "unavailable", as a runner without CUPTI). The baseline's cubin
// gets iteration 1's result and each new cubin the next passed iteration's, in order; id, case labels
// and bytes are the request's. Every fault knob below works the same in both modes
// (KL_MODEL_RUNNER_IMPROVING only chooses made-up times, so it has no effect while replaying), and
// KL_MODEL_RUNNER_METRICS sets counters over either profile.
// The real runner is tested by the GPU suites.
#include "core/model/hash.h"
#include "core/protocol/messages.h"
#include "core/protocol/pc_sampling_json.h"
#include "core/protocol/profile_policy.h"
#include "tests/loop/recorded_results.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace kl::protocol;

namespace {

// With KL_MODEL_RUNNER_IMPROVING set, every cubin not seen before is 10% faster than the one
// before it, so every new candidate wins: for tests of what happens after a win.
std::map<std::string, double> g_improving;

// With KL_MODEL_RUNNER_FLAT set, every cubin takes the same time: a tuner that can gain nothing.
double modelUs(const std::string& cubin)
{
    if (std::getenv("KL_MODEL_RUNNER_FLAT"))
        return 100.0;
    const auto h = kl::contentHash(cubin);
    if (std::getenv("KL_MODEL_RUNNER_IMPROVING")) {
        if (!g_improving.count(h))
            g_improving[h] = 100.0 * std::pow(0.9, double(g_improving.size()));
        return g_improving[h];
    }
    return 40.0 + double(std::stoull(h.substr(0, 8), nullptr, 16) % 1000) / 10.0; // 40..140 us
}

// With KL_MODEL_RUNNER_DIE_ONCE="SIGNAL:MARKER", the first job of a candidate other than the baseline
// (while MARKER does not exist) reports progress in "time", creates MARKER and dies by SIGNAL: 9 as a
// runner killed from outside, 11 as one a candidate crashed.
void dieOnceIfAsked(const EvaluateRequest& e)
{
    const char* spec = std::getenv("KL_MODEL_RUNNER_DIE_ONCE");
    if (!spec || !e.modules.baseline || e.modules.baseline->cubin == e.modules.candidate.cubin)
        return;
    const std::string text = spec;
    const auto colon = text.find(':');
    const auto marker = text.substr(colon + 1);
    if (std::ifstream(marker))
        return;
    std::ofstream(marker) << "died\n";
    std::cout << toLine(Progress { e.id, "time", 1, 3 }) << std::flush;
    std::raise(std::stoi(text.substr(0, colon)));
}

// With KL_MODEL_RUNNER_PC_SAMPLING=FILE (a recorded reply, tests/fixtures/lines), a job that asks for
// PC sampling gets that reply's "pc_sampling" value, as the real runner's line phase would answer.
std::optional<kl::lines::PcSampling> recordedSampling()
{
    const char* file = std::getenv("KL_MODEL_RUNNER_PC_SAMPLING");
    if (!file || !*file)
        return std::nullopt;
    std::ifstream in(file);
    const auto reply = nlohmann::json::parse(in, nullptr, false);
    if (!reply.is_object() || !reply.contains("pc_sampling"))
        return std::nullopt;
    return kl::protocol::pcSamplingFromJson(reply["pc_sampling"]); // a malformed file fails the test at once
}

// With KL_MODEL_RUNNER_LOG=FILE, each evaluate request appends one line to FILE, as it arrives:
// "evaluate id=ID device=N candidate=HASH baseline=HASH|-", the hashes contentHash of the cubins the
// runner received (a test checks that what ran is what the engineer edited). Unset: no file.
void logRequest(const EvaluateRequest& e, int device)
{
    const char* file = std::getenv("KL_MODEL_RUNNER_LOG");
    if (!file || !*file)
        return;
    std::ofstream(file, std::ios::app) << "evaluate id=" << e.id << " device=" << device
                                       << " candidate=" << kl::contentHash(e.modules.candidate.cubin) << " baseline="
                                       << (e.modules.baseline ? kl::contentHash(e.modules.baseline->cubin) : "-")
                                       << "\n";
}

// Per-GPU behaviour for pool tests, chosen by --device N (a pool gives each runner its own index):
//   KL_MODEL_RUNNER_KILL_DEVICE=N        every job on GPU N ends in SIGKILL (as a user's kill -9) after "load"
//   KL_MODEL_RUNNER_HANG_DEVICE=N        jobs on GPU N never answer and report no progress
//   KL_MODEL_RUNNER_PROTOCOL_DEVICE=N:P  GPU N's runner says hello in protocol P
//   KL_MODEL_RUNNER_NAME_DEVICE=N:NAME   GPU N is a NAME (another model)
bool forDevice(const char* variable, int device, std::string* rest = nullptr)
{
    const char* spec = std::getenv(variable);
    if (!spec || !*spec)
        return false;
    const std::string text = spec;
    const auto colon = text.find(':');
    if (std::stoi(text.substr(0, colon)) != device)
        return false;
    if (rest)
        *rest = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    return true;
}

// The NAME=VALUE items of an environment variable "NAME=VALUE,NAME=VALUE", in order; none when unset.
std::vector<std::pair<std::string, std::string>> namedValues(const char* variable)
{
    std::vector<std::pair<std::string, std::string>> items;
    const char* spec = std::getenv(variable);
    const std::string text = spec ? spec : "";
    for (std::size_t at = 0; at < text.size();) {
        auto end = text.find(',', at);
        if (end == std::string::npos)
            end = text.size();
        const auto item = text.substr(at, end - at);
        at = end + 1;
        if (const auto eq = item.find('='); eq != std::string::npos)
            items.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    return items;
}

// KL_MODEL_RUNNER_PHASE_MS="verify=70,time=340,profile=185": each job spends that long in each phase
// (profile only when the job profiles), announced by a progress line as the real runner does: the
// pool simulation (bench/pool) runs GPUs of the H200's measured per-phase latencies.
void phaseLatencies(const EvaluateRequest& e)
{
    for (const auto& [phase, ms] : namedValues("KL_MODEL_RUNNER_PHASE_MS")) {
        if (phase == "profile" && e.options.profile == MetricSet::None)
            continue;
        if (phase == "time" && !e.options.time)
            continue;
        std::cout << toLine(Progress { e.id, phase, 0, 1 }) << std::flush;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(ms)));
    }
}

TimingSummary summary(double median, std::mt19937_64& rng)
{
    TimingSummary t;
    std::normal_distribution<double> noise(0.0, median * 0.003);
    for (int i = 0; i < 100; ++i)
        t.samplesUs.push_back(median + noise(rng));
    t.medianUs = t.p20Us = t.p80Us = t.minUs = t.meanUs = median;
    t.reps = 100;
    t.cv = 0.003;
    return t;
}

// The made-up answer: the candidate's and the baseline's times from their cubins (modelUs), PyTorch
// eager at 150 us for a problem whose reference is PyTorch, and for
// the stalls metric set fixed ratios, so that findings and prompts name a primary stall.
EvaluateResult madeUpAnswer(const EvaluateRequest& e, const DeviceDescription& device)
{
    EvaluateResult r;
    r.header.id = e.id;
    r.header.category = Category::Passed;
    r.device = device;
    r.verification = Verification { true, {} };
    std::mt19937_64 rng(e.options.seed);
    Timing timing;
    timing.smClockMhz = 1980;
    for (const auto& c : e.cases) {
        if (!c.timed)
            continue;
        CaseTiming ct;
        ct.label = c.label;
        ct.bytes = c.bytes;
        if (e.modules.baseline) // first, so that it is the first cubin an improving model sees
            ct.baseline = summary(modelUs(e.modules.baseline->cubin), rng);
        ct.candidate = summary(modelUs(e.modules.candidate.cubin), rng);
        ct.gbps = c.bytes / ct.candidate.medianUs / 1e3;
        ct.pctOfCopy = 100.0 * ct.gbps / device.copyBandwidthGbps;
        if (ct.baseline)
            ct.speedupVsBaseline = ct.baseline->medianUs / ct.candidate.medianUs;
        if (e.pythonReference) { // PyTorch eager as a contender, as the real runner's worker times it
            ct.eager = summary(150.0, rng);
            ct.speedupVsEager = ct.eager->medianUs / ct.candidate.medianUs;
            // KL_MODEL_RUNNER_TORCH_COMPILE_US=X: torch.compile compiled and took X us (unset: not timed).
            if (const char* compiled = std::getenv("KL_MODEL_RUNNER_TORCH_COMPILE_US"); compiled && *compiled) {
                ct.torchCompile = summary(std::stod(compiled), rng);
                ct.speedupVsCompile = ct.torchCompile->medianUs / ct.candidate.medianUs;
            }
        }
        timing.cases.push_back(ct);
    }
    r.timing = timing;
    if (e.options.profile == MetricSet::Stalls) {
        Profile profile;
        profile.status = ProfileStatus::Ok;
        profile.metricSet = MetricSet::Stalls;
        profile.passes = 1;
        for (const auto& c : e.cases) {
            if (!c.timed || c.programs.candidate.launches.empty())
                continue;
            KernelProfile k;
            k.kernel = c.programs.candidate.launches.front().kernel;
            k.caseLabel = c.label;
            k.metrics
                = { { "gpu__time_duration.sum", 50000.0 }, { "smsp__average_warp_latency_per_inst_issued.ratio", 10.0 },
                      { "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", 6.0 },
                      { "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", 1.5 },
                      { "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", 1.0 } };
            profile.kernels.push_back(std::move(k));
            break;
        }
        r.profile = profile;
    }
    return r;
}

// As the real runner does (runner/evaluator.cpp), after either answer: when a profile was asked but
// the loop wants only candidates as fast as its incumbent and this one is slower, the profile is
// skipped with the reason, the detail says both figures, and no PC sampling is attached (it is part
// of the profile). True when skipped.
bool skipProfileIfSlower(const EvaluateRequest& e, EvaluateResult& r)
{
    if (e.options.profile == MetricSet::None || !r.timing)
        return false;
    const std::string skip = profileSkipReason(*r.timing, e.options.profileMinSpeedup);
    if (skip.empty())
        return false;
    Profile skipped;
    skipped.status = ProfileStatus::Skipped;
    skipped.reason = "slower-than-asked";
    r.profile = skipped;
    r.header.detail += (r.header.detail.empty() ? "" : "; ") + skip;
    r.pcSampling.reset();
    return true;
}

// With KL_MODEL_RUNNER_WRONG_KERNEL=NAME, every job whose candidate launches a kernel NAME first fails
// verification (wrong-result), as a real runner answers a kernel that computes something else.
bool wrongResult(const EvaluateRequest& e)
{
    const char* name = std::getenv("KL_MODEL_RUNNER_WRONG_KERNEL");
    if (!name || !*name)
        return false;
    for (const auto& c : e.cases)
        if (!c.programs.candidate.launches.empty() && c.programs.candidate.launches.front().kernel == name)
            return true;
    return false;
}

// With KL_MODEL_RUNNER_METRICS="NAME=VALUE,NAME=VALUE", every kernel of a profile that was measured
// reports those counters too (set over the recorded or made-up ones): e.g. the tensor-pipe counters the
// H200 gave for a CUDA-core GEMM (sm__inst_executed_pipe_tensor.sum not 0: conversions issue there).
void overrideMetrics(EvaluateResult& r)
{
    if (!r.profile || r.profile->status != ProfileStatus::Ok)
        return;
    for (const auto& [name, value] : namedValues("KL_MODEL_RUNNER_METRICS"))
        for (auto& k : r.profile->kernels)
            k.metrics[name] = std::stod(value);
}

} // namespace

int main(int argc, char** argv)
{
    int deviceIndex = 0;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--device")
            deviceIndex = std::stoi(argv[i + 1]);
    Hello hello;
    hello.pid = ::getpid();
    hello.deviceIndex = deviceIndex;
    hello.runner = "model";
    hello.deviceOk = true;
    // KL_MODEL_RUNNER_NO_DEVICE="why": a runner on a machine without a GPU says so in its hello.
    if (const char* why = std::getenv("KL_MODEL_RUNNER_NO_DEVICE")) {
        hello.deviceOk = false;
        hello.detail = why;
    }
    // A recording that cannot be read is said in the hello too, so that a test fails with the reason.
    std::optional<kl::test::RecordedResults> recorded;
    if (const char* file = std::getenv("KL_MODEL_RUNNER_RECORDED"); file && *file) {
        try {
            recorded = kl::test::RecordedResults::load(file);
        } catch (const std::exception& e) {
            hello.deviceOk = false;
            hello.detail = std::string("KL_MODEL_RUNNER_RECORDED: ") + e.what();
        }
    }
    if (std::string protocol; forDevice("KL_MODEL_RUNNER_PROTOCOL_DEVICE", deviceIndex, &protocol)) {
        auto j = nlohmann::json::parse(toLine(hello));
        j["protocol"] = std::stoi(protocol);
        std::cout << j.dump() << "\n" << std::flush;
        return 0;
    }
    std::cout << toLine(hello) << std::flush;
    // KL_MODEL_RUNNER_DELAY_MS: each job takes this long (a test can stop a session mid-candidate).
    const char* delay = std::getenv("KL_MODEL_RUNNER_DELAY_MS");
    const int delayMs = delay ? std::atoi(delay) : 0;
    DeviceDescription device;
    if (recorded) {
        device = recorded->device();
    } else {
        device.name = "Model GPU";
        device.computeCapability = "9.0";
        device.smCount = 132;
        device.l2Bytes = 62914560;
        device.smClockMhz = 1980;
        device.copyBandwidthGbps = 4000.0;
    }
    device.index = deviceIndex;
    // KL_MODEL_RUNNER_TENSOR_TFLOPS: what the real runner's mma.sync microbenchmark measured (635.4 on the H200).
    if (const char* tflops = std::getenv("KL_MODEL_RUNNER_TENSOR_TFLOPS"); tflops && *tflops) {
        device.tensorFp16Tflops = std::stod(tflops);
        device.tensorFp16ClockMhz = device.smClockMhz;
    }
    forDevice("KL_MODEL_RUNNER_NAME_DEVICE", deviceIndex, &device.name);
    std::string line;
    while (std::getline(std::cin, line)) {
        const auto request = parseRequest(line);
        if (const auto* d = std::get_if<DescribeRequest>(&request)) {
            DescribeResult r;
            r.header.id = d->id;
            r.device = device;
            std::cout << toLine(r) << std::flush;
        } else if (const auto* e = std::get_if<EvaluateRequest>(&request)) {
            logRequest(*e, deviceIndex);
            if (forDevice("KL_MODEL_RUNNER_HANG_DEVICE", deviceIndex))
                for (;;)
                    ::pause();
            // As the real runner does when it takes a job (a silent runner is a hung one).
            std::cout << toLine(Progress { e->id, "load", 0, 1 }) << std::flush;
            if (forDevice("KL_MODEL_RUNNER_KILL_DEVICE", deviceIndex)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
                std::raise(SIGKILL);
            }
            dieOnceIfAsked(*e);
            phaseLatencies(*e);
            if (delayMs > 0) {
                std::cout << toLine(Progress { e->id, "time", 0, 1 }) << std::flush;
                std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
            }
            EvaluateResult r = recorded ? recorded->answer(*e, device) : madeUpAnswer(*e, device);
            if (wrongResult(*e))
                r = EvaluateResult::failure(
                    e->id, Category::WrongResult, "max abs error 1.5 at index 7 (runner double)");
            overrideMetrics(r);
            if (!skipProfileIfSlower(*e, r) && e->options.pcSampling)
                r.pcSampling = recordedSampling();
            std::cout << toLine(r) << std::flush;
        } else {
            ShutdownResult r;
            r.header.id = std::get<ShutdownRequest>(request).id;
            std::cout << toLine(r) << std::flush;
            return 0;
        }
    }
    return 0;
}
