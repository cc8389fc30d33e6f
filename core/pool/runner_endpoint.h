#pragma once
// Where a runner runs, as the user names it: `local:N` (GPU N here), `local:all` (every GPU here),
// `ssh:[user@]host[:gpu]` (through the system's ssh, its config and agent, never asking for a
// password), `slurm:ARGS` (a job step of a Slurm allocation made with ARGS, one GPU per runner),
// `cmd:WORDS` (the runner is whatever this command line starts, e.g. `cmd:ssh gpuhost kernelloop-runner`:
// the user's own wrapper; text with blanks and no kind, `ssh gpuhost kernelloop-runner`, reads the same).
// Each endpoint becomes a RunnerConfig: the runner's command line behind ssh or srun. No home-made
// cluster code: what reaches a machine is the system's own ssh and Slurm's own srun.
#include "core/runnerclient/runner_client.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::pool {

enum class EndpointKind { Local, Ssh, Slurm, Command };

struct Endpoint {
    EndpointKind kind = EndpointKind::Local;
    int gpu = 0; // local: the GPU index; ssh: the remote GPU index (0 unless given)
    bool allLocal = false; // local:all, before expandEndpoints
    std::string user; // ssh, may be empty (ssh's config decides)
    std::string host; // ssh
    std::vector<std::string> slurmArgs; // slurm: the allocation's arguments, as shell words
    std::vector<std::string> command; // cmd: the command line that starts the runner, as shell words
    // canonical: "local:0", "ssh:me@host:1", "slurm:-p gpu -t 30", "cmd:env A=1 kernelloop-runner"
    std::string text() const;
    bool operator==(const Endpoint&) const = default;
};

// Throws kl::Error("runner.bad-endpoint") saying what is wrong and what the forms are.
Endpoint parseEndpoint(std::string_view text);
// Whether a --runner value names an endpoint (local:, ssh:, slurm:, cmd:) rather than the local runner.
bool namesEndpoint(std::string_view text);

// Whether the local runner's value is a command line (`ssh gpuhost kernelloop-runner`, `env A=1
// /opt/kernelloop-runner`) rather than an executable's path: it has blanks and is no existing file.
bool namesRunnerCommand(std::string_view runner);

// The runner started by `runner` (an executable's path, or a command line as namesRunnerCommand says),
// on `base`'s device and with its arguments: a command's last word is the runner's path and the words
// before it its launcher, so --device N and the extra arguments follow the whole line as they follow a
// plain runner. Throws "runner.bad-endpoint" for a line that does not split (an unclosed quote), and
// "runner.no-command" when its program is not installed.
RunnerConfig runnerStartedBy(std::string_view runner, RunnerConfig base);

// One endpoint per line; blank lines and lines starting with # are skipped. Throws
// "runner.bad-endpoint" naming the file and line, and the file's own errors (runners.unreadable, ...).
std::vector<Endpoint> readRunnersFile(const std::filesystem::path& file);

// The GPUs the driver shows here (/proc/driver/nvidia/gpus), limited by CUDA_VISIBLE_DEVICES when set.
// 0 where there is no driver.
int localGpuCount();

// local:all becomes local:0 .. local:(count-1) (local:0 alone when count is 0, so that the runner
// says why there is no device); duplicates are refused ("runner.duplicate-endpoint": one timing job
// per GPU at a time).
std::vector<Endpoint> expandEndpoints(const std::vector<Endpoint>& endpoints, int localGpus);

// How endpoints become runner commands.
struct EndpointOptions {
    std::filesystem::path localRunner; // kernelloop-runner here: its path, or a command line that starts it
    std::string remoteRunner = "kernelloop-runner"; // its path on ssh hosts and Slurm nodes
    std::vector<std::string> sshOptions; // each passed as -o OPTION (Port=2222, IdentityFile=..., ...)
    std::string slurmGres = "gpu:1"; // --gres of each runner's step; empty: none (a cluster without GPU gres)
    std::string ssh = "ssh"; // programs, found on PATH unless absolute
    std::string salloc = "salloc";
    std::string srun = "srun";
    std::string scancel = "scancel";
    RunnerConfig base; // timeouts and extra runner arguments for every endpoint
};

// The program's absolute path: `name` itself when it has a slash, else the first executable on PATH.
// nullopt when none.
std::optional<std::filesystem::path> findProgram(const std::string& name);

// The runner command for one endpoint. A Slurm endpoint needs its allocation's job id. Throws
// "runner.no-ssh" / "runner.no-slurm" / "runner.no-command" when the program is not installed. A local
// endpoint starts options.localRunner, which may be a command line too (runnerStartedBy).
RunnerConfig runnerConfigFor(
    const Endpoint& endpoint, const EndpointOptions& options, const std::string& slurmJob = {});

} // namespace kl::pool
