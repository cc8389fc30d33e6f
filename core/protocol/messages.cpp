// JSON of the unsolicited messages and the requests; results are in result_json.cpp.
#include "core/protocol/messages.h"

#include "core/model/error.h"
#include "core/model/launch_plan.h"
#include "core/protocol/base64.h"
#include "core/protocol/json_reader.h"
#include "core/protocol/wire.h"

#include <cmath>
#include <limits>
#include <set>

namespace kl::protocol {

namespace {

constexpr std::array<std::pair<MetricSet, std::string_view>, 4> kMetricSets { {
    { MetricSet::None, "none" },
    { MetricSet::Default, "default" },
    { MetricSet::SpeedOfLight, "sol" },
    { MetricSet::Stalls, "stalls" },
} };

constexpr std::array<std::pair<CaseKind, std::string_view>, 3> kCaseKinds { {
    { CaseKind::Main, "main" },
    { CaseKind::Fuzz, "fuzz" },
    { CaseKind::Padded, "padded" },
} };

constexpr std::array<std::pair<Distribution::Kind, std::string_view>, 4> kDistributions { {
    { Distribution::Kind::Normal, "normal" },
    { Distribution::Kind::Uniform, "uniform" },
    { Distribution::Kind::Integers, "integers" },
    { Distribution::Kind::Constant, "constant" },
} };

constexpr std::array<DType, 8> kArgTypes { DType::I32, DType::I64, DType::F32, DType::F64, DType::F16, DType::BF16,
    DType::U8, DType::I8 };

// ---- pieces of a request ----

nlohmann::json toJson(const Distribution& d)
{
    return { { "kind", nameOf(kDistributions, d.kind) }, { "a", d.a }, { "b", d.b } };
}

Distribution readDistribution(const JsonReader& r)
{
    Distribution d;
    d.kind = readEnum(r, "kind", kDistributions);
    d.a = r.number("a");
    d.b = r.numberOr("b", d.kind == Distribution::Kind::Constant ? d.a : 1.0);
    return d;
}

nlohmann::json toJson(const Buffer& b)
{
    nlohmann::json j { { "name", b.name }, { "role", b.role == PlannedBuffer::Role::Output ? "output" : "input" },
        { "dtype", dtypeName(b.dtype) }, { "rows", b.rows }, { "row_length", b.rowLength },
        { "row_stride", b.rowStride } };
    if (b.distribution)
        j["distribution"] = toJson(*b.distribution);
    return j;
}

Buffer readBuffer(const JsonReader& r)
{
    r.requireObject();
    Buffer b;
    b.name = r.string("name");
    const auto role = r.string("role");
    if (role == "input")
        b.role = PlannedBuffer::Role::Input;
    else if (role == "output")
        b.role = PlannedBuffer::Role::Output;
    else
        r.fail("role", "\"" + role + "\" is not input or output");
    b.dtype = readDType(r, "dtype");
    b.rows = r.integer("rows");
    b.rowLength = r.integer("row_length");
    b.rowStride = r.integerOr("row_stride", b.rowLength);
    if (b.rows < 0)
        r.fail("rows", "must not be negative");
    if (b.rowLength < 0)
        r.fail("row_length", "must not be negative");
    if (b.rowStride < b.rowLength)
        r.fail("row_stride", "is below row_length");
    if (auto d = r.optionalObject("distribution"))
        b.distribution = readDistribution(*d);
    return b;
}

nlohmann::json toJson(const Arg& arg)
{
    if (const auto* b = std::get_if<BufferArg>(&arg))
        return { { "buffer", b->name } };
    const auto& s = std::get<ScalarArg>(arg);
    nlohmann::json j = nlohmann::json::object();
    const std::string key(dtypeName(s.type));
    if (const auto* i = std::get_if<std::int64_t>(&s.value))
        j[key] = *i;
    else
        j[key] = std::get<double>(s.value);
    return j;
}

Arg readArg(const JsonReader& r)
{
    r.requireObject();
    std::optional<DType> type;
    for (const auto t : kArgTypes)
        if (r.value().contains(std::string(dtypeName(t)))) {
            if (type)
                r.fail("has both " + std::string(dtypeName(*type)) + " and " + std::string(dtypeName(t)));
            type = t;
        }
    if (r.value().contains("buffer")) {
        if (type)
            r.fail("has both buffer and " + std::string(dtypeName(*type)));
        return BufferArg { r.string("buffer") };
    }
    if (!type)
        r.fail("needs exactly one of buffer, i32, i64, f32, f64, f16, bf16, u8, i8");
    const std::string key(dtypeName(*type));
    if (!isFloating(*type)) {
        const auto value = r.integer(key);
        try {
            return makeScalarArg(*type, static_cast<double>(value));
        } catch (const Error& e) {
            r.fail(key, e.message());
        }
    }
    const auto value = r.value().at(key);
    if (!value.is_number())
        r.fail(key, "must be a number, got " + jsonTypeName(value));
    return ScalarArg { *type, value.get<double>() };
}

nlohmann::json toJson(const Launch& l)
{
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args)
        args.push_back(toJson(a));
    return { { "kernel", l.kernel }, { "grid", l.grid }, { "block", l.block }, { "smem", l.sharedBytes },
        { "args", args } };
}

std::array<std::int64_t, 3> readDim3(const JsonReader& r, const std::string& key)
{
    const auto items = r.array(key);
    if (items.size() != 3)
        r.fail(key, "must have 3 elements, has " + std::to_string(items.size()));
    std::array<std::int64_t, 3> dims {};
    for (std::size_t i = 0; i < 3; ++i) {
        dims[i] = items[i].asInteger();
        if (dims[i] < 1)
            items[i].fail("must be at least 1");
    }
    return dims;
}

Launch readLaunch(const JsonReader& r)
{
    r.requireObject();
    Launch l;
    l.kernel = r.string("kernel");
    if (l.kernel.empty())
        r.fail("kernel", "must not be empty");
    l.grid = readDim3(r, "grid");
    l.block = readDim3(r, "block");
    l.sharedBytes = r.integerOr("smem", 0);
    if (l.sharedBytes < 0)
        r.fail("smem", "must not be negative");
    for (const auto& a : r.array("args"))
        l.args.push_back(readArg(a));
    return l;
}

nlohmann::json toJson(const Program& p)
{
    nlohmann::json scratch = nlohmann::json::array();
    for (const auto& s : p.scratch)
        scratch.push_back({ { "name", s.name }, { "dtype", dtypeName(s.dtype) }, { "elements", s.elements },
            { "zeroed", s.zeroed } });
    nlohmann::json launches = nlohmann::json::array();
    for (const auto& l : p.launches)
        launches.push_back(toJson(l));
    return { { "scratch", scratch }, { "launches", launches } };
}

// Buffer arguments must name a tensor of the case or a scratch buffer of this program.
Program readProgram(const JsonReader& r, const std::vector<Buffer>& buffers)
{
    r.requireObject();
    Program p;
    std::set<std::string> names;
    for (const auto& b : buffers)
        names.insert(b.name);
    for (const auto& s : r.arrayOr("scratch")) {
        s.requireObject();
        Scratch scratch;
        scratch.name = s.string("name");
        scratch.dtype = readDType(s, "dtype");
        scratch.elements = s.integer("elements");
        if (scratch.elements < 0)
            s.fail("elements", "must not be negative");
        scratch.zeroed = s.booleanOr("zeroed", false);
        if (!names.insert(scratch.name).second)
            s.fail("name", "\"" + scratch.name + "\" is already a buffer's name");
        p.scratch.push_back(std::move(scratch));
    }
    const auto launches = r.array("launches");
    if (launches.empty())
        r.fail("launches", "must not be empty");
    for (const auto& l : launches) {
        p.launches.push_back(readLaunch(l));
        const auto args = l.array("args");
        for (std::size_t i = 0; i < args.size(); ++i)
            if (const auto* b = std::get_if<BufferArg>(&p.launches.back().args[i]); b && !names.count(b->name))
                args[i].fail("buffer", "no tensor or scratch buffer is named \"" + b->name + "\"");
    }
    return p;
}

nlohmann::json toJson(const Case& c)
{
    nlohmann::json buffers = nlohmann::json::array();
    for (const auto& b : c.buffers)
        buffers.push_back(toJson(b));
    nlohmann::json programs { { "candidate", toJson(c.programs.candidate) } };
    if (!c.programs.reference.launches.empty()) // none with a Python reference
        programs["reference"] = toJson(c.programs.reference);
    if (c.programs.baseline)
        programs["baseline"] = toJson(*c.programs.baseline);
    nlohmann::json j { { "label", c.label }, { "kind", caseKindName(c.kind) }, { "timed", c.timed },
        { "bytes", wholeOrReal(c.bytes) }, { "flops", wholeOrReal(c.flops) }, { "buffers", buffers },
        { "programs", programs } };
    if (!c.shapes.empty())
        j["shapes"] = c.shapes;
    if (c.compute)
        j["compute"] = precisionName(*c.compute);
    if (c.computeReason)
        j["compute_reason"] = ceilingReasonName(*c.computeReason);
    return j;
}

Case readCase(const JsonReader& r)
{
    r.requireObject();
    Case c;
    c.label = r.string("label");
    c.kind = readEnum(r, "kind", kCaseKinds);
    c.timed = r.booleanOr("timed", false);
    c.bytes = r.numberOr("bytes", 0.0);
    c.flops = r.numberOr("flops", 0.0);
    if (const auto compute = r.stringOr("compute", ""); !compute.empty()) {
        c.compute = parsePrecision(compute);
        if (!c.compute)
            r.fail("compute", "unknown precision \"" + compute + "\"");
    }
    c.computeReason = parseCeilingReason(r.stringOr("compute_reason", "")); // an unknown one: said without why
    if (auto shapes = r.optionalObject("shapes"))
        for (const auto& [name, dims] : shapes->value().items()) {
            if (!dims.is_array())
                shapes->fail(name, "must be an array of sizes");
            for (const auto& d : dims) {
                if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
                    shapes->fail(name, "must hold whole sizes, none negative");
                c.shapes[name].push_back(d.get<std::int64_t>());
            }
        }
    std::set<std::string> names;
    for (const auto& b : r.array("buffers")) {
        c.buffers.push_back(readBuffer(b));
        if (!names.insert(c.buffers.back().name).second)
            b.fail("name", "\"" + c.buffers.back().name + "\" appears twice");
    }
    const auto programs = r.object("programs");
    if (auto reference = programs.optionalObject("reference")) // absent with a Python reference
        c.programs.reference = readProgram(*reference, c.buffers);
    c.programs.candidate = readProgram(programs.object("candidate"), c.buffers);
    if (auto b = programs.optionalObject("baseline"))
        c.programs.baseline = readProgram(*b, c.buffers);
    return c;
}

Module readModule(const JsonReader& r)
{
    auto bytes = base64Decode(r.string("cubin_b64"));
    if (!bytes)
        r.fail("cubin_b64", "is not valid base64");
    if (bytes->empty())
        r.fail("cubin_b64", "is empty");
    return Module { std::move(*bytes) };
}

nlohmann::json toJson(const Module& m) { return { { "cubin_b64", base64Encode(m.cubin) } }; }

} // namespace

// ---- enums ----

std::string_view metricSetName(MetricSet set) { return nameOf(kMetricSets, set); }
std::optional<MetricSet> parseMetricSet(std::string_view name) { return valueOf(kMetricSets, name); }
std::string_view caseKindName(CaseKind kind) { return nameOf(kCaseKinds, kind); }
std::optional<CaseKind> parseCaseKind(std::string_view name) { return valueOf(kCaseKinds, name); }

ScalarArg makeScalarArg(DType type, double value)
{
    checkArgValue(type, value); // the planner's rule: what `check` passes, a job accepts
    if (isFloating(type))
        return ScalarArg { type, value };
    return ScalarArg { type, static_cast<std::int64_t>(value) };
}

// ---- messages ----

void to_json(nlohmann::json& j, const Hello& m)
{
    j = envelope(Hello::kType);
    j["protocol"] = m.protocol;
    j["runner"] = m.runner;
    j["pid"] = m.pid;
    j["device_status"] = m.deviceOk ? "ok" : "no-device";
    j["device_index"] = m.deviceIndex;
    if (!m.detail.empty())
        j["detail"] = m.detail;
}

void from_json(const nlohmann::json& j, Hello& m)
{
    const auto r = openEnvelope(j, Hello::kType);
    m.protocol = static_cast<int>(r.integer("protocol"));
    if (m.protocol != kProtocolVersion)
        r.fail("protocol",
            "runner speaks protocol " + std::to_string(m.protocol) + ", this client speaks "
                + std::to_string(kProtocolVersion));
    m.runner = r.stringOr("runner", "");
    m.pid = r.integerOr("pid", 0);
    const auto status = r.string("device_status");
    if (status != "ok" && status != "no-device")
        r.fail("device_status", "\"" + status + "\" is not ok or no-device");
    m.deviceOk = status == "ok";
    m.detail = r.stringOr("detail", "");
    m.deviceIndex = static_cast<int>(r.integerOr("device_index", 0));
}

void to_json(nlohmann::json& j, const Progress& m)
{
    j = envelope(Progress::kType, m.id);
    j["phase"] = m.phase;
    j["done"] = m.done;
    j["total"] = m.total;
}

void from_json(const nlohmann::json& j, Progress& m)
{
    const auto r = openEnvelope(j, Progress::kType);
    m.id = r.string("id");
    m.phase = r.string("phase");
    m.done = r.integerOr("done", 0);
    m.total = r.integerOr("total", 0);
}

void to_json(nlohmann::json& j, const DescribeRequest& m) { j = envelope(DescribeRequest::kType, m.id); }

void from_json(const nlohmann::json& j, DescribeRequest& m)
{
    m.id = openEnvelope(j, DescribeRequest::kType).string("id");
}

void to_json(nlohmann::json& j, const ShutdownRequest& m) { j = envelope(ShutdownRequest::kType, m.id); }

void from_json(const nlohmann::json& j, ShutdownRequest& m)
{
    m.id = openEnvelope(j, ShutdownRequest::kType).string("id");
}

void to_json(nlohmann::json& j, const EvaluateRequest& m)
{
    j = envelope(EvaluateRequest::kType, m.id);
    const auto& o = m.options;
    j["options"] = { { "seed", o.seed }, { "trials", o.trials }, { "warmup_ms", o.warmupMs }, { "min_reps", o.minReps },
        { "max_reps", o.maxReps }, { "time_budget_ms", o.timeBudgetMs }, { "flush_bytes", o.flushBytes },
        { "graph_below_us", o.graphBelowUs }, { "profile", metricSetName(o.profile) }, { "pc_sampling", o.pcSampling },
        { "time", o.time },
        { "repetitions", o.repetitions == EvaluateOptions::Repetitions::Fixed ? "fixed" : "adaptive" },
        { "interval_half_width", o.intervalHalfWidth }, { "adaptive_min_reps", o.adaptiveMinReps } };
    if (o.profileMinSpeedup > 0.0)
        j["options"]["profile_min_speedup"] = o.profileMinSpeedup;
    nlohmann::json modules { { "candidate", toJson(m.modules.candidate) } };
    if (!m.pythonReference)
        modules["reference"] = toJson(m.modules.reference);
    if (m.modules.baseline)
        modules["baseline"] = toJson(*m.modules.baseline);
    j["modules"] = modules;
    if (m.pythonReference) {
        nlohmann::json scalars = nlohmann::json::object();
        for (const auto& [name, value] : m.pythonReference->scalars)
            scalars[name] = value;
        j["python_reference"] = { { "source", m.pythonReference->source }, { "file", m.pythonReference->fileName },
            { "scalars", scalars } };
    }
    nlohmann::json tolerances = nlohmann::json::object();
    for (const auto& [type, t] : m.tolerances)
        tolerances[std::string(dtypeName(type))] = { { "atol", t.atol }, { "rtol", t.rtol } };
    j["tolerances"] = tolerances;
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : m.cases)
        cases.push_back(toJson(c));
    j["cases"] = cases;
}

void from_json(const nlohmann::json& j, EvaluateRequest& m)
{
    const auto r = openEnvelope(j, EvaluateRequest::kType);
    m.id = r.string("id");
    if (auto o = r.optionalObject("options")) {
        auto& opt = m.options;
        opt.seed = o->unsignedOr("seed", opt.seed);
        opt.trials = static_cast<int>(o->integerOr("trials", opt.trials));
        if (opt.trials < 1 || opt.trials > 100)
            o->fail("trials", "must be within 1..100");
        opt.warmupMs = o->numberOr("warmup_ms", opt.warmupMs);
        opt.minReps = static_cast<int>(o->integerOr("min_reps", opt.minReps));
        opt.maxReps = static_cast<int>(o->integerOr("max_reps", opt.maxReps));
        if (opt.minReps < 1 || opt.maxReps < opt.minReps)
            o->fail("max_reps", "need 1 <= min_reps <= max_reps");
        opt.timeBudgetMs = o->numberOr("time_budget_ms", opt.timeBudgetMs);
        opt.flushBytes = o->integerOr("flush_bytes", opt.flushBytes);
        if (opt.flushBytes < 0)
            o->fail("flush_bytes", "must not be negative");
        opt.graphBelowUs = o->numberOr("graph_below_us", opt.graphBelowUs);
        if (o->has("profile"))
            opt.profile = readEnum(*o, "profile", kMetricSets);
        opt.profileMinSpeedup = o->numberOr("profile_min_speedup", opt.profileMinSpeedup);
        if (!(opt.profileMinSpeedup >= 0.0))
            o->fail("profile_min_speedup", "must not be negative");
        opt.pcSampling = o->booleanOr("pc_sampling", opt.pcSampling);
        opt.time = o->booleanOr("time", opt.time);
        if (o->has("repetitions")) {
            const std::string repetitions = o->string("repetitions");
            if (repetitions != "adaptive" && repetitions != "fixed")
                o->fail("repetitions", "must be \"adaptive\" or \"fixed\"");
            opt.repetitions
                = repetitions == "fixed" ? EvaluateOptions::Repetitions::Fixed : EvaluateOptions::Repetitions::Adaptive;
        }
        opt.intervalHalfWidth = o->numberOr("interval_half_width", opt.intervalHalfWidth);
        if (!(opt.intervalHalfWidth > 0.0))
            o->fail("interval_half_width", "must be positive");
        opt.adaptiveMinReps = static_cast<int>(o->integerOr("adaptive_min_reps", opt.adaptiveMinReps));
        if (opt.adaptiveMinReps < 1) // above max_reps is fine: max_reps wins
            o->fail("adaptive_min_reps", "must be at least 1");
    }
    m.pythonReference.reset();
    if (auto python = r.optionalObject("python_reference")) {
        PythonReference reference { python->string("source"), python->string("file"), {} };
        if (auto scalars = python->optionalObject("scalars"))
            for (const auto& [name, value] : scalars->value().items())
                reference.scalars[name] = scalars->number(name);
        m.pythonReference = std::move(reference);
    }
    const auto modules = r.object("modules");
    if (!m.pythonReference)
        m.modules.reference = readModule(modules.object("reference"));
    m.modules.candidate = readModule(modules.object("candidate"));
    if (auto b = modules.optionalObject("baseline"))
        m.modules.baseline = readModule(*b);
    m.tolerances.clear();
    if (auto t = r.optionalObject("tolerances"))
        for (const auto& [key, value] : t->value().items()) {
            const auto type = parseDType(key);
            if (!type)
                t->fail(key, "\"" + key + "\" is not a dtype");
            const JsonReader tol(value, t->pathOf(key));
            tol.requireObject();
            m.tolerances[*type] = Tolerance { tol.number("atol"), tol.number("rtol") };
        }
    m.cases.clear();
    const auto cases = r.array("cases");
    if (cases.empty())
        r.fail("cases", "must not be empty");
    for (const auto& c : cases) {
        m.cases.push_back(readCase(c));
        if (!m.pythonReference && m.cases.back().programs.reference.launches.empty())
            c.fail("programs", "has no reference program and the request has no python_reference");
        if (m.cases.back().programs.baseline && !m.modules.baseline)
            c.fail("programs", "has a baseline program but the request has no baseline module");
    }
}

// ---- lines ----

nlohmann::json parseLine(std::string_view line)
{
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.empty())
        throw Error("protocol.bad-message", "", "line", "empty line");
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded())
        throw Error(
            "protocol.bad-message", "", "line", "not JSON (garbage or a truncated line): \"" + shorten(line) + "\"");
    const JsonReader r(j, "");
    r.requireObject();
    checkVersion(r);
    r.string("type");
    return j;
}

Request parseRequest(std::string_view line)
{
    const auto j = parseLine(line);
    const auto type = j.at("type").get<std::string>();
    if (type == DescribeRequest::kType)
        return j.get<DescribeRequest>();
    if (type == EvaluateRequest::kType)
        return j.get<EvaluateRequest>();
    if (type == ShutdownRequest::kType)
        return j.get<ShutdownRequest>();
    throw Error("protocol.bad-message", "", "type", "\"" + type + "\" is not a request (describe, evaluate, shutdown)");
}

std::optional<std::string> peekId(std::string_view line)
{
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return std::nullopt;
    const auto it = j.find("id");
    if (it == j.end() || !it->is_string())
        return std::nullopt;
    return it->get<std::string>();
}

} // namespace kl::protocol
