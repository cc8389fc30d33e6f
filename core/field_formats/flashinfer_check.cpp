#include "core/field_formats/flashinfer_check.h"

#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kl::fieldformats {

namespace {

constexpr std::array<std::string_view, 11> kDTypes { "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
    "float4_e2m1", "int64", "int32", "int16", "int8", "bool" };
constexpr std::array<std::string_view, 7> kStatuses { "PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL",
    "INCORRECT_DTYPE", "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT" };
constexpr std::array<std::string_view, 5> kLanguages { "python", "triton", "cpp", "cuda", "tilelang" };

template <std::size_t N> bool oneOf(const std::array<std::string_view, N>& values, const std::string& v)
{
    for (const auto x : values)
        if (x == v)
            return true;
    return false;
}

struct Problems {
    std::string where;
    std::vector<std::string> list;
    void add(const std::string& field, const std::string& what) { list.push_back(where + ": " + field + ": " + what); }
};

bool nonEmptyString(const Json& j) { return j.is_string() && !j.get<std::string>().empty(); }

// A required non-empty string field.
void requireName(Problems& p, const Json& obj, const std::string& field)
{
    const auto it = obj.find(field);
    if (it == obj.end())
        p.add(field, "required field missing");
    else if (!nonEmptyString(*it))
        p.add(field, "must be a non-empty string");
}

// An optional field that may be null or of the given check.
template <class Check> void optional(const Json& obj, const std::string& field, Check check)
{
    const auto it = obj.find(field);
    if (it != obj.end() && !it->is_null())
        check(*it);
}

void stringList(Problems& p, const Json& obj, const std::string& field)
{
    optional(obj, field, [&](const Json& v) {
        if (!v.is_array()) {
            p.add(field, "must be an array of strings");
            return;
        }
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!nonEmptyString(v[i]))
                p.add(field + "[" + std::to_string(i) + "]", "must be a non-empty string");
    });
}

bool isWhole(const Json& j) { return j.is_number_integer() || j.is_number_unsigned(); }
std::int64_t wholeValue(const Json& j)
{
    return j.is_number_unsigned() ? std::int64_t(j.get<std::uint64_t>()) : j.get<std::int64_t>();
}

// A float field that pydantic reads: a JSON number, or the strings its serialiser writes for NaN/inf.
std::optional<double> floatOf(const Json& j)
{
    if (j.is_number())
        return j.get<double>();
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "NaN")
            return NAN;
        if (s == "Infinity")
            return INFINITY;
        if (s == "-Infinity")
            return -INFINITY;
    }
    return std::nullopt;
}

// The reference must be Python with a top-level `def run(`: the models parse it with ast and look for a
// module-level FunctionDef named run. Checked here as text: a line starting "def run(" at column 0.
bool hasTopLevelRun(const std::string& code)
{
    std::istringstream in(code);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("def run(", 0) == 0 || line.rfind("def run (", 0) == 0)
            return true;
    return false;
}

void checkTensor(Problems& p, const Json& t, const std::string& field, const Json& axes)
{
    if (!t.is_object()) {
        p.add(field, "must be an object (shape, dtype)");
        return;
    }
    const auto shape = t.find("shape");
    if (shape == t.end())
        p.add(field + ".shape", "required field missing (null for a scalar)");
    else if (!shape->is_null()) {
        if (!shape->is_array())
            p.add(field + ".shape", "must be an array of axis names or null");
        else
            for (std::size_t i = 0; i < shape->size(); ++i) {
                const auto& a = (*shape)[i];
                if (!nonEmptyString(a))
                    p.add(field + ".shape[" + std::to_string(i) + "]", "must be a non-empty axis name");
                else if (axes.is_object() && !axes.contains(a.get<std::string>()))
                    p.add(field + ".shape[" + std::to_string(i) + "]",
                        "references undefined axis \"" + a.get<std::string>() + "\"");
            }
    }
    const auto dtype = t.find("dtype");
    if (dtype == t.end())
        p.add(field + ".dtype", "required field missing");
    else if (!dtype->is_string() || !oneOf(kDTypes, dtype->get<std::string>()))
        p.add(field + ".dtype", "not one of the Definition's dtypes (float32, float16, bfloat16, float8_e4m3fn, ...)");
    optional(t, "description", [&](const Json& v) {
        if (!v.is_string())
            p.add(field + ".description", "must be a string");
    });
}

void checkWorkloadObject(Problems& p, const Json& w, const Json* definition)
{
    if (!w.is_object()) {
        p.add("workload", "must be an object (uuid, axes, inputs)");
        return;
    }
    requireName(p, w, "uuid");
    const auto axes = w.find("axes");
    if (axes == w.end() || !axes->is_object())
        p.add("workload.axes", "required: an object of axis values");
    else
        for (const auto& [name, value] : axes->items())
            if (!isWhole(value) || wholeValue(value) < 0)
                p.add("workload.axes." + name, "must be a whole number of at least 0");
    const auto inputs = w.find("inputs");
    if (inputs == w.end() || !inputs->is_object()) {
        p.add("workload.inputs", "required: an object of input descriptors");
        return;
    }
    for (const auto& [name, in] : inputs->items()) {
        const std::string field = "workload.inputs." + name;
        const auto type = in.is_object() ? in.find("type") : in.end();
        if (!in.is_object() || type == in.end() || !type->is_string()) {
            p.add(field, "must be an object with a type (random, scalar, safetensors)");
            continue;
        }
        const auto t = type->get<std::string>();
        if (t == "scalar") {
            const auto v = in.find("value");
            if (v == in.end() || !(v->is_number() || v->is_boolean()))
                p.add(field + ".value", "a scalar input needs a value (int, float or bool)");
        } else if (t == "safetensors") {
            requireName(p, in, "path");
            requireName(p, in, "tensor_key");
        } else if (t != "random") {
            p.add(field + ".type", "\"" + t + "\" is not random, scalar or safetensors");
        }
    }
    if (!definition || !definition->is_object())
        return;
    // Against its definition (the validator's "workload" check): every var axis, no other, all > 0; the
    // same inputs, scalars where the definition has shape null.
    const auto& dAxes = fieldOf(*definition, "axes");
    if (axes != w.end() && axes->is_object() && dAxes.is_object()) {
        for (const auto& [name, axis] : dAxes.items())
            if (axis.is_object() && textOf(axis, "type") == "var") {
                if (!axes->contains(name))
                    p.add("workload.axes." + name, "the definition's var axis has no value");
                else if (isWhole((*axes)[name]) && wholeValue((*axes)[name]) <= 0)
                    p.add("workload.axes." + name, "must be above 0");
            }
        for (const auto& [name, value] : axes->items())
            if (!dAxes.contains(name) || textOf(dAxes[name], "type") != "var")
                p.add("workload.axes." + name, "not a var axis of the definition");
    }
    const auto& dInputs = fieldOf(*definition, "inputs");
    if (dInputs.is_object()) {
        for (const auto& [name, spec] : dInputs.items()) {
            if (!inputs->contains(name)) {
                p.add("workload.inputs." + name, "the definition's input has no descriptor");
                continue;
            }
            const bool scalar = spec.is_object() && spec.contains("shape") && spec["shape"].is_null();
            const bool given = (*inputs)[name].is_object() && textOf((*inputs)[name], "type") == "scalar";
            if (scalar != given)
                p.add("workload.inputs." + name,
                    scalar ? "a scalar input (shape null) needs type scalar" : "a tensor input cannot be a scalar");
        }
        for (const auto& [name, in] : inputs->items())
            if (!dInputs.contains(name))
                p.add("workload.inputs." + name, "not an input of the definition");
    }
}

void checkEvaluation(Problems& p, const Json& e)
{
    if (!e.is_object()) {
        p.add("evaluation", "must be an object or null");
        return;
    }
    std::string status;
    const auto s = e.find("status");
    if (s == e.end() || !s->is_string() || !oneOf(kStatuses, s->get<std::string>()))
        p.add("evaluation.status",
            "must be one of PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, "
            "RUNTIME_ERROR, COMPILE_ERROR, TIMEOUT");
    else
        status = s->get<std::string>();
    requireName(p, e, "timestamp");
    optional(e, "log", [&](const Json& v) {
        if (!v.is_string())
            p.add("evaluation.log", "must be a string");
    });
    const auto env = e.find("environment");
    if (env == e.end() || !env->is_object())
        p.add("evaluation.environment", "required: an object (hardware, libs)");
    else {
        if (!env->contains("hardware") || !nonEmptyString((*env)["hardware"]))
            p.add("evaluation.environment.hardware", "must be a non-empty string");
        optional(*env, "libs", [&](const Json& libs) {
            if (!libs.is_object())
                p.add("evaluation.environment.libs", "must be an object of version strings");
            else
                for (const auto& [name, version] : libs.items())
                    if (!version.is_string())
                        p.add("evaluation.environment.libs." + name, "must be a version string");
        });
    }
    const bool hasCorrectness = e.contains("correctness") && !e["correctness"].is_null();
    const bool hasPerformance = e.contains("performance") && !e["performance"].is_null();
    if (hasCorrectness) {
        const auto& c = fieldOf(e, "correctness");
        for (const char* f : { "max_relative_error", "max_absolute_error" }) {
            const auto v = c.is_object() && c.contains(f) ? floatOf(c[f]) : std::optional<double>(0.0);
            if (!c.is_object() || !v || (!std::isnan(*v) && *v < 0))
                p.add(std::string("evaluation.correctness.") + f, "must be a number of at least 0, or NaN");
        }
    }
    if (hasPerformance) {
        const auto& perf = fieldOf(e, "performance");
        for (const char* f : { "latency_ms", "reference_latency_ms", "speedup_factor" }) {
            const auto v = perf.is_object() && perf.contains(f) ? floatOf(perf[f]) : std::optional<double>(0.0);
            if (!perf.is_object() || !v || std::isnan(*v) || *v < 0)
                p.add(std::string("evaluation.performance.") + f, "must be a number of at least 0");
        }
    }
    // The nullable table (trace.mdx; Evaluation's model validator).
    if (status == "PASSED" && (!hasCorrectness || !hasPerformance))
        p.add("evaluation", "PASSED needs correctness and performance");
    else if (status == "INCORRECT_NUMERICAL" && (!hasCorrectness || hasPerformance))
        p.add("evaluation", "INCORRECT_NUMERICAL needs correctness and no performance");
    else if (!status.empty() && status != "PASSED" && status != "INCORRECT_NUMERICAL"
        && (hasCorrectness || hasPerformance))
        p.add("evaluation", status + " carries neither correctness nor performance");
}

Json readJson(const std::filesystem::path& file, std::vector<std::string>& problems, const std::string& where)
{
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    auto j = Json::parse(text.str(), nullptr, false);
    if (j.is_discarded())
        problems.push_back(where + ": not JSON");
    return j;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from)
{
    to.insert(to.end(), from.begin(), from.end());
}

} // namespace

// A field, or null where it is missing (operator[] of a const value may not be asked for a missing key).
const Json& fieldOf(const Json& obj, const char* field)
{
    static const Json none;
    if (!obj.is_object())
        return none;
    const auto it = obj.find(field);
    return it == obj.end() ? none : *it;
}

// A field's text, empty when it is missing or not a string (Json::value throws on a wrong type).
std::string textOf(const Json& obj, const char* field)
{
    if (!obj.is_object())
        return {};
    const auto it = obj.find(field);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> checkDefinition(const Json& d, const std::string& where)
{
    Problems p { where, {} };
    if (!d.is_object()) {
        p.add("(top)", "a Definition is an object");
        return p.list;
    }
    requireName(p, d, "name");
    requireName(p, d, "op_type");
    requireName(p, d, "reference");
    if (d.contains("reference") && d["reference"].is_string() && !hasTopLevelRun(d["reference"].get<std::string>()))
        p.add("reference", "must define a top-level function named run");
    stringList(p, d, "tags");
    stringList(p, d, "constraints");
    optional(d, "description", [&](const Json& v) {
        if (!v.is_string())
            p.add("description", "must be a string or null");
    });
    const auto axes = d.find("axes");
    if (axes == d.end() || !axes->is_object())
        p.add("axes", "required: an object of axis definitions");
    else
        for (const auto& [name, a] : axes->items()) {
            const std::string field = "axes." + name;
            if (name.empty())
                p.add(field, "an axis needs a non-empty name");
            if (!a.is_object() || !a.contains("type")) {
                p.add(field, "must be an object with type const or var");
                continue;
            }
            const auto type = a["type"].is_string() ? a["type"].get<std::string>() : std::string();
            if (type == "const") {
                if (!a.contains("value") || !isWhole(a["value"]) || wholeValue(a["value"]) < 0)
                    p.add(field + ".value", "a const axis needs a whole value of at least 0");
            } else if (type != "var") {
                p.add(field + ".type", "must be \"const\" or \"var\"");
            }
        }
    const Json noAxes = Json::object();
    const Json& axesRef = axes != d.end() ? *axes : noAxes;
    std::set<std::string> inputNames;
    for (const char* part : { "inputs", "outputs" }) {
        const auto tensors = d.find(part);
        if (tensors == d.end() || !tensors->is_object()) {
            p.add(part, "required: an object of tensor specs");
            continue;
        }
        for (const auto& [name, t] : tensors->items()) {
            if (name.empty())
                p.add(part, "a tensor needs a non-empty name");
            checkTensor(p, t, std::string(part) + "." + name, axesRef);
            if (std::string(part) == "inputs")
                inputNames.insert(name);
            else if (inputNames.count(name))
                p.add("outputs." + name, "input and output names must not overlap");
        }
    }
    return p.list;
}

std::vector<std::string> checkSolution(const Json& s, const std::string& where)
{
    Problems p { where, {} };
    if (!s.is_object()) {
        p.add("(top)", "a Solution is an object");
        return p.list;
    }
    requireName(p, s, "name");
    requireName(p, s, "definition");
    requireName(p, s, "author");
    optional(s, "description", [&](const Json& v) {
        if (!v.is_string())
            p.add("description", "must be a string or null");
    });
    std::string entryFile;
    const auto spec = s.find("spec");
    if (spec == s.end() || !spec->is_object())
        p.add("spec", "required: the build specification");
    else {
        if (!spec->contains("language") || !(*spec)["language"].is_string()
            || !oneOf(kLanguages, (*spec)["language"].get<std::string>()))
            p.add("spec.language", "must be python, triton, cpp, cuda or tilelang");
        const auto hw = spec->find("target_hardware");
        if (hw == spec->end() || !hw->is_array() || hw->empty())
            p.add("spec.target_hardware", "required: a list of at least one hardware name");
        else
            for (const auto& h : *hw)
                if (!h.is_string())
                    p.add("spec.target_hardware", "must hold strings");
        const auto entry = spec->find("entry_point");
        if (entry == spec->end() || !nonEmptyString(*entry))
            p.add("spec.entry_point", "required: \"<file_path>::<function_name>\"");
        else {
            const auto e = entry->get<std::string>();
            const auto at = e.find("::");
            if (at == std::string::npos || e.find("::", at + 2) != std::string::npos)
                p.add("spec.entry_point", "must hold \"::\" exactly once: \"<file_path>::<function_name>\"");
            else
                entryFile = e.substr(0, at);
        }
        stringList(p, *spec, "dependencies");
        optional(*spec, "destination_passing_style", [&](const Json& v) {
            if (!v.is_boolean())
                p.add("spec.destination_passing_style", "must be true or false");
        });
        optional(*spec, "binding", [&](const Json& v) {
            if (!v.is_string() || (v.get<std::string>() != "tvm-ffi" && v.get<std::string>() != "torch"))
                p.add("spec.binding", "must be tvm-ffi or torch");
        });
    }
    const auto sources = s.find("sources");
    if (sources == s.end() || !sources->is_array() || sources->empty()) {
        p.add("sources", "required: at least one source file");
        return p.list;
    }
    std::set<std::string> paths;
    for (std::size_t i = 0; i < sources->size(); ++i) {
        const auto& f = (*sources)[i];
        const std::string field = "sources[" + std::to_string(i) + "]";
        if (!f.is_object() || !f.contains("path") || !nonEmptyString(f["path"]) || !f.contains("content")
            || !nonEmptyString(f["content"])) {
            p.add(field, "needs a non-empty path and content");
            continue;
        }
        const std::filesystem::path path(f["path"].get<std::string>());
        if (path.is_absolute())
            p.add(field + ".path", "absolute paths are not allowed");
        for (const auto& part : path)
            if (part == "..")
                p.add(field + ".path", "parent directory traversal (..) is not allowed");
        if (!paths.insert(path.string()).second)
            p.add(field + ".path", "duplicate source path");
    }
    if (!entryFile.empty() && !paths.count(entryFile))
        p.add("spec.entry_point", "entry source file \"" + entryFile + "\" is not among the sources");
    return p.list;
}

std::vector<std::string> checkTrace(const Json& t, bool workloadOnly, const Json* definition, const std::string& where)
{
    Problems p { where, {} };
    if (!t.is_object()) {
        p.add("(top)", "a Trace is an object");
        return p.list;
    }
    requireName(p, t, "definition");
    if (!t.contains("workload"))
        p.add("workload", "required field missing");
    else
        checkWorkloadObject(p, t["workload"], definition);
    const bool hasSolution = t.contains("solution") && !t["solution"].is_null();
    const bool hasEvaluation = t.contains("evaluation") && !t["evaluation"].is_null();
    if (hasSolution && !t["solution"].is_string())
        p.add("solution", "must be a solution name or null");
    if (workloadOnly && (hasSolution || hasEvaluation))
        p.add("(top)", "a workload entry has no solution and no evaluation");
    if (!workloadOnly && (!hasSolution || !hasEvaluation))
        p.add("(top)", "a trace entry needs a solution and an evaluation");
    if (hasEvaluation)
        checkEvaluation(p, t["evaluation"]);
    return p.list;
}

std::vector<std::string> checkTraceSet(const std::filesystem::path& dir)
{
    std::vector<std::string> problems;
    const auto relative = [&](const std::filesystem::path& f) { return f.lexically_relative(dir).generic_string(); };
    const auto filesUnder = [&](const std::string& part, const std::string& ext) {
        std::vector<std::filesystem::path> files;
        std::error_code ec;
        if (!std::filesystem::is_directory(dir / part, ec))
            return files;
        for (auto it = std::filesystem::recursive_directory_iterator(dir / part, ec);
             it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file() && it->path().extension() == ext)
                files.push_back(it->path());
        std::sort(files.begin(), files.end());
        return files;
    };

    std::map<std::string, Json> definitions; // by name
    std::map<std::string, std::string> opTypes; // definition -> op_type
    for (const auto& f : filesUnder("definitions", ".json")) {
        const auto where = relative(f);
        const auto d = readJson(f, problems, where);
        if (d.is_discarded())
            continue;
        append(problems, checkDefinition(d, where));
        if (!d.is_object() || !d.contains("name") || !d["name"].is_string())
            continue;
        const auto name = d["name"].get<std::string>();
        const auto op = textOf(d, "op_type");
        // definitions/<op_type>/<definition>.json
        const auto parts = std::filesystem::path(where);
        if (f.stem().string() != name || f.parent_path().filename().string() != op)
            problems.push_back(where + ": layout: should be definitions/" + op + "/" + name + ".json");
        if (definitions.count(name))
            problems.push_back(where + ": duplicate definition name " + name);
        definitions[name] = d;
        opTypes[name] = op;
    }
    if (definitions.empty())
        problems.push_back(dir.string() + ": no definitions/*.json");

    std::set<std::string> solutions;
    for (const auto& f : filesUnder("solutions", ".json")) {
        const auto where = relative(f);
        const auto s = readJson(f, problems, where);
        if (s.is_discarded())
            continue;
        append(problems, checkSolution(s, where));
        if (!s.is_object())
            continue;
        const auto name = textOf(s, "name"), definition = textOf(s, "definition"), author = textOf(s, "author");
        if (!solutions.insert(name).second)
            problems.push_back(where + ": duplicate solution name " + name);
        if (!definitions.count(definition))
            problems.push_back(where + ": definition \"" + definition + "\" is not in definitions/");
        // solutions/<author>/<op_type>/<definition>/<solution>.json
        const auto p = f.parent_path();
        if (f.stem().string() != name || p.filename().string() != definition
            || p.parent_path().filename().string() != opTypes[definition]
            || p.parent_path().parent_path().filename().string() != author)
            problems.push_back(where + ": layout: should be solutions/" + author + "/" + opTypes[definition] + "/"
                + definition + "/" + name + ".json");
    }

    for (const bool workloads : { true, false }) {
        const std::string part = workloads ? "workloads" : "traces";
        for (const auto& f : filesUnder(part, ".jsonl")) {
            const auto where = relative(f);
            std::ifstream in(f, std::ios::binary);
            int lineNumber = 0;
            for (std::string line; std::getline(in, line);) {
                ++lineNumber;
                if (line.empty())
                    continue;
                const auto at = where + ":" + std::to_string(lineNumber);
                const auto t = Json::parse(line, nullptr, false);
                if (t.is_discarded()) {
                    problems.push_back(at + ": not JSON");
                    continue;
                }
                const auto name = t.is_object() ? textOf(t, "definition") : std::string();
                const auto d = definitions.find(name);
                if (d == definitions.end())
                    problems.push_back(at + ": definition \"" + name + "\" is not in definitions/");
                append(problems, checkTrace(t, workloads, d == definitions.end() ? nullptr : &d->second, at));
                // workloads/<op_type>/<definition>.jsonl, traces/<author>/<op_type>/<definition>.jsonl
                if (f.stem().string() != name || f.parent_path().filename().string() != opTypes[name])
                    problems.push_back(at + ": layout: its definition " + name + " belongs in " + part + "/"
                        + (workloads ? "" : "<author>/") + opTypes[name] + "/" + name + ".jsonl");
                if (!workloads && t.is_object() && t.contains("solution") && t["solution"].is_string()
                    && !solutions.count(t["solution"].get<std::string>()))
                    problems.push_back(
                        at + ": solution \"" + t["solution"].get<std::string>() + "\" is not in solutions/");
            }
        }
    }
    return problems;
}

} // namespace kl::fieldformats
