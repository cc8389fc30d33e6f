#include "core/field_formats/flashinfer_definition.h"

#include "core/field_formats/flashinfer_names.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/hash.h"

#include <cctype>
#include <set>
#include <sstream>

namespace kl::fieldformats {

namespace {

bool isIdentifier(const std::string& text)
{
    if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
        return false;
    for (const char c : text)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

std::vector<const SizeSet*> allSizes(const Problem& p)
{
    std::vector<const SizeSet*> sizes;
    for (const auto& s : p.mainSizes)
        sizes.push_back(&s);
    for (const auto& s : p.fuzzSizes)
        sizes.push_back(&s);
    return sizes;
}

std::string dtypeOf(DType type, const std::string& what, const Problem& p)
{
    const auto name = flashInferDType(type);
    if (!name)
        throw Error("trace.unsupported-dtype", p.name, what,
            "FlashInfer Trace has no dtype for " + std::string(dtypeName(type))
                + " (float16, bfloat16, float32, int8, int32, int64 are shared)");
    return std::string(*name);
}

std::string distributionText(const Distribution& d)
{
    std::ostringstream s;
    switch (d.kind) {
    case Distribution::Kind::Normal:
        s << "normal(mean " << d.a << ", std " << d.b << ")";
        break;
    case Distribution::Kind::Uniform:
        s << "uniform(" << d.a << ", " << d.b << ")";
        break;
    case Distribution::Kind::Integers:
        s << "integers(" << d.a << ", " << d.b << ")";
        break;
    case Distribution::Kind::Constant:
        s << "constant(" << d.a << ")";
        break;
    }
    return s.str();
}

// The axes of the problem: its symbols first, then any shape dimension that is not a bare symbol.
void buildAxes(ExportedDefinition& d, const Problem& p)
{
    const auto sizes = allSizes(p);
    const auto addAxis = [&](const std::string& name, const std::string& expression) {
        DefinitionAxis axis { name, true, 0, expression };
        bool first = true;
        for (const SizeSet* s : sizes) {
            const auto v = evaluateInteger(expression, s->symbols(), p.name, "axis " + name);
            if (first)
                axis.value = v;
            else if (v != axis.value)
                axis.constant = false;
            first = false;
        }
        d.axes.push_back(axis);
        d.axisOf[expression] = name;
    };
    for (const auto& symbol : p.symbols)
        addAxis(symbol, symbol);
    std::set<std::string> names(p.symbols.begin(), p.symbols.end());
    const auto addShape = [&](const TensorSpec& t) {
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
            const auto& e = t.shape[i];
            if (d.axisOf.count(e))
                continue;
            std::string name = isIdentifier(e) ? e : t.name + "_dim" + std::to_string(i);
            while (names.count(name))
                name += "_";
            names.insert(name);
            addAxis(name, e);
        }
    };
    for (const auto& t : p.inputs)
        addShape(t);
    for (const auto& t : p.outputs)
        addShape(t);
}

Json tensorJson(const ExportedDefinition& d, const TensorSpec& t, bool input, const Problem& p)
{
    Json shape = Json::array();
    for (const auto& e : t.shape)
        shape.push_back(d.axisOf.at(e));
    Json j = { { "shape", shape }, { "dtype", dtypeOf(t.dtype, (input ? "inputs." : "outputs.") + t.name, p) } };
    std::string description = input ? "drawn " + distributionText(t.distribution) + " by KernelLoop" : "";
    if (!t.rowPadding.empty())
        description += std::string(description.empty() ? "" : "; ") + "verified also with rows padded by "
            + t.rowPadding + " elements (row stride stride_" + t.name + ")";
    if (!description.empty())
        j["description"] = description;
    return j;
}

// The Python that calls a KernelLoop reference(**tensors, **scalars) the way FlashInfer-Bench calls
// run(*inputs): positionally, in the Definition's order, the outputs returned.
std::string runShim(const ExportedDefinition& d, const Problem& p)
{
    std::vector<std::string> inputs;
    for (const auto& t : p.inputs)
        inputs.push_back(t.name);
    for (const auto& s : p.scalars)
        inputs.push_back(s.name);
    std::string params, args, outputs;
    for (const auto& n : inputs) {
        params += (params.empty() ? "" : ", ") + n;
        args += (args.empty() ? "" : ", ") + std::string("\"") + n + "\": " + n;
    }
    for (const auto& o : p.outputs)
        outputs += "\"" + o.name + "\", ";
    std::ostringstream s;
    s << "\n\n# FlashInfer-Bench's entry point, added by kernelloop-cli export-trace: the inputs in the Definition's\n"
         "# order, the outputs returned. KernelLoop calls reference(**tensors, **scalars) above.\n"
      << "def run(" << params << "):\n"
      << "    import inspect as _kl_inspect\n"
      << "    import torch as _kl_torch\n"
      << "    _kl_args = {" << args << "}\n"
      << "    _kl_names = (" << outputs << ")\n"
      << "    _kl_params = _kl_inspect.signature(reference).parameters\n"
      << "    _kl_out = {}\n";
    // A reference that writes its outputs in place names them: they are made here, from the input shapes.
    for (const auto& o : p.outputs) {
        std::string dims;
        bool bound = true;
        for (const auto& e : o.shape) {
            const auto& axisName = d.axisOf.at(e);
            std::string dim;
            for (const auto& a : d.axes)
                if (a.name == axisName && a.constant)
                    dim = std::to_string(a.value);
            for (const auto& t : p.inputs)
                for (std::size_t i = 0; dim.empty() && i < t.shape.size(); ++i)
                    if (d.axisOf.at(t.shape[i]) == axisName)
                        dim = t.name + ".shape[" + std::to_string(i) + "]";
            bound = bound && !dim.empty();
            dims += dim + ", ";
        }
        if (!bound || p.inputs.empty())
            continue;
        const std::string device = p.inputs.front().name + ".device";
        s << "    if \"" << o.name << "\" in _kl_params:\n"
          << "        _kl_out[\"" << o.name << "\"] = _kl_torch.empty((" << dims << "), dtype=_kl_torch."
          << *flashInferDType(o.dtype) << ", device=" << device << ")\n";
    }
    s << "    _kl_result = reference(**_kl_args, **_kl_out)\n"
      << "    if _kl_result is None:\n"
      << "        _kl_result = tuple(_kl_out[n] for n in _kl_names)\n"
      << "    elif isinstance(_kl_result, dict):\n"
      << "        _kl_result = tuple(_kl_result[n] for n in _kl_names)\n"
      << "    if isinstance(_kl_result, (tuple, list)) and len(_kl_result) == 1:\n"
      << "        return _kl_result[0]\n"
      << "    return _kl_result\n";
    return s.str();
}

std::string cudaReferenceStub(const ExportedDefinition& d, const Problem& p)
{
    std::string params;
    for (const auto& t : p.inputs)
        params += (params.empty() ? "" : ", ") + t.name;
    for (const auto& sc : p.scalars)
        params += (params.empty() ? "" : ", ") + sc.name;
    return "# This problem's reference is CUDA C++ (" + p.referencePath.filename().string()
        + "), which KernelLoop launches as a kernel: no PyTorch specification was written for it.\n"
          "# Its source is the solution \""
        + d.name + "_reference\" and this definition's kernelloop.reference_source.\n" + "def run(" + params
        + "):\n    raise NotImplementedError(\"the reference of " + d.name + " is CUDA C++: see the solution " + d.name
        + "_reference\")\n";
}

} // namespace

std::map<std::string, std::int64_t> ExportedDefinition::varValues(const SizeSet& sizes) const
{
    std::map<std::string, std::int64_t> values;
    for (const auto& a : axes)
        if (!a.constant)
            values[a.name] = evaluateInteger(a.expression, sizes.symbols());
    return values;
}

ExportedDefinition exportDefinition(const Problem& p, const store::ProblemRecord& record, const std::string& name)
{
    ExportedDefinition d;
    d.name = name;
    d.opType = safeName(p.name);
    buildAxes(d, p);

    Json axes = Json::object();
    Json constraints = Json::array();
    for (const auto& a : d.axes) {
        Json axis = a.constant ? Json { { "type", "const" }, { "value", a.value } } : Json { { "type", "var" } };
        if (a.expression != a.name) {
            axis["description"] = "the shape dimension " + a.expression;
            if (!a.constant)
                constraints.push_back(a.name + " == " + a.expression);
        } else {
            axis["description"] = "the size symbol " + a.name + (a.constant ? " (one value at every size)" : "");
        }
        axes[a.name] = axis;
    }
    Json inputs = Json::object();
    for (const auto& t : p.inputs)
        inputs[t.name] = tensorJson(d, t, true, p);
    for (const auto& s : p.scalars)
        inputs[s.name] = { { "shape", nullptr }, { "dtype", dtypeOf(s.dtype, "scalars." + s.name, p) },
            { "description", "a constant argument" } };
    Json outputs = Json::object();
    for (const auto& t : p.outputs)
        outputs[t.name] = tensorJson(d, t, false, p);

    const bool pytorch = p.pythonReference.has_value();
    const auto names = std::string(p.referencePath.filename().string());
    Json tags = Json::array({ "source:kernelloop", std::string("reference:") + (pytorch ? "pytorch" : "cuda") });
    d.json = Json::object();
    d.json["name"] = d.name;
    d.json["op_type"] = d.opType;
    d.json["tags"] = tags;
    d.json["description"] = p.description.empty() ? "KernelLoop problem " + p.name : p.description;
    d.json["axes"] = axes;
    d.json["inputs"] = inputs;
    d.json["outputs"] = outputs;
    d.json["reference"] = pytorch ? p.pythonReference->source + runShim(d, p) : cudaReferenceStub(d, p);
    if (!p.sizeConstraints.empty() || !constraints.empty()) {
        for (const auto& c : p.sizeConstraints)
            constraints.push_back(c);
        d.json["constraints"] = constraints;
    }
    Json problemJson = Json::parse(record.json, nullptr, false);
    d.json["kernelloop"]
        = { { "problem_hash", record.hash }, { "problem", problemJson.is_discarded() ? Json() : problemJson },
              { "reference_file", p.referencePath.filename().string() }, { "reference_source", record.referenceSource },
              { "baseline_file", p.hasBaselineKernel() ? p.baselinePath.filename().string() : std::string() },
              { "baseline_source", record.baselineSource } };
    (void)names;
    return d;
}

Json workloadOf(const ExportedDefinition& d, const Problem& p, const SizeSet& sizes)
{
    Json axes = Json::object();
    for (const auto& [name, value] : d.varValues(sizes))
        axes[name] = value;
    Json inputs = Json::object();
    for (const auto& t : p.inputs)
        inputs[t.name] = { { "type", "random" } };
    for (const auto& s : p.scalars) {
        if (isFloating(s.dtype))
            inputs[s.name] = { { "type", "scalar" }, { "value", s.value } };
        else
            inputs[s.name] = { { "type", "scalar" }, { "value", static_cast<std::int64_t>(s.value) } };
    }
    std::string key = d.name;
    for (const auto& [name, value] : sizes.values)
        key += "," + name + "=" + std::to_string(value);
    return { { "uuid", uuidFromHash(contentHash(key) + contentHash("workload " + key)) }, { "axes", axes },
        { "inputs", inputs } };
}

Json workloadLine(const ExportedDefinition& d, const Problem& p, const SizeSet& sizes, const std::string& role)
{
    return { { "definition", d.name }, { "workload", workloadOf(d, p, sizes) }, { "solution", nullptr },
        { "evaluation", nullptr }, { "kernelloop", { { "role", role }, { "size", sizes.label } } } };
}

} // namespace kl::fieldformats
