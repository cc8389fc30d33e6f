#pragma once
// The values of options several commands take: where the store and the runner are, NAME=VALUE
// tunables and durations, each read as the commands document them.
#include "core/model/candidate.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kl::cli {

// --db, else $KERNELLOOP_DB, else $XDG_DATA_HOME/kernelloop/kernelloop.db (~/.local/share/...).
std::filesystem::path storePath(const std::string& option);
// --runner, else $KERNELLOOP_RUNNER, else kernelloop-runner beside this executable or in the
// build tree's runner/ folder.
std::filesystem::path runnerPath(const std::string& option);
// "NAME=VALUE" pairs; throws kl::Error("cli.bad-set") naming the bad one (not NAME=INTEGER, or a
// value beyond ±2^53).
TunableValues parseSets(const std::vector<std::string>& sets);
// "90s", "10m", "1h", "300" (seconds); throws kl::Error("cli.bad-duration").
double parseDuration(const std::string& text);

} // namespace kl::cli
