#pragma once
// Version-3 files for the migration and read-only tests: a closed current store rewritten as
// version 3 laid it out (no size_results, no owner columns, no later results columns).
#include "raw_sqlite.h"

#include <string>

namespace kl::store::testing {

inline void downgradeToVersion3(const std::string& path)
{
    RawDb raw(path);
    raw.exec("DROP TABLE size_results");
    raw.exec("ALTER TABLE sessions DROP COLUMN owner_pid");
    raw.exec("ALTER TABLE sessions DROP COLUMN owner_host");
    raw.exec("ALTER TABLE sessions DROP COLUMN owner_start");
    raw.exec("ALTER TABLE results DROP COLUMN runner_endpoint"); // version 5's
    raw.exec("ALTER TABLE results DROP COLUMN pc_sampling_json"); // version 6's
    raw.exec("PRAGMA user_version = 3");
}

} // namespace kl::store::testing
