#include "core/field_formats/kernel_tuner_t4.h"

#include "core/field_formats/flashinfer_names.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/store/store.h"

#include <cctype>

namespace kl::fieldformats {

namespace {

std::string invalidity(const std::string& category)
{
    const auto status = evaluationStatus(category);
    if (!status)
        return {};
    if (*status == "PASSED")
        return "correct";
    if (*status == "COMPILE_ERROR")
        return "compile";
    if (*status == "INCORRECT_NUMERICAL")
        return "correctness";
    if (*status == "TIMEOUT")
        return "timeout";
    return "runtime";
}

} // namespace

Json kernelTunerResults(const store::Store& store, std::int64_t session)
{
    Json results = Json::array();
    for (const auto& row : store.listIterations(session)) {
        const auto d = store.iteration(session, row.index);
        if (!d || !d->candidate || !d->result)
            continue;
        const auto& r = *d->result;
        const auto invalid = invalidity(r.category);
        if (invalid.empty())
            continue;
        Json configuration = Json::object();
        for (const auto& [name, value] : d->candidate->tunables)
            configuration[name] = value;
        Json measurements = Json::array();
        Json runtimes = Json::array();
        if (r.timing) {
            for (std::size_t i = 0; i < r.timing->cases.size(); ++i) {
                const auto& c = r.timing->cases[i];
                if (i == 0) {
                    measurements.push_back(
                        { { "name", "time" }, { "value", c.candidate.medianUs / 1000.0 }, { "unit", "ms" } });
                    for (const double us : c.candidate.samplesUs)
                        runtimes.push_back(us / 1000.0);
                }
                measurements.push_back(
                    { { "name", "time_" + c.label }, { "value", c.candidate.medianUs / 1000.0 }, { "unit", "ms" } });
                measurements.push_back({ { "name", "gbps_" + c.label }, { "value", c.gbps }, { "unit", "GB/s" } });
                if (c.speedupVsBaseline)
                    measurements.push_back(
                        { { "name", "speedup_" + c.label }, { "value", *c.speedupVsBaseline }, { "unit", "" } });
            }
        }
        measurements.push_back({ { "name", "kernelloop_iteration" }, { "value", row.index }, { "unit", "" } });
        measurements.push_back({ { "name", "kernelloop_category" }, { "value", r.category }, { "unit", "" } });
        measurements.push_back({ { "name", "source_hash" }, { "value", d->candidate->sourceHash }, { "unit", "" } });
        Json times = { { "runtimes", runtimes } };
        results.push_back({ { "timestamp", isoTimestamp(r.recordedMs) }, { "configuration", configuration },
            { "objectives", Json::array({ "time" }) }, { "times", times }, { "invalidity", invalid },
            { "correctness", invalid == "correct" ? 1 : 0 }, { "measurements", measurements } });
    }
    const auto s = store.session(session);
    return { { "schema_version", kT4SchemaVersion }, { "results", results },
        { "metadata",
            { { "timeunit", "milliseconds" },
                { "kernelloop",
                    { { "session", session }, { "problem", s ? s->problemName : std::string() },
                        { "device", s ? s->device : std::string() },
                        { "statistic", "median of the timed runs, L2 flushed before each, CUDA events" } } } } } };
}

std::vector<std::string> checkKernelTunerResults(const Json& j)
{
    std::vector<std::string> problems;
    const auto version = j.is_object() && j.contains("schema_version") && j["schema_version"].is_string()
        ? j["schema_version"].get<std::string>()
        : std::string();
    int dots = 0;
    bool digits = !version.empty();
    for (const char c : version) {
        dots += c == '.' ? 1 : 0;
        digits = digits && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    }
    if (dots != 2 || !digits)
        problems.push_back("schema_version: must be major.minor.patch");
    if (!j.is_object() || !j.contains("results") || !j["results"].is_array()) {
        problems.push_back("results: must be an array");
        return problems;
    }
    const auto& list = j["results"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& r = list[i];
        const auto at = "results[" + std::to_string(i) + "]";
        for (const char* f : { "configuration", "times", "invalidity", "correctness" })
            if (!r.is_object() || !r.contains(f))
                problems.push_back(at + "." + f + ": required");
        if (!r.is_object())
            continue;
        if (r.contains("configuration") && !r["configuration"].is_object())
            problems.push_back(at + ".configuration: must be an object");
        if (r.contains("times") && !r["times"].is_object())
            problems.push_back(at + ".times: must be an object");
        if (r.contains("invalidity")) {
            const auto v = r["invalidity"].is_string() ? r["invalidity"].get<std::string>() : std::string();
            if (v != "timeout" && v != "compile" && v != "runtime" && v != "correctness" && v != "constraints"
                && v != "correct")
                problems.push_back(
                    at + ".invalidity: not timeout, compile, runtime, correctness, constraints or correct");
        }
        if (r.contains("correctness") && !r["correctness"].is_number())
            problems.push_back(at + ".correctness: must be a number");
        if (r.contains("timestamp") && !r["timestamp"].is_string())
            problems.push_back(at + ".timestamp: must be a string");
        if (r.contains("objectives") && !r["objectives"].is_array())
            problems.push_back(at + ".objectives: must be an array");
        if (r.contains("measurements")) {
            if (!r["measurements"].is_array())
                problems.push_back(at + ".measurements: must be an array");
            else
                for (const auto& m : r["measurements"])
                    if (!m.is_object() || (m.contains("name") && !m["name"].is_string())
                        || (m.contains("unit") && !m["unit"].is_string())
                        || (m.contains("value")
                            && !(m["value"].is_number() || m["value"].is_string() || m["value"].is_array())))
                        problems.push_back(
                            at + ".measurements: each is {name: string, value: number|string|array, unit: string}");
        }
    }
    return problems;
}

int exportKernelTuner(const store::Store& store, std::int64_t session, const std::filesystem::path& file,
    const ExportSecrets& secrets, bool overwrite)
{
    store::checkExportTarget(store.path(), file, overwrite);
    auto results = kernelTunerResults(store, session);
    ExportRedactor(secrets).redact(results);
    writeExportFile(file, results.dump(2) + "\n");
    return int(results["results"].size());
}

} // namespace kl::fieldformats
