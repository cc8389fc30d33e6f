#pragma once
// What several commands share: where the store and the runner are, NAME=VALUE options, and
// number formatting for tables.
#include "core/model/candidate.h"

#include <filesystem>
#include <optional>
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

std::string fixed(double value, int decimals);
std::string fixed(const std::optional<double>& value, int decimals, const std::string& absent = "-");
std::string tunablesText(const TunableValues& values);

} // namespace kl::cli
