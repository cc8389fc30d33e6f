#pragma once
// What the pool suites share: a tuner session over a RunnerPool of runner doubles
// (tests/loop/model_runner.cpp, real processes), with environment knobs set for the runners it starts.
#include "core/loop/tuning_session.h"
#include "core/pool/runner_pool.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"

#include <QTemporaryDir>

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kl::test {

// Sets variables for the lifetime of the object (runners started meanwhile inherit them).
struct ScopedEnv {
    std::vector<std::string> names;
    ScopedEnv(std::initializer_list<std::pair<std::string, std::string>> values)
    {
        for (const auto& [k, v] : values) {
            ::setenv(k.c_str(), v.c_str(), 1);
            names.push_back(k);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv()
    {
        for (const auto& k : names)
            ::unsetenv(k.c_str());
    }
};

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

inline const pool::RunnerStatus* statusOf(const std::vector<pool::RunnerStatus>& all, const std::string& endpoint)
{
    for (const auto& s : all)
        if (s.endpoint == endpoint)
            return &s;
    return nullptr;
}

} // namespace kl::test
