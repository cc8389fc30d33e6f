#pragma once
// Where the engineer's store is when nothing names one: both front ends look in the same place.
#include <filesystem>
#include <string>

namespace kl::store {

// `option` (--db) when given, else $KERNELLOOP_DB, else $XDG_DATA_HOME/kernelloop/kernelloop.db
// (~/.local/share/kernelloop/kernelloop.db). Creates nothing.
std::filesystem::path storeLocation(const std::string& option = {});

} // namespace kl::store
