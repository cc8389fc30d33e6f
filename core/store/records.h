#pragma once
// What the store keeps, as plain values: the loop and the GUI hand these in and get these back,
// and never see SQL. Fields marked "out" are filled by the store and ignored when writing.
// Timestamps are milliseconds since the Unix epoch (UTC); 0 on input means "now".
#include "core/exchange/exchange.h"
#include "core/findings/telemetry.h"
#include "core/lines/pc_sampling.h"
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/model/precision.h"
#include "core/protocol/messages.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kl {
struct Problem;
}

namespace kl::store {

std::int64_t nowMs();

// A problem, content-addressed: the hash is contentHash({json, reference, baseline}), which is
// Problem::contentHash for the same texts, so the same problem is stored once across sessions.
struct ProblemRecord {
    std::string hash; // out
    std::string name;
    std::string json;
    std::string referenceSource;
    std::string baselineSource;
};

// The record of a loaded problem: its file's JSON text and its two sources. Throws kl::Error
// "store.problem-changed" when the file no longer hashes to problem.contentHash.
ProblemRecord problemRecord(const Problem& problem);
ProblemRecord problemRecord(const Problem& problem, std::string jsonText);

// What the loop concluded about a session (core/loop's LoopSummary, by fields), as stored: a figure
// is absent where the summary written did not have it (older files; a session appended to without one).
struct SessionSummary {
    std::optional<std::string> stopReason;
    std::optional<int> rounds;
    std::optional<int> evaluated; // candidates that reached the runner or the cache
    std::optional<int> passed;
    std::optional<double> wallSeconds;
    std::optional<double> candidatesPerMinute;
    std::optional<int> candidatesPerRound;
    std::optional<std::int64_t> tokens; // LLM tokens over every exchange
    std::optional<bool> cancelled;
    // Candidates compiled while the round before ran, and how many of them were proposed.
    struct CompiledAhead {
        int compiled = 0;
        int used = 0;
        friend bool operator==(const CompiledAhead&, const CompiledAhead&) = default;
    };
    std::optional<CompiledAhead> compiledAhead;
    std::optional<double> passAtK;
    std::optional<double> speedupAtK;
    std::optional<double> baselineUs; // the baseline's median
    std::optional<int> bestIteration;
    std::optional<double> bestUs;
    std::optional<double> bestSpeedup;
    std::optional<double> bestPctOfCopy;
    friend bool operator==(const SessionSummary&, const SessionSummary&) = default;
};

struct SessionRecord {
    std::int64_t id = 0; // out
    std::string problemHash; // a problem already added with addProblem
    std::string problemName; // out
    std::string label; // the engineer's name for the session; may be empty
    std::string device; // short, for listings: "NVIDIA H200 #0"
    std::optional<protocol::DeviceDescription> deviceInfo; // the runner's describe reply
    std::string proposer; // "tuner", "llm", "human", or finer ("llm:anthropic/claude")
    std::string mode = "auto"; // "auto" | "review"
    nlohmann::json config = nlohmann::json::object(); // budget, target, stop rules: what replays it
    std::int64_t startedMs = 0;
    std::optional<std::int64_t> endedMs;
    // running | finished | cancelled | failed | interrupted (its process died while it was running:
    // endedMs is then the end of its last iteration)
    std::string status = "running";
    std::optional<SessionSummary> summary; // what the loop concluded (recordSessionSummary); none until written
    // out: the process that created the session, so that a killed one can be told from a running one
    std::optional<std::int64_t> ownerPid;
    std::string ownerHost;
};

struct SessionRow {
    SessionRecord session;
    int iterations = 0;
    std::optional<double> bestSpeedup; // over iterations whose result passed
    std::optional<double> bestMedianUs; // likewise
};

struct CandidateRecord {
    enum class Proposer { Llm, Tuner, Human };
    std::int64_t id = 0; // out
    std::int64_t sessionId = 0; // out
    std::string sourceHash; // out: contentHash(source)
    std::string source;
    std::string fileName = "candidate.cu";
    std::optional<std::int64_t> parentId; // a candidate of the same session
    Proposer proposer = Proposer::Tuner;
    std::string proposerDetail; // "evolutionary", "openai/gpt-4o", ...
    TunableValues tunables;
    std::string hypothesis; // why the proposer expects it to be faster
    // The proposer's predicted speedup over the best candidate it started from ("1.5x" in an
    // LLM's plan); nullopt when it made no prediction.
    std::optional<double> predictedSpeedup;
    std::int64_t createdMs = 0;
};
std::string_view proposerName(CandidateRecord::Proposer proposer); // "llm", "tuner", "human"
std::optional<CandidateRecord::Proposer> parseProposer(std::string_view name);

// The timing figures of one size, as the listings show them: a size's own in SizeResult, the
// headline ones in ResultRecord (taken from the first main size, the speedup over all of them).
struct TimingFigures {
    std::optional<double> medianUs;
    std::optional<double> p20Us;
    std::optional<double> p80Us;
    std::optional<double> cv;
    std::optional<double> gbps;
    std::optional<double> pctOfCopy;
    std::optional<double> speedup; // against the problem's baseline
    friend bool operator==(const TimingFigures&, const TimingFigures&) = default;
};

// The timing of one main size. Every figure is this size's own; speedup is against the baseline
// timed at this size in the same job.
struct SizeResult : TimingFigures {
    std::string label; // "8192x4096", as the problem names the size
    std::map<std::string, std::int64_t> values; // {"M": 8192, "N": 4096}; empty where the problem does not say
    // Speed of light (the runner's pct_of_sol and sol_bound): the floor over the median, and which of
    // the copy and FLOPs ÷ the precision's ceiling it is. Absent in results of older runners.
    std::optional<double> pctOfSol;
    std::optional<Bound> solBound;
    // The ceiling that floor holds the FLOPs to and why (the timing case's compute and compute_reason,
    // read from the stored timing): absent in results of older clients and runners.
    std::optional<Precision> compute;
    std::optional<CeilingReason> computeReason;
    friend bool operator==(const SizeResult&, const SizeResult&) = default;
};

// A profiled metric: which kernel, at which main size, which counter (profile.kernels[] of the
// runner's reply). The store keeps it as one name, "KERNEL/CASE/METRIC" (a bare METRIC in rows
// written without a kernel); readers read the fields.
struct MetricKey {
    std::string kernel;
    std::string caseLabel;
    std::string metric;
    auto operator<=>(const MetricKey&) const = default;
};
using MetricValues = std::map<MetricKey, double>;
// "KERNEL/CASE/METRIC" (the bare metric without kernel and size): the stored name, as `show` prints it.
std::string metricName(const MetricKey& key);

// A code listing as the store keeps it: deflated and base64'd with its unpacked length, or plain text
// (rows written before listings were packed); unpacked only when shown (codeListingsOf, code_listings.h).
struct PackedText {
    std::string deflateBase64;
    std::size_t bytes = 0; // unpacked
    std::optional<std::string> plain;
    bool damaged = false; // stored, but in neither form
};

// A candidate's PTX and SASS (or why there is no SASS), made after its compile.
struct StoredListings {
    std::optional<PackedText> ptx;
    std::optional<PackedText> sass; // `nvdisasm -g` code sections
    std::string sassNote; // why no SASS was stored
    std::optional<double> listingsMs; // what making them took
};

// A candidate's compile as the store keeps it (results.compile_json), typed where it is read: the
// main kernel's static facts (what findings and the charts read), the compile-ahead wait and the
// listings. The static report (staticReportJson: launches, occupancy, diagnostics) is kept as the
// compiler wrote it, for `show --json` and exports; nothing reads it by key.
struct CompileRecord {
    nlohmann::json report = nlohmann::json::object();
    std::optional<Telemetry> statics;
    std::optional<double> compiledAheadMs; // compiled while the round before ran: how long that took
    StoredListings listings;
};

// One evaluation of a candidate: the runner's reply (docs/runner-protocol.md) or a failure before
// it (compile error, proposer error), as the protocol's typed values. The summary fields are what
// listings show; the parts hold everything else, timing samples included.
// The inherited headline figures are the first main size's (sizes[0] names it), all of the same
// size, except speedup: the geometric mean over the main sizes (with one size, its own). Each
// size's own figures are in `sizes`.
struct ResultRecord : TimingFigures {
    std::int64_t id = 0; // out
    std::string status; // "ok" | "failed" | "error"
    std::string category; // "passed", "wrong-result", "compile.syntax", ...
    std::string detail;
    std::optional<double> smClockMhz;
    std::string toolkit; // "13.0"
    std::optional<protocol::Verification> verification; // none when not verified
    std::optional<protocol::Timing> timing; // with samples; none when not timed
    std::optional<protocol::DeviceDescription> device;
    CompileRecord compile; // the static report (registers, shared memory, spills, occupancy) and listings
    std::optional<protocol::Profile> profile;
    MetricValues metrics; // from the profile's kernels
    // One per timed main size, in the problem's order. Written empty, the store derives them from
    // timing.cases (and takes the values from the session's problem by label).
    std::vector<SizeResult> sizes;
    bool fromCache = false;
    std::int64_t recordedMs = 0;
    std::string endpoint; // the runner endpoint that measured it ("local:0", "ssh:host:1"); empty: unknown
    std::optional<lines::PcSampling> pcSampling; // none when it was not asked for
    // out: each part stored but not readable as protocol v1 (a damaged or foreign row), left out above;
    // its where names the column ("pc_sampling_json.pcs[0].line").
    std::vector<Error> unreadable;
};

// The static facts the charts draw of an iteration's main kernel: its compile record's statics.
struct KernelStatics {
    std::optional<int> registers; // per thread
    std::optional<double> theoreticalOccupancy; // 0..1
    std::string occupancyLimiter;
};

struct FindingRecord {
    std::string ruleId; // "occupancy.register-limited"
    std::string severity; // as the findings rules name it
    std::string message;
    nlohmann::json evidence = nlohmann::json::object(); // the numbers that triggered it
    std::vector<std::string> directions;
};

struct DecisionRecord {
    enum class Kind { Accept, Reject, Steer, Replace, AutoKeep, AutoRevert };
    Kind kind = Kind::AutoKeep;
    std::string reason; // what the proposer is told (reject, auto-revert)
    std::string steering; // the engineer's free text for the next proposal
    std::optional<std::int64_t> replacementCandidateId; // Replace: the edited candidate
    std::int64_t decidedMs = 0;
};
std::string_view decisionName(DecisionRecord::Kind kind); // "accept", ..., "auto-keep", "auto-revert"
// A finding's evidence as one line, "achieved_occupancy 33.2, limiter registers", in the stored order:
// what `show` prints and the GUI's findings page lists.
std::vector<std::pair<std::string, std::string>> evidenceItems(const FindingRecord& finding);
std::string evidenceText(const FindingRecord& finding);
// The best iteration the session's stored summary names, when it names one (> 0).
std::optional<int> summaryBestIteration(const SessionRecord& session);
// Likewise its best % of a same-size copy, speedup and median: those of summaryBestIteration.
std::optional<double> summaryBestPctOfCopy(const SessionRecord& session);
std::optional<double> summaryBestSpeedup(const SessionRecord& session);
std::optional<double> summaryBestMedianUs(const SessionRecord& session);
std::optional<DecisionRecord::Kind> parseDecision(std::string_view name);

// One request/response with an LLM. API keys never get here: the request body is scrubbed of
// credential-looking fields (see scrubSecrets) before it is written. Kept of the exchange: everything
// but its request headers, its Retry-After and, where the model produced choices, the raw body or SSE
// transcript (the choices' text says what it said); read back, those are empty. Of the choices after
// the first, the finish reason is not kept either.
struct ExchangeRecord {
    std::string role; // the PromptRole it served by name ("planner", "coder", ...); older files: "propose"
    Exchange exchange;
    std::int64_t startedMs = 0;
    // out: what was stored but could not be read (an unknown category, read as bad-json); its where
    // names the column.
    std::vector<Error> unreadable;
};
// What the model replied, as `history` and the transcript show it: each choice's text ("--- choice N
// ---" above each when there are several), or the raw response of an exchange without choices.
std::string replyText(const Exchange& exchange);

// A copy of `json` with credential-looking object fields ("authorization", "api_key", "x-api-key",
// "token", "secret", "password", ...) replaced by "[redacted]" at any depth.
nlohmann::json scrubSecrets(const nlohmann::json& json);

// A listing row: enough for one line of `history` or one row of the GUI's table.
struct IterationRow {
    int index = 0;
    std::optional<int> round; // the loop round (0: the baseline); nullopt when not recorded (older files)
    std::optional<std::int64_t> candidateId;
    std::optional<CandidateRecord::Proposer> proposer;
    std::string proposerDetail;
    std::string hypothesis; // the candidate's, for the hypothesis log (predicted vs measured)
    std::optional<double> predictedSpeedup; // likewise
    std::string state; // "done", "cancelled", ...
    std::string status; // the result's, empty without a result
    std::string category; // likewise
    std::optional<double> medianUs;
    std::optional<double> gbps;
    std::optional<double> pctOfCopy;
    std::optional<double> speedup;
    std::string topFindingRule; // the first finding recorded (findings arrive most important first)
    std::string topFindingMessage;
    std::optional<DecisionRecord::Kind> lastDecision;
    std::int64_t startedMs = 0;
    std::int64_t endedMs = 0;
};

// Who a row's candidate came from, as people read it: "baseline" (the problem's), "inductor"
// (torch.compile's kernel a session started from), else the proposer ("llm", "tuner", "human");
// empty when unknown.
std::string proposedBy(const IterationRow& row);

struct IterationDetail {
    IterationRow row;
    std::optional<CandidateRecord> candidate;
    std::optional<CandidateRecord> parent; // for the diff
    std::optional<ResultRecord> result;
    std::vector<FindingRecord> findings;
    std::vector<DecisionRecord> decisions;
    std::vector<ExchangeRecord> exchanges;
};

// An iteration being recorded (between beginIteration and finishIteration).
struct IterationRef {
    std::int64_t sessionId = 0;
    int index = 0;
    friend bool operator==(const IterationRef&, const IterationRef&) = default;
};

struct CommittedIteration {
    std::int64_t id = 0;
    int index = 0;
    std::optional<std::int64_t> candidateId;
    std::optional<std::int64_t> resultId;
    std::int64_t startedMs = 0; // as written: begun, finished
    std::int64_t endedMs = 0;
};

// A verified candidate of an earlier session, shown to a proposer as an example of what worked.
struct ExampleRow {
    std::string problemName;
    std::string problemHash;
    std::int64_t sessionId = 0;
    std::int64_t candidateId = 0;
    std::string source;
    TunableValues tunables;
    double speedup = 0.0; // the result's, against its own problem's baseline
    std::optional<double> medianUs;
    std::optional<double> pctOfCopy;
};

// What makes an evaluation repeatable: same key, same result, whichever session asks.
struct EvaluationKey {
    std::string source;
    TunableValues tunables;
    std::string problemHash; // covers the sizes, tolerances, reference and byte counts
    std::string device; // device name (same model, same result)
    std::string toolkit; // NVRTC version
    std::string options; // anything else that changes the result (metric set, trials)
};
std::string evaluationCacheKey(const EvaluationKey& key);

} // namespace kl::store
