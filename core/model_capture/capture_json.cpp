#include "core/model_capture/capture_json.h"

#include "core/model/error.h"
#include "core/protocol/base64.h"

#include <nlohmann/json.hpp>

namespace kl::model_capture {

namespace {

using json = nlohmann::ordered_json;

json parseReply(const std::string& reply, const std::string& file)
{
    json r;
    try {
        r = json::parse(reply);
    } catch (const json::exception&) {
        throw Error("model.helper-died", file, {}, "the helper ended without a reply");
    }
    if (!r.value("ok", false)) {
        const auto& e = r.contains("error") ? r["error"] : json::object();
        throw Error("model." + e.value("category", std::string("unknown")), file, {},
            e.value("message", std::string("refused")));
    }
    return r;
}

std::vector<std::int64_t> ints(const json& j, const char* key)
{
    std::vector<std::int64_t> out;
    if (j.contains(key))
        for (const auto& v : j[key])
            out.push_back(v.get<std::int64_t>());
    return out;
}

TensorInfo tensorInfo(const json& j)
{
    TensorInfo t;
    if (j.contains("value")) {
        t.isTensor = false;
        t.value = j["value"].get<std::string>();
        return t;
    }
    t.shape = ints(j, "shape");
    t.stride = ints(j, "stride");
    t.dtype = j.value("dtype", std::string());
    t.role = j.value("role", std::string("activation"));
    t.path = j.value("path", std::string());
    return t;
}

std::vector<TensorInfo> tensorInfos(const json& j, const char* key)
{
    std::vector<TensorInfo> out;
    if (j.contains(key))
        for (const auto& t : j[key])
            out.push_back(tensorInfo(t));
    return out;
}

json tensorInfoJson(const TensorInfo& t)
{
    if (!t.isTensor)
        return { { "value", t.value } };
    json j = { { "shape", t.shape }, { "stride", t.stride }, { "dtype", t.dtype }, { "role", t.role } };
    if (!t.path.empty())
        j["path"] = t.path;
    return j;
}

std::vector<std::string> strings(const json& j, const char* key)
{
    std::vector<std::string> out;
    if (j.contains(key))
        for (const auto& v : j[key])
            out.push_back(v.get<std::string>());
    return out;
}

Distribution distribution(const json& j)
{
    Distribution d;
    d.kind = j.value("kind", std::string("normal"));
    if (d.kind == "normal") {
        d.first = j.value("mean", 0.0);
        d.second = j.value("std", 1.0);
    } else {
        d.first = j.value("low", 0.0);
        d.second = j.value("high", 1.0);
    }
    return d;
}

json distributionJson(const Distribution& d)
{
    if (d.kind == "normal")
        return { { "kind", "normal" }, { "mean", d.first }, { "std", d.second } };
    if (d.kind == "integers")
        return { { "kind", "integers" }, { "low", std::int64_t(d.first) }, { "high", std::int64_t(d.second) } };
    return { { "kind", d.kind }, { "low", d.first }, { "high", d.second } };
}

ProblemTensor problemTensor(const json& j)
{
    ProblemTensor t;
    t.name = j.at("name").get<std::string>();
    t.dtype = j.at("dtype").get<std::string>();
    t.shape = ints(j, "shape");
    t.stride = ints(j, "stride");
    t.role = j.value("role", std::string());
    t.weight = j.value("weight", std::string());
    if (j.contains("distribution"))
        t.distribution = distribution(j["distribution"]);
    return t;
}

json problemTensorJson(const ProblemTensor& t, bool input)
{
    json j = { { "name", t.name }, { "dtype", t.dtype }, { "shape", t.shape }, { "stride", t.stride } };
    if (input) {
        j["role"] = t.role;
        if (!t.weight.empty())
            j["weight"] = t.weight;
        j["distribution"] = distributionJson(t.distribution);
    }
    return j;
}

std::vector<ProblemTensor> problemTensors(const json& j, const char* key)
{
    std::vector<ProblemTensor> out;
    if (j.contains(key))
        for (const auto& t : j[key])
            out.push_back(problemTensor(t));
    return out;
}

json modelInfoJson(const ModelInfo& m)
{
    json inputs = json::array(), outputs = json::array();
    for (const auto& t : m.inputs)
        inputs.push_back(tensorInfoJson(t));
    for (const auto& t : m.outputs)
        outputs.push_back(tensorInfoJson(t));
    return { { "name", m.name }, { "file", m.file }, { "spec", m.spec }, { "weights", m.weights }, { "mode", m.mode },
        { "seed", m.seed }, { "torch", m.torchVersion }, { "inputs", inputs }, { "outputs", outputs },
        { "forward_ms", m.forwardMs }, { "parameters", m.parameters } };
}

ModelInfo modelInfo(const json& j)
{
    ModelInfo m;
    m.name = j.value("name", std::string());
    m.file = j.value("file", std::string());
    m.spec = j.value("spec", std::string());
    m.weights = j.value("weights", std::string());
    m.mode = j.value("mode", std::string());
    m.seed = j.value("seed", 0);
    m.torchVersion = j.value("torch", std::string());
    m.inputs = tensorInfos(j, "inputs");
    m.outputs = tensorInfos(j, "outputs");
    m.forwardMs = j.value("forward_ms", 0.0);
    m.parameters = j.value("parameters", std::int64_t(0));
    return m;
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string text;
    for (auto d : shape)
        text += (text.empty() ? "" : "x") + std::to_string(d);
    return text.empty() ? "1" : text;
}

json shapeStrings(const std::vector<std::int64_t>& shape)
{
    json out = json::array();
    for (auto d : shape)
        out.push_back(std::to_string(d));
    return out;
}

std::string precisionOf(const ProblemDraft& d)
{
    // A matrix product runs in its inputs' narrowest float precision (core/model/precision.h's rule),
    // said explicitly: the problem's fixed shapes do not grow, so check could not tell it is one.
    std::string best = "fp32";
    for (const auto& t : d.inputs) {
        if (t.dtype == "f16")
            return "fp16";
        if (t.dtype == "bf16")
            best = "bf16";
        else if (t.dtype == "f64" && best == "fp32")
            best = "fp64";
    }
    return best;
}

} // namespace

std::string captureRequestJson(const CaptureRequest& r)
{
    json j = { { "action", "capture" }, { "file", r.file }, { "seed", r.seed } };
    if (r.evalMode)
        j["eval"] = *r.evalMode;
    return j.dump();
}

std::string problemsRequestJson(
    const CaptureRequest& r, const std::string& method, const std::vector<ProblemGroup>& groups)
{
    json j = json::parse(captureRequestJson(r));
    j["action"] = "problems";
    j["expect_method"] = method;
    j["groups"] = json::array();
    for (const auto& g : groups)
        j["groups"].push_back({ { "name", g.name }, { "ops", g.ops } });
    return j.dump();
}

std::string checkRequestJson(const CheckRequest& r)
{
    json j = { { "action", "check" }, { "file", r.file }, { "patch", r.patch }, { "seed", r.seed },
        { "input_seed", r.inputSeed }, { "repeats", r.repeats }, { "atol", r.atol }, { "rtol", r.rtol } };
    if (r.batch)
        j["batch"] = *r.batch;
    if (r.evalMode)
        j["eval"] = *r.evalMode;
    return j.dump();
}

Capture decodeCapture(const std::string& reply, const std::string& file)
{
    const json r = parseReply(reply, file);
    Capture c;
    c.model = modelInfo(r.at("model"));
    c.method = r.at("capture").value("method", std::string());
    c.note = r.at("capture").value("note", std::string());
    for (const auto& o : r.at("operators")) {
        Operator op;
        op.id = o.at("id").get<std::string>();
        op.label = o.value("label", op.id);
        op.kind = o.value("kind", std::string("other"));
        op.inputs = tensorInfos(o, "inputs");
        op.outputs = tensorInfos(o, "outputs");
        op.flops = o.value("flops", 0.0);
        op.bytes = o.value("bytes", 0.0);
        op.matrixProduct = o.value("matrix_product", false);
        op.view = o.value("view", false);
        op.mutatesInputs = o.value("mutates_inputs", false);
        op.random = strings(o, "random");
        c.operators.push_back(std::move(op));
    }
    for (const auto& chain : r.value("fusion", json::array())) {
        std::vector<std::string> ids;
        for (const auto& id : chain)
            ids.push_back(id.get<std::string>());
        c.fusion.push_back(std::move(ids));
    }
    return c;
}

ProblemsReply decodeProblems(const std::string& reply, const std::string& file)
{
    const json r = parseReply(reply, file);
    ProblemsReply out;
    out.method = r.at("capture").value("method", std::string());
    for (const auto& p : r.at("problems")) {
        ProblemDraft d;
        d.name = p.at("name").get<std::string>();
        d.ops = strings(p, "ops");
        d.inputs = problemTensors(p, "inputs");
        d.outputs = problemTensors(p, "outputs");
        d.flops = p.value("flops", 0.0);
        d.bytes = p.value("bytes", 1.0);
        d.matrixProduct = p.value("matrix_product", false);
        d.referenceSource = p.at("reference_source").get<std::string>();
        d.checkedMaxDiff = p.value("checked_max_diff", 0.0);
        d.copiedInputs = strings(p, "copied_inputs");
        const auto& patch = p.at("patch");
        d.patchMode = patch.value("mode", std::string("none"));
        d.patchWhy = patch.value("why", std::string());
        d.patchSpec = patch.dump();
        out.problems.push_back(std::move(d));
    }
    for (const auto& f : r.value("refused", json::array()))
        out.refused.push_back({ f.value("name", std::string()), "model." + f.value("category", std::string()),
            f.value("message", std::string()) });
    return out;
}

ModelCheckReport decodeCheck(const std::string& reply, const std::string& file)
{
    const json r = parseReply(reply, file);
    ModelCheckReport c;
    c.timing = r.value("timing", std::string());
    c.registration = r.value("registration", std::string());
    c.matches = r.value("matches", false);
    c.maxAbsDiff = r.value("max_abs_diff", 0.0);
    c.mismatch = r.value("mismatch", std::string());
    c.trials = r.value("trials", 0);
    c.originalMs = r.value("original_ms", 0.0);
    c.patchedMs = r.value("patched_ms", 0.0);
    c.measuredSpeedup = r.value("measured_speedup", 0.0);
    if (r.contains("expected_speedup") && r["expected_speedup"].is_number())
        c.expectedSpeedup = r["expected_speedup"].get<double>();
    c.inputs = r.value("inputs", std::string());
    for (const auto& o : r.value("ops", json::array())) {
        PatchedOperator p;
        p.name = o.value("name", std::string());
        p.kind = o.value("kind", std::string());
        p.applied = o.value("applied", false);
        p.why = o.value("why", std::string());
        p.calls = o.value("calls", 0);
        p.fallbacks = o.value("fallbacks", 0);
        p.lastFallback = o.value("last_fallback", std::string());
        p.share = o.value("share", 0.0);
        if (o.contains("speedup") && o["speedup"].is_number())
            p.speedup = o["speedup"].get<double>();
        c.ops.push_back(std::move(p));
    }
    return c;
}

std::string problemJson(const ProblemDraft& d, const ProblemGroup& group, const Capture& capture)
{
    const auto& m = capture.model;
    std::string labels;
    for (const auto& id : d.ops)
        if (const auto* op = capture.find(id))
            labels += (labels.empty() ? "" : ", then ") + op->label;
    json p;
    p["name"] = group.name;
    p["description"] = std::string(group.fused ? "A fusion candidate of " : "") + "the model " + m.name + "'s operator"
        + (d.ops.size() > 1 ? "s " : " ") + labels + ", at the model's own shapes (captured by " + capture.method
        + "). Compute what reference.py computes: the subgraph as PyTorch runs it in the model (" + m.mode
        + " mode); the model's weights it reads are inputs (" + m.weights
        + "), drawn from the distribution of their values. PyTorch eager is the time to beat.";
    p["arch"] = "sm_90";
    const std::int64_t batch = (!m.inputs.empty() && m.inputs.front().isTensor && !m.inputs.front().shape.empty())
        ? m.inputs.front().shape.front()
        : 1;
    const std::string label = d.inputs.empty() ? "model" : shapeText(d.inputs.front().shape);
    p["sizes"] = { { "_comment",
                       "one size set, the model's own: shapes are written as numbers; batch is the model's batch "
                       "size, for the record" },
        { "symbols", { "batch" } }, { "main", json::array({ { { "label", label }, { "batch", batch } } }) } };
    p["inputs"] = json::array();
    for (const auto& t : d.inputs)
        p["inputs"].push_back({ { "name", t.name }, { "dtype", t.dtype }, { "shape", shapeStrings(t.shape) },
            { "distribution", distributionJson(t.distribution) } });
    p["outputs"] = json::array();
    for (const auto& t : d.outputs)
        p["outputs"].push_back({ { "name", t.name }, { "dtype", t.dtype }, { "shape", shapeStrings(t.shape) } });
    // fp32 summed in another order by a kernel: 1e-4 (as imported KernelBench problems), and 1e-3 where a
    // product sums over a long dimension.
    const double f32 = d.matrixProduct ? 1e-3 : 1e-4;
    p["tolerances"] = { { "f32", { { "atol", f32 }, { "rtol", f32 } } } };
    p["reference"] = "reference.py";
    p["bytes"] = std::to_string(std::int64_t(std::max(1.0, d.bytes)));
    p["flops"] = std::to_string(std::int64_t(d.flops));
    if (d.matrixProduct)
        p["compute"] = precisionOf(d);
    json model = { { "file", m.file }, { "operators", d.ops }, { "capture", capture.method },
        { "share_of_estimate", group.share }, { "weights", m.weights }, { "mode", m.mode },
        { "reference_checked_max_diff", d.checkedMaxDiff } };
    if (!d.copiedInputs.empty())
        model["copied_inputs"] = d.copiedInputs;
    p["_model"] = model;
    return p.dump(2) + "\n";
}

std::string modelFolderJson(const ModelFolder& f)
{
    json j;
    j["_comment"] = "written by kernelloop-cli model; read by kernelloop-cli model-patch";
    j["model"] = modelInfoJson(f.model);
    j["capture"] = { { "method", f.method }, { "note", f.note } };
    json rows = json::array();
    for (const auto& r : f.ranking.rows)
        rows.push_back({ { "id", r.id }, { "label", r.label }, { "kind", r.kind }, { "flops", r.flops },
            { "bytes", r.bytes }, { "time_us", r.timeUs }, { "share", r.share },
            { "bound", std::string(boundName(r.bound)) }, { "precision", std::string(precisionName(r.precision)) } });
    j["ranking"] = { { "measured", f.ranking.measured }, { "label", rankingLabel(f.ranking) },
        { "basis", f.ranking.basis }, { "device", f.ranking.device }, { "copy_gbps", f.ranking.copyGbps },
        { "total_us", f.ranking.totalUs }, { "rows", rows } };
    j["problems"] = json::array();
    for (const auto& p : f.problems) {
        json inputs = json::array(), outputs = json::array();
        for (const auto& t : p.inputs)
            inputs.push_back(problemTensorJson(t, true));
        for (const auto& t : p.outputs)
            outputs.push_back(problemTensorJson(t, false));
        json entry = { { "name", p.name }, { "ops", p.ops }, { "labels", p.labels }, { "fused", p.fused },
            { "share", p.share }, { "time_us", p.timeUs }, { "inputs", inputs }, { "outputs", outputs },
            { "patch", json::parse(p.patchSpec.empty() ? std::string("{}") : p.patchSpec) } };
        j["problems"].push_back(entry);
    }
    j["refused"] = json::array();
    for (const auto& r : f.refused)
        j["refused"].push_back({ { "name", r.name }, { "category", r.category }, { "message", r.message } });
    return j.dump(1) + "\n";
}

ModelFolder decodeModelFolder(const std::string& text, const std::string& file)
{
    ModelFolder f;
    try {
        const json j = json::parse(text);
        f.model = modelInfo(j.at("model"));
        f.method = j.at("capture").value("method", std::string());
        f.note = j.at("capture").value("note", std::string());
        const auto& r = j.at("ranking");
        f.ranking.measured = r.value("measured", false);
        f.ranking.basis = r.value("basis", std::string());
        f.ranking.device = r.value("device", std::string());
        f.ranking.copyGbps = r.value("copy_gbps", 0.0);
        f.ranking.totalUs = r.value("total_us", 0.0);
        for (const auto& row : r.at("rows")) {
            RankedOperator o;
            o.id = row.value("id", std::string());
            o.label = row.value("label", std::string());
            o.kind = row.value("kind", std::string());
            o.flops = row.value("flops", 0.0);
            o.bytes = row.value("bytes", 0.0);
            o.timeUs = row.value("time_us", 0.0);
            o.share = row.value("share", 0.0);
            o.bound = parseBound(row.value("bound", std::string("memory"))).value_or(Bound::Memory);
            o.precision = parsePrecision(row.value("precision", std::string("fp32"))).value_or(Precision::Fp32);
            f.ranking.rows.push_back(o);
        }
        for (const auto& p : j.at("problems")) {
            FolderProblem fp;
            fp.name = p.at("name").get<std::string>();
            fp.ops = strings(p, "ops");
            fp.labels = strings(p, "labels");
            fp.fused = p.value("fused", false);
            fp.share = p.value("share", 0.0);
            fp.timeUs = p.value("time_us", 0.0);
            fp.inputs = problemTensors(p, "inputs");
            fp.outputs = problemTensors(p, "outputs");
            const auto& patch = p.at("patch");
            fp.patchMode = patch.value("mode", std::string("none"));
            fp.patchWhy = patch.value("why", std::string());
            fp.patchSpec = patch.dump();
            f.problems.push_back(std::move(fp));
        }
        for (const auto& r2 : j.value("refused", json::array()))
            f.refused.push_back({ r2.value("name", std::string()), r2.value("category", std::string()),
                r2.value("message", std::string()) });
    } catch (const json::exception& e) {
        throw Error("model.bad-folder", file, {},
            std::string("model.json is not what kernelloop-cli model writes: ") + e.what());
    }
    return f;
}

std::string pythonStringLiteral(const std::string& text) { return json(text).dump(); }

std::string patchTableJson(const ModelFolder& folder, const std::vector<PatchEntry>& entries)
{
    json ops = json::array();
    for (const auto& e : entries) {
        const FolderProblem& p = *e.problem;
        json inputs = json::array(), outputs = json::array();
        for (const auto& t : p.inputs)
            inputs.push_back(
                { { "name", t.name }, { "dtype", t.dtype }, { "shape", t.shape }, { "stride", t.stride } });
        for (const auto& t : p.outputs)
            outputs.push_back({ { "name", t.name }, { "dtype", t.dtype }, { "shape", t.shape } });
        json op = { { "name", p.name }, { "kind", e.kind }, { "file", e.file }, { "labels", p.labels },
            { "share", p.share }, { "inputs", inputs }, { "outputs", outputs }, { "spec", json::parse(p.patchSpec) } };
        if (e.kind == "pytorch-function")
            op["source"] = e.source;
        if (!e.cubin.empty()) {
            op["cubin_b64"] = protocol::base64Encode(e.cubin);
            json launches = json::array();
            for (const auto& l : e.launches) {
                json args = json::array();
                for (const auto& a : l.args)
                    args.push_back(a.buffer ? json { { "kind", "buffer" }, { "buffer", a.name } }
                                            : json { { "kind", "value" }, { "type", a.type }, { "value", a.value } });
                launches.push_back({ { "symbol", l.symbol }, { "grid", l.grid }, { "block", l.block },
                    { "shared_bytes", l.sharedBytes }, { "args", args } });
            }
            op["launches"] = launches;
            json scratch = json::array();
            for (const auto& [name, bytes] : e.scratch)
                scratch.push_back({ { "name", name }, { "bytes", bytes } });
            op["scratch"] = scratch;
        }
        ops.push_back(op);
    }
    return json {
        { "model",
            { { "file", folder.model.file }, { "method", folder.method }, { "mode", folder.model.mode },
                { "seed", folder.model.seed } } },
        { "ops", ops }
    }.dump();
}

} // namespace kl::model_capture
