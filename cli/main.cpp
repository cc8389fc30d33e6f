// kernelloop-cli: the headless face of KernelLoop. Links the core only (no Qt, no libcuda).
#include "cli/command.h"

#include "core/compile/confinement.h"
#include "core/model/error.h"

#include <cstdlib>

#include <iostream>

namespace kl::cli {

std::vector<CommandFactory>& commandFactories()
{
    static std::vector<CommandFactory> factories;
    return factories;
}

CommandRegistration::CommandRegistration(CommandFactory factory) { commandFactories().push_back(std::move(factory)); }

} // namespace kl::cli

int main(int argc, char** argv)
{
    CLI::App app { "KernelLoop: closed-loop CUDA kernel optimisation, headless", "kernelloop-cli" };
    app.require_subcommand(1);
    app.set_version_flag("--version", "kernelloop-cli 0.1.0");
    // Before or after the command's name: an opt-in for the whole process and what it starts.
    app.fallthrough();
    bool unconfined = false;
    app.add_flag("--allow-unconfined-python", unconfined,
        "where bubblewrap cannot make a sandbox, run a Triton candidate's Python (model-written, untrusted) "
        "unconfined instead of refusing it (docs/llm.md, \"What runs where\")");
    std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
    for (auto& factory : kl::cli::commandFactories()) {
        const auto before = app.get_subcommands({}).size();
        auto run = factory(app);
        auto subs = app.get_subcommands({});
        if (subs.size() > before)
            commands.emplace_back(subs.back(), std::move(run));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : kl::cli::BadInput;
    }
    if (unconfined) {
        kl::setUnconfinedPythonAllowed(true);
        ::setenv("KL_ALLOW_UNCONFINED_PYTHON", "1", 1); // campaigns' and pools' children too
    }
    for (auto& [sub, run] : commands)
        if (sub->parsed()) {
            try {
                return run();
            } catch (const kl::Error& e) {
                std::cerr << "error [" << e.category() << "] " << e.what() << "\n";
                return kl::cli::BadInput;
            } catch (const std::exception& e) {
                std::cerr << "error [internal] " << e.what() << "\n";
                return kl::cli::Failure;
            }
        }
    return kl::cli::BadInput;
}
