#pragma once
// What the pool suites share: a tuner session over a RunnerPool of runner doubles
// (tests/loop/model_runner.cpp, real processes), with environment knobs set for the runners it starts.
#include "core/loop/tuning_session.h"
#include "core/pool/runner_pool.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"
#include "tests/scoped_env.h"

#include <QTemporaryDir>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kl::test {

inline pool::PoolOptions modelPoolOptions()
{
    pool::PoolOptions o;
    o.endpoints.localRunner = KL_MODEL_RUNNER;
    o.endpoints.remoteRunner = KL_MODEL_RUNNER;
    o.endpoints.base.startTimeout = std::chrono::milliseconds(15'000);
    return o;
}

inline std::vector<pool::Endpoint> endpoints(const std::vector<std::string>& texts)
{
    std::vector<pool::Endpoint> out;
    for (const auto& t : texts)
        out.push_back(pool::parseEndpoint(t));
    return out;
}

// One tuner session of `budget` rounds of k over the pool; what it finished, by iteration index.
struct PooledSession {
    QTemporaryDir dir;
    store::Store store = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
    Problem problem = layernormProblem();
    LoopSummary summary;
    std::mutex mutex;
    std::vector<IterationOutcome> finished;
    std::function<void(const IterationOutcome&)> onFinished; // on the loop's thread

    void run(pool::RunnerPool& pool, int budget, int k, std::chrono::milliseconds jobTimeout = std::chrono::seconds(30),
        const std::atomic<bool>* cancel = nullptr)
    {
        auto config = loopConfig(budget, k, "tuner:random");
        config.jobTimeout = jobTimeout;
        config.useCache = false;
        TuningSession session(problem, store, pool, config);
        session.events().subscribe([this](const std::shared_ptr<const LoopEvent>& e) {
            if (const auto* f = std::get_if<IterationFinished>(e.get())) {
                {
                    std::lock_guard lock(mutex);
                    finished.push_back(f->outcome);
                }
                if (onFinished)
                    onFinished(f->outcome);
            }
        });
        Tuner tuner({ TunerStrategy::Random, 11 });
        summary = session.run(tuner, cancel);
    }
};

// Every iteration the loop reported finished is committed: a second, read-only connection on the
// session's file (what a reader after a crash would see) finds exactly those iterations, each with
// the result the loop reported: verdict, detail (with its requeue note), endpoint and figures.
// Empty when so; else the first difference.
inline std::string committedMismatch(PooledSession& s)
{
    store::Store::Options viewing;
    viewing.readOnly = true;
    const auto reader = store::Store::open(s.store.path(), viewing);
    const auto rows = reader.listIterations(s.summary.sessionId);
    std::lock_guard lock(s.mutex);
    if (rows.size() != s.finished.size())
        return std::to_string(rows.size()) + " iterations committed, " + std::to_string(s.finished.size())
            + " reported finished";
    if (int(rows.size()) < s.summary.evaluated)
        return "fewer iterations committed than the " + std::to_string(s.summary.evaluated) + " evaluated";
    for (const auto& o : s.finished) {
        const auto at = "iteration " + std::to_string(o.index) + ": ";
        const auto it = reader.iteration(s.summary.sessionId, o.index);
        if (!it)
            return at + "not in the store";
        if (it->row.state != "done")
            return at + "state " + it->row.state;
        if (!it->result)
            return at + "no result stored";
        const auto& r = *it->result;
        if (r.status != o.status || r.category != o.category)
            return at + "stored " + r.status + "/" + r.category + ", reported " + o.status + "/" + o.category;
        if (r.detail != o.detail)
            return at + "stored detail \"" + r.detail + "\", reported \"" + o.detail + "\"";
        if (r.endpoint != o.endpoint)
            return at + "stored endpoint " + r.endpoint + ", reported " + o.endpoint;
        if (r.medianUs != o.medianUs || r.speedup != o.speedup || r.gbps != o.gbps)
            return at + "stored figures differ from the reported ones";
        if (it->row.candidateId != o.candidateId)
            return at + "another candidate stored";
    }
    return {};
}

inline const pool::RunnerStatus* statusOf(const std::vector<pool::RunnerStatus>& all, const std::string& endpoint)
{
    for (const auto& s : all)
        if (s.endpoint == endpoint)
            return &s;
    return nullptr;
}

} // namespace kl::test
