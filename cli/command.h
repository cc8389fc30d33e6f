#pragma once
// kernelloop-cli's subcommands register themselves here, one file each, so that adding a
// command touches no shared file.
#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace kl::cli {

// Adds a subcommand to `app`; the returned function runs it and gives the exit code.
using CommandFactory = std::function<std::function<int()>(CLI::App& app)>;

struct CommandRegistration {
    explicit CommandRegistration(CommandFactory factory);
};

std::vector<CommandFactory>& commandFactories();

// Exit codes shared by every command.
enum ExitCode : int {
    Ok = 0,
    Failure = 1, // the operation ran and failed (a compile error, a wrong candidate)
    BadInput = 2, // malformed problem/candidate/options
    NoDevice = 3, // needs a GPU and there is none
    Interrupted = 130,
};

} // namespace kl::cli
