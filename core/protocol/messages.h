#pragma once
// The messages of runner protocol v1 (docs/runner-protocol.md) as C++ values, and their JSON.
// Both sides use these: the core builds requests and reads results, the runner reads requests
// and writes results. Every from_json throws kl::Error("protocol.bad-message") whose `where` is
// the field path ("cases[2].buffers[0].rows") and whose message says what is wrong.
#include "core/lines/pc_sampling.h"
#include "core/model/dtype.h"
#include "core/model/launch_plan.h"
#include "core/model/precision.h"
#include "core/model/problem.h"
#include "core/protocol/category.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kl::protocol {

constexpr int kProtocolVersion = 1;
// A runner's exit status after answering a job that lost the CUDA context (illegal address, trap, a
// kernel past the wall-clock guard): every later driver call would fail, so it leaves; its client
// starts a fresh one for the next job (docs/runner-protocol.md).
constexpr int kExitContextLost = 3;

// ---- runner → core, unsolicited -----------------------------------------------------------

// The runner's first line.
struct Hello {
    static constexpr std::string_view kType = "hello";
    int protocol = kProtocolVersion;
    std::string runner; // the runner's version, "0.1.0"
    std::int64_t pid = 0;
    bool deviceOk = false; // device_status: "ok" | "no-device"
    std::string detail; // why there is no device
    int deviceIndex = 0;
};

// A few per second at most while a job runs.
struct Progress {
    static constexpr std::string_view kType = "progress";
    std::string id;
    std::string phase; // load, verify, time, profile, pc-sampling
    std::int64_t done = 0;
    std::int64_t total = 0;
};

// ---- requests ------------------------------------------------------------------------------

struct DescribeRequest {
    static constexpr std::string_view kType = "describe";
    std::string id;
};

struct ShutdownRequest {
    static constexpr std::string_view kType = "shutdown";
    std::string id;
};

enum class MetricSet { None, Default, SpeedOfLight, Stalls }; // "none", "default", "sol", "stalls"
std::string_view metricSetName(MetricSet set);
std::optional<MetricSet> parseMetricSet(std::string_view name);

struct EvaluateOptions {
    std::uint64_t seed = 1234;
    int trials = 2;
    double warmupMs = 25.0;
    int minReps = 100;
    int maxReps = 2000;
    double timeBudgetMs = 400.0;
    std::int64_t flushBytes = 0; // 0: twice the L2
    double graphBelowUs = 10.0;
    // Adaptive: repeat until the 95% interval of the median is within +-intervalHalfWidth of it (at
    // least adaptiveMinReps, at most maxReps, within the time budget). Fixed: as many runs as the time
    // budget allows, at least minReps (the protocol before adaptive; kept to compare the two).
    enum class Repetitions { Adaptive, Fixed };
    Repetitions repetitions = Repetitions::Adaptive;
    double intervalHalfWidth = 0.005;
    int adaptiveMinReps = 20;
    MetricSet profile = MetricSet::Default;
    // Profile only a candidate at least this fast against its own job's baseline (geometric mean of the
    // timed cases' speedups); 0: every candidate. The loop sets it just under its incumbent's: CUPTI's
    // replay is most of a job (~185 of ~270 ms on the H200), and only a new best's counters steer the tuner.
    double profileMinSpeedup = 0.0;
    bool pcSampling = false;
    bool time = true; // false: verify only
};

struct Module {
    std::string cubin; // raw bytes; base64 on the wire (cubin_b64)
};

struct Modules {
    Module reference;
    Module candidate;
    std::optional<Module> baseline;
};

enum class CaseKind { Main, Fuzz, Padded };
std::string_view caseKindName(CaseKind kind);
std::optional<CaseKind> parseCaseKind(std::string_view name);

// A tensor of the problem. Element count is rows * rowStride; the first rowLength of each row are data.
struct Buffer {
    std::string name;
    PlannedBuffer::Role role = PlannedBuffer::Role::Input; // input | output (scratch lives in programs)
    DType dtype = DType::F32;
    std::int64_t rows = 1;
    std::int64_t rowLength = 0;
    std::int64_t rowStride = 0;
    std::optional<Distribution> distribution; // inputs only
    std::int64_t elements() const { return rows * rowStride; }
};

struct Scratch {
    std::string name;
    DType dtype = DType::F32;
    std::int64_t elements = 0;
    bool zeroed = false;
};

// A kernel argument: a device pointer to a tensor or scratch buffer, or a typed scalar.
struct BufferArg {
    std::string name;
    bool operator==(const BufferArg&) const = default;
};
struct ScalarArg {
    DType type = DType::I32;
    // Integer types hold std::int64_t (in the type's range), floating types hold double.
    std::variant<std::int64_t, double> value = std::int64_t { 0 };
    bool operator==(const ScalarArg&) const = default;
};
using Arg = std::variant<BufferArg, ScalarArg>;

// Throws kl::Error("protocol.bad-arg") for a value that is not whole for an integer type or out of its range.
ScalarArg makeScalarArg(DType type, double value);

struct Launch {
    std::string kernel; // the lowered name, ready for cuModuleGetFunction
    std::array<std::int64_t, 3> grid { 1, 1, 1 };
    std::array<std::int64_t, 3> block { 1, 1, 1 };
    std::int64_t sharedBytes = 0;
    std::vector<Arg> args;
};

struct Program {
    std::vector<Scratch> scratch;
    std::vector<Launch> launches;
};

struct Programs {
    Program reference;
    Program candidate;
    std::optional<Program> baseline;
};

struct Case {
    std::string label;
    CaseKind kind = CaseKind::Main;
    bool timed = false;
    double bytes = 0.0;
    double flops = 0.0;
    // What the FLOPs run in (the problem's "compute"), for the compute floor; absent from older clients.
    std::optional<Precision> compute;
    // Why that precision (Problem::computeCeiling()); the runner only echoes it. Absent from older clients.
    std::optional<CeilingReason> computeReason;
    std::vector<Buffer> buffers;
    Programs programs;
    // Each tensor's shape at this size (outermost first), for a Python reference; rows * row
    // length of its buffer. Empty without one.
    std::map<std::string, std::vector<std::int64_t>> shapes;
};

// A PyTorch reference: the runner's Python worker calls reference(**tensors, **scalars) on the
// case's own inputs; there is then no reference module and no reference program.
struct PythonReference {
    std::string source; // the .py file's text
    std::string fileName; // for messages and tracebacks
    std::map<std::string, double> scalars; // the problem's scalars by name
};

struct EvaluateRequest {
    static constexpr std::string_view kType = "evaluate";
    std::string id;
    EvaluateOptions options;
    Modules modules; // modules.reference is empty with a Python reference
    std::optional<PythonReference> pythonReference;
    std::map<DType, Tolerance> tolerances;
    std::vector<Case> cases;
};

using Request = std::variant<DescribeRequest, EvaluateRequest, ShutdownRequest>;

// ---- results -------------------------------------------------------------------------------

struct DeviceDescription {
    int index = 0;
    std::string name;
    std::string uuid;
    std::string computeCapability; // "9.0"
    int smCount = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t sharedPerSm = 0;
    std::int64_t sharedPerBlock = 0;
    std::int64_t sharedPerBlockOptin = 0;
    std::int64_t registersPerSm = 0;
    int maxThreadsPerSm = 0;
    int maxBlocksPerSm = 0;
    int warpSize = 32;
    std::int64_t memoryBytes = 0;
    int memoryBusBits = 0;
    double smClockMhz = 0.0;
    double memoryClockMhz = 0.0;
    std::string driverVersion;
    std::string runtimeToolkit;
    double copyBandwidthGbps = 0.0;
    std::int64_t copyBandwidthBytes = 0;
    // The measured tensor ceiling: an mma.sync m16n8k16 fp16 (fp32 accumulate) microbenchmark over every
    // SM, once per runner, and the SM clock it ran at. 0 where not measured (before sm_80, older runners).
    double tensorFp16Tflops = 0.0;
    double tensorFp16ClockMhz = 0.0;
    bool operator==(const DeviceDescription&) const = default;
};

// Every result line starts like this.
struct ResultHeader {
    std::string id;
    Status status = Status::Ok;
    std::optional<Category> category; // absent on plain acknowledgements (shutdown)
    std::string detail;
};

struct DescribeResult {
    static constexpr std::string_view kType = "result";
    ResultHeader header;
    std::optional<DeviceDescription> device; // when status is ok
};

struct ShutdownResult {
    static constexpr std::string_view kType = "result";
    ResultHeader header;
};

// Expected vs actual around the worst element. Non-finite values are written "nan", "inf", "-inf".
struct ErrorWindow {
    std::vector<std::int64_t> start; // multi-dimensional index of the first element shown
    std::vector<double> expected;
    std::vector<double> actual;
    bool operator==(const ErrorWindow&) const = default;
};

struct CaseVerification {
    std::string label;
    CaseKind kind = CaseKind::Main;
    int trial = 0;
    bool passed = false;
    std::optional<Category> category; // when failed
    std::int64_t elements = 0;
    std::int64_t mismatches = 0;
    std::int64_t unwritten = 0;
    std::int64_t nan = 0;
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    std::vector<std::int64_t> worstIndex;
    std::string worstOutput;
    std::optional<ErrorWindow> window;
    bool operator==(const CaseVerification&) const = default;
};

struct Verification {
    bool passed = false;
    std::vector<CaseVerification> cases;
    bool operator==(const Verification&) const = default;
};

struct TimingSummary {
    double medianUs = 0.0;
    double p20Us = 0.0;
    double p80Us = 0.0;
    double minUs = 0.0;
    double meanUs = 0.0;
    double cv = 0.0;
    int reps = 0;
    std::optional<double> graphMedianUs; // CUDA-graph replay, for short kernels
    std::vector<double> samplesUs;
    // The 95% interval of the median (order statistics) and why the runs stopped ("interval",
    // "max-reps", "time-cap" under the adaptive protocol; "budget" under the fixed one). Last, so
    // that positional initialisers of the fields above stay valid.
    std::optional<double> medianLowUs = std::nullopt, medianHighUs = std::nullopt;
    std::string stoppedBy = {};
    bool operator==(const TimingSummary&) const = default;
};

struct CaseTiming {
    std::string label;
    double bytes = 0.0;
    double flops = 0.0;
    TimingSummary candidate;
    std::optional<TimingSummary> baseline;
    std::optional<TimingSummary> copy;
    std::string copySource; // "measured" in this job, or "cached": the same size measured earlier by this runner
    double gbps = 0.0;
    double tflops = 0.0;
    std::optional<double> pctOfCopy;
    std::optional<double> speedupVsBaseline;
    // Speed of light (core/verify/speed_of_light.h): the precision and its ceiling at the timing's SM
    // clock, the floor (the larger of the copy and flops ÷ ceiling), % of it and which bound binds.
    // Absent where the request named no precision (older clients) or the architecture is unknown.
    std::optional<Precision> compute;
    std::optional<CeilingReason> computeReason; // the request's, echoed: why that precision
    std::optional<double> ceilingTflops;
    std::optional<double> solUs;
    std::optional<double> pctOfSol;
    std::optional<Bound> solBound;
    // A PyTorch reference as a contender, timed by the worker in the same job (cold L2, CUDA events,
    // median): eager, and torch.compile where it compiles (else compileError says why).
    std::optional<TimingSummary> eager;
    std::optional<TimingSummary> torchCompile;
    std::optional<double> speedupVsEager;
    std::optional<double> speedupVsCompile;
    std::string torchCompileError;
    bool operator==(const CaseTiming&) const = default;
};

struct Timing {
    std::optional<double> smClockMhz;
    std::optional<double> temperatureC;
    std::string repetitions; // "adaptive" | "fixed"; empty in replies of older runners
    std::vector<CaseTiming> cases;
    bool operator==(const Timing&) const = default;
};

enum class ProfileStatus { Ok, Unavailable, Skipped };
std::string_view profileStatusName(ProfileStatus status);
std::optional<ProfileStatus> parseProfileStatus(std::string_view name);

struct KernelProfile {
    std::string kernel;
    std::string caseLabel; // "case" on the wire
    std::map<std::string, double> metrics;
    bool operator==(const KernelProfile&) const = default;
};

struct Profile {
    ProfileStatus status = ProfileStatus::Skipped;
    std::string reason; // unavailable: insufficient-privileges, unsupported-device, another-profiler, not-built
    std::optional<MetricSet> metricSet;
    int passes = 0;
    std::vector<KernelProfile> kernels;
    bool operator==(const Profile&) const = default;
};

struct EvaluateResult {
    static constexpr std::string_view kType = "result";
    ResultHeader header; // category always set
    std::optional<DeviceDescription> device;
    std::optional<Verification> verification;
    std::optional<Timing> timing; // null unless verified and timed
    std::optional<Profile> profile;
    std::optional<lines::PcSampling> pcSampling; // none when not asked
    // "where: why" when the reply's pc_sampling did not decode: no samples, the rest of the result stands.
    std::string pcSamplingUnreadable;
    std::map<std::string, double> phasesMs;

    Category category() const { return header.category.value_or(Category::Passed); }
    // A result the runner or the client gives when no measurement exists.
    static EvaluateResult failure(std::string id, Category category, std::string detail);
};

// ---- JSON ----------------------------------------------------------------------------------
// to_json writes "v" and "type" for whole messages; from_json checks them.

void to_json(nlohmann::json& j, const Hello& m);
void from_json(const nlohmann::json& j, Hello& m);
void to_json(nlohmann::json& j, const Progress& m);
void from_json(const nlohmann::json& j, Progress& m);
void to_json(nlohmann::json& j, const DescribeRequest& m);
void from_json(const nlohmann::json& j, DescribeRequest& m);
void to_json(nlohmann::json& j, const ShutdownRequest& m);
void from_json(const nlohmann::json& j, ShutdownRequest& m);
void to_json(nlohmann::json& j, const EvaluateRequest& m);
void from_json(const nlohmann::json& j, EvaluateRequest& m);
void to_json(nlohmann::json& j, const DeviceDescription& m); // the bare object under "device"
void from_json(const nlohmann::json& j, DeviceDescription& m);
void to_json(nlohmann::json& j, const DescribeResult& m);
void from_json(const nlohmann::json& j, DescribeResult& m);
void to_json(nlohmann::json& j, const ShutdownResult& m);
void from_json(const nlohmann::json& j, ShutdownResult& m);
void to_json(nlohmann::json& j, const EvaluateResult& m);
void from_json(const nlohmann::json& j, EvaluateResult& m);
// The parts of an evaluate result, as the store's columns keep them: the same text as inside the whole
// result (from_json throws as from_json of the whole).
void to_json(nlohmann::json& j, const Verification& m);
void from_json(const nlohmann::json& j, Verification& m);
void to_json(nlohmann::json& j, const Timing& m);
void from_json(const nlohmann::json& j, Timing& m);
void to_json(nlohmann::json& j, const Profile& m);
void from_json(const nlohmann::json& j, Profile& m);

// ---- lines ---------------------------------------------------------------------------------

// One message as one line, newline included.
template <class Message> std::string toLine(const Message& message) { return nlohmann::json(message).dump() + '\n'; }

// Parses one line (trailing newline allowed) into a JSON object and checks "v" and "type".
// Throws kl::Error("protocol.bad-message") for garbage, a truncated line, a non-object, a missing
// or wrong "v", or a missing "type".
nlohmann::json parseLine(std::string_view line);

// Parses a line into a given message type; the "type" must match.
template <class Message> Message parseMessage(std::string_view line) { return parseLine(line).get<Message>(); }

// What the runner reads: one of the three requests ("protocol.bad-message" otherwise).
Request parseRequest(std::string_view line);

// The "id" of a line if it has a string one, so that a malformed request can still be answered
// with bad-request under its own id.
std::optional<std::string> peekId(std::string_view line);

} // namespace kl::protocol
