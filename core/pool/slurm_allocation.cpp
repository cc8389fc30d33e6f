#include "core/pool/slurm_allocation.h"

#include "core/model/error.h"
#include "core/runnerclient/runner_process.h"

#include <sys/wait.h>

namespace kl::pool {

namespace {

using Clock = std::chrono::steady_clock;

struct Ran {
    std::optional<int> status; // nullopt: killed at the deadline
    std::string stderrText;
};

Ran runToEnd(const std::string& program, const std::vector<std::string>& args, std::chrono::milliseconds wait)
{
    auto process = RunnerProcess::spawn(program, args);
    process->closeInput();
    Ran ran;
    ran.status = process->waitExit(Clock::now() + wait);
    if (!ran.status)
        process->kill();
    ran.stderrText = process->stderrTail();
    return ran;
}

std::string trimmed(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

} // namespace

std::string grantedJobId(const std::string& text)
{
    for (const char* marker : { "Granted job allocation ", "Pending job allocation " }) {
        const auto at = text.find(marker);
        if (at == std::string::npos)
            continue;
        auto begin = at + std::string(marker).size();
        auto end = begin;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9')
            ++end;
        if (end > begin)
            return text.substr(begin, end - begin);
    }
    return {};
}

SlurmAllocation::SlurmAllocation(
    const Endpoint& endpoint, const EndpointOptions& options, std::chrono::milliseconds wait)
{
    const auto salloc = findProgram(options.salloc);
    const auto scancel = findProgram(options.scancel);
    if (!salloc || !scancel)
        throw Error("runner.no-slurm", {}, endpoint.text(),
            "\"" + (salloc ? options.scancel : options.salloc)
                + "\" is not installed or not on PATH; slurm endpoints need it");
    m_scancel = scancel->string();
    std::vector<std::string> args { "--no-shell", "--nodes=1", "--ntasks=1", "--job-name=kernelloop-runner" };
    if (!options.slurmGres.empty())
        args.push_back("--gres=" + options.slurmGres);
    args.insert(args.end(), endpoint.slurmArgs.begin(), endpoint.slurmArgs.end());
    const auto ran = runToEnd(salloc->string(), args, wait);
    const auto id = grantedJobId(ran.stderrText);
    if (ran.status && WIFEXITED(*ran.status) && WEXITSTATUS(*ran.status) == 0 && !id.empty()) {
        m_jobId = id;
        return;
    }
    if (!id.empty()) { // granted late, or salloc killed while pending: never leave it behind
        m_jobId = id;
        release();
    }
    const std::string how = ran.status ? describeWaitStatus(*ran.status)
                                       : "gave no allocation within " + std::to_string(wait.count() / 1000) + " s";
    throw Error("runner.unreachable", {}, endpoint.text(),
        "salloc " + how + (ran.stderrText.empty() ? "" : ": " + trimmed(ran.stderrText)));
}

SlurmAllocation::~SlurmAllocation() { release(); }

void SlurmAllocation::release()
{
    if (m_jobId.empty())
        return;
    try {
        runToEnd(m_scancel, { m_jobId }, std::chrono::seconds(10));
    } catch (const Error&) {
        // Nothing more to do: the allocation ends at its time limit.
    }
    m_jobId.clear();
}

} // namespace kl::pool
