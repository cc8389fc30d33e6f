#pragma once
// The campaigns of a store file: many problems run as sessions over a runner pool, kept as one record
// (name, the per-problem recipe as a `tune` line, status) with one row per problem (where it stands, the
// category of a failure, the session that ran it). Rows are written as problems start and end, each in
// its own transaction, so a campaign whose process was killed resumes from what was committed.
//
// A CampaignStore is its own connection to the file (beside the Store connections the sessions write
// through); use it from one thread at a time. A campaign whose status says "running" but whose process
// is gone reads as "interrupted", as sessions do. Errors are kl::Error "store.*" (as Store's) and
// "store.campaign-exists", "store.unknown-campaign", "store.campaign-running".
#include "core/store/store.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {

struct CampaignRecord {
    std::int64_t id = 0;
    std::string name;
    std::string recipe; // `kernelloop-cli tune PROBLEM ...`: the recipe every problem runs with
    std::string status = "running"; // running | finished | cancelled | interrupted | incomplete
    std::int64_t createdMs = 0;
    std::optional<std::int64_t> endedMs;
    std::optional<std::int64_t> ownerPid; // the process running it (out)
};

struct CampaignProblemRecord {
    int position = 0; // from 0, in the order given
    std::string problem; // the file as given: problem.json, a folder holding one, or a KernelBench .py
    std::string status = "pending"; // pending | running | done | failed
    std::string category; // of a failure: kernelbench.*, compile.*, wrong-result, runner.*, inductor.*, ...
    std::string detail;
    std::optional<std::int64_t> sessionId; // the session that ran it (the last one, when re-run)
    std::string endpoint; // the runner endpoint it ran on
    int attempts = 0;
    std::optional<std::int64_t> startedMs, endedMs;
};

class CampaignStore {
public:
    // Opens the campaigns of the store at `path` (created and migrated through Store::open when
    // writable). A read-only open of a file older than campaigns reads as having none.
    static CampaignStore open(const std::filesystem::path& path, Store::Options options = {});
    CampaignStore(CampaignStore&&) noexcept;
    CampaignStore& operator=(CampaignStore&&) noexcept;
    ~CampaignStore();

    // A new campaign owned by this process, its problems pending. Throws "store.campaign-exists".
    std::int64_t create(const std::string& name, const std::string& recipe, const std::vector<std::string>& problems);
    std::optional<CampaignRecord> campaign(std::int64_t id) const;
    std::optional<CampaignRecord> campaignNamed(const std::string& name) const;
    std::vector<CampaignRecord> list() const; // newest first
    std::vector<CampaignProblemRecord> problems(std::int64_t campaignId) const;

    // Takes a campaign over to run it again: this process owns it, its status is "running", problems that
    // were running (their process died) and those that failed for a runner's fault or were cancelled are
    // pending again. Throws "store.unknown-campaign", "store.campaign-running" (its process is alive).
    // Returns how many problems are pending.
    int resume(std::int64_t campaignId);
    void finish(std::int64_t campaignId, const std::string& status);

    void startProblem(std::int64_t campaignId, int position, const std::string& endpoint);
    void linkSession(std::int64_t campaignId, int position, std::int64_t sessionId);
    // `status`: "done", "failed", or "pending" (handed back: its runner failed, another will take it).
    void finishProblem(std::int64_t campaignId, int position, const std::string& status, const std::string& category,
        const std::string& detail, std::optional<std::int64_t> sessionId);

private:
    struct Impl;
    explicit CampaignStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// Whether a failure category is a runner's rather than the problem's (runner.*: lost, unreachable, hang,
// no-device, ...) or a cancellation: such a problem is run again on resume, and on another runner.
bool retryableCategory(const std::string& category);

} // namespace kl::store
