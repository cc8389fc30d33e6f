#pragma once
// The compile record (records.h: CompileRecord) as results.compile_json holds it, and back: the
// static report's object with "telemetry" (the static facts), "compiled_ahead_ms", "ptx" and "sass"
// ({"deflate_base64", "bytes"}, or a plain string in older rows), "sass_note" and "listings_ms"
// beside its own keys. The one place that reads those keys.
#include "core/findings/telemetry.h"
#include "core/model/error.h"
#include "core/store/records.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace kl::store {

// null for an empty record (a candidate that never reached the compiler).
nlohmann::json compileColumn(const CompileRecord& compile);
// A column that is not an object reads as an empty record; a part that does not read is left out
// and named in `unreadable` ("compile_json.telemetry", "compile_json.sass").
CompileRecord compileRecordOf(const nlohmann::json& column, std::vector<Error>* unreadable = nullptr);

// The static facts alone from their stored object (the "telemetry" of a compile record, the "static"
// of a recorded runner reply), and that object from them. Throws "findings.bad-telemetry" for a
// value that is not an object.
Telemetry staticTelemetryFromJson(const nlohmann::json& statics);
nlohmann::json staticTelemetryJson(const Telemetry& t);

} // namespace kl::store
