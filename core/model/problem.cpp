#include "core/model/problem.h"

#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/model/input_file.h"
#include "core/model/names.h"
#include "core/model/problem_checks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>

namespace kl {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxProblemBytes = 4 * 1024 * 1024;

// Reads one JSON object and remembers where it is, so every error names the field.
class Fields {
public:
    Fields(const json& object, std::string path, const std::string& file)
        : m_j(object)
        , m_path(std::move(path))
        , m_file(file)
    {
        if (!m_j.is_object())
            fail(m_path, "problem.wrong-type", "must be an object");
    }

    [[noreturn]] void fail(const std::string& where, const std::string& category, const std::string& message) const
    {
        throw Error(category, m_file, where.empty() ? std::string("(top level)") : where, message);
    }

    std::string at(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
    bool has(const std::string& key) const { return m_j.contains(key) && !m_j[key].is_null(); }

    const json& required(const std::string& key) const
    {
        if (!has(key))
            fail(at(key), "problem.missing-field", "required field is missing");
        return m_j[key];
    }

    std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt) const
    {
        if (!has(key)) {
            if (fallback)
                return *fallback;
            required(key);
        }
        const auto& v = m_j[key];
        if (!v.is_string())
            fail(at(key), "problem.wrong-type", "must be a string, not " + std::string(v.type_name()));
        return v.get<std::string>();
    }

    // An expression may be written as a string or a plain number.
    std::string expression(const std::string& key, const json& v) const
    {
        if (v.is_string())
            return v.get<std::string>();
        if (v.is_number_integer())
            return std::to_string(v.get<std::int64_t>());
        if (v.is_number())
            return std::to_string(v.get<double>());
        fail(key, "problem.wrong-type", "must be an expression (a string or a number)");
    }

    double number(const std::string& key, std::optional<double> fallback = std::nullopt) const
    {
        if (!has(key)) {
            if (fallback)
                return *fallback;
            required(key);
        }
        const auto& v = m_j[key];
        if (!v.is_number())
            fail(at(key), "problem.wrong-type", "must be a number, not " + std::string(v.type_name()));
        return v.get<double>();
    }

    const json& array(const std::string& key, bool nonEmpty) const
    {
        const auto& v = required(key);
        if (!v.is_array())
            fail(at(key), "problem.wrong-type", "must be an array");
        if (nonEmpty && v.empty())
            fail(at(key), "problem.empty", "must not be empty");
        return v;
    }

    DType dtype(const std::string& key) const
    {
        const auto name = string(key);
        const auto type = parseDType(name);
        if (!type)
            fail(
                at(key), "problem.bad-dtype", "unknown dtype \"" + name + "\" (f16, bf16, f32, f64, i8, u8, i32, i64)");
        return *type;
    }

    void onlyKnown(std::initializer_list<const char*> keys) const
    {
        std::set<std::string> known(keys.begin(), keys.end());
        for (const auto& [k, v] : m_j.items())
            if (!known.count(k) && k.rfind("_", 0) != 0) // "_comment" and friends are allowed
                fail(at(k), "problem.unknown-field", "unknown field (misspelt?)");
    }

    const json& raw() const { return m_j; }
    const std::string& path() const { return m_path; }
    const std::string& file() const { return m_file; }

private:
    const json& m_j;
    std::string m_path;
    const std::string& m_file;
};

void checkName(const Fields& f, const std::string& where, const std::string& name)
{
    if (const auto problem = nameProblem(name); !problem.empty())
        f.fail(where, "problem.bad-name", quotedForMessage(name) + " " + problem);
}

SizeSet parseSizeSet(const json& j, const std::string& path, const Problem& p, const std::string& file)
{
    Fields f(j, path, file);
    SizeSet s;
    for (const auto& [k, v] : j.items()) {
        if (k == "label") {
            s.label = f.string("label");
            continue;
        }
        if (std::find(p.symbols.begin(), p.symbols.end(), k) == p.symbols.end())
            f.fail(f.at(k), "problem.unknown-symbol", "\"" + k + "\" is not one of the declared size symbols");
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(kMaxSizeValue))
            || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxSizeValue)
            f.fail(f.at(k), "problem.bad-size",
                "a size must be a whole number from 1 to " + std::to_string(kMaxSizeValue) + " (2^40)");
        s.values[k] = v.get<std::int64_t>();
    }
    for (const auto& sym : p.symbols)
        if (!s.values.count(sym))
            f.fail(path, "problem.missing-size", "size set has no value for " + sym);
    if (s.label.empty())
        for (const auto& sym : p.symbols)
            s.label += (s.label.empty() ? "" : "x") + std::to_string(s.values.at(sym));
    return s;
}

Distribution parseDistribution(const Fields& t)
{
    Distribution d;
    if (!t.has("distribution"))
        return d;
    Fields f(t.raw()["distribution"], t.at("distribution"), t.file());
    const auto kind = f.string("kind");
    if (kind == "normal") {
        d.kind = Distribution::Kind::Normal;
        d.a = f.number("mean", 0.0);
        d.b = f.number("std", 1.0);
        if (d.b <= 0)
            f.fail(f.at("std"), "problem.bad-distribution", "std must be positive");
        f.onlyKnown({ "kind", "mean", "std" });
    } else if (kind == "uniform" || kind == "integers") {
        d.kind = kind == "uniform" ? Distribution::Kind::Uniform : Distribution::Kind::Integers;
        d.a = f.number("low");
        d.b = f.number("high");
        if (d.b < d.a)
            f.fail(f.at("high"), "problem.bad-distribution", "high must not be below low");
        f.onlyKnown({ "kind", "low", "high" });
    } else if (kind == "constant") {
        d.kind = Distribution::Kind::Constant;
        d.a = f.number("value");
        f.onlyKnown({ "kind", "value" });
    } else {
        f.fail(f.at("kind"), "problem.bad-distribution",
            "unknown distribution \"" + kind + "\" (normal, uniform, integers, constant)");
    }
    return d;
}

void checkExpression(
    const std::string& text, const std::set<std::string>& allowed, const std::string& where, const std::string& file)
{
    for (const auto& name : usedSymbols(text, file, where))
        if (!allowed.count(name))
            throw Error("problem.unknown-symbol", file, where,
                "\"" + text + "\" uses \"" + name + "\", which is not a size symbol");
}

std::vector<TensorSpec> parseTensors(
    const Fields& top, const std::string& key, bool inputs, const Problem& p, std::set<std::string>& names)
{
    std::vector<TensorSpec> out;
    const auto& list = top.array(key, !inputs ? true : false);
    checkCount(list.size(), kMaxTensors, "problem.too-many-tensors", top.file(), key);
    const std::set<std::string> symbols(p.symbols.begin(), p.symbols.end());
    for (std::size_t i = 0; i < list.size(); ++i) {
        Fields t(list[i], key + "[" + std::to_string(i) + "]", top.file());
        TensorSpec spec;
        spec.name = t.string("name");
        checkName(t, t.at("name"), spec.name);
        if (!names.insert(spec.name).second)
            t.fail(t.at("name"), "problem.duplicate", "\"" + spec.name + "\" is declared twice");
        spec.dtype = t.dtype("dtype");
        const auto& shape = t.array("shape", true);
        for (std::size_t d = 0; d < shape.size(); ++d) {
            const auto where = t.at("shape") + "[" + std::to_string(d) + "]";
            spec.shape.push_back(t.expression(where, shape[d]));
            checkExpression(spec.shape.back(), symbols, where, top.file());
        }
        if (inputs) {
            spec.distribution = parseDistribution(t);
            checkDistribution(spec.distribution, spec.dtype, top.file(), t.at("distribution"));
        }
        if (t.has("row_padding")) {
            spec.rowPadding = t.expression(t.at("row_padding"), t.raw()["row_padding"]);
            checkExpression(spec.rowPadding, symbols, t.at("row_padding"), top.file());
            if (spec.shape.size() < 2)
                t.fail(
                    t.at("row_padding"), "problem.bad-padding", "row padding needs a tensor of two or more dimensions");
        }
        if (inputs)
            t.onlyKnown({ "name", "dtype", "shape", "distribution", "row_padding" });
        else
            t.onlyKnown({ "name", "dtype", "shape", "row_padding" });
        out.push_back(std::move(spec));
    }
    return out;
}

// Sources named by the problem stay inside its folder, like candidates' includes.
// A symlink inside the folder that points out of it is outside too.
std::filesystem::path sourcePath(const Fields& top, const std::string& key, const std::filesystem::path& dir)
{
    namespace fs = std::filesystem;
    const auto name = top.string(key);
    if (name.empty())
        top.fail(top.at(key), "problem.bad-path", "must name a file in the problem's folder");
    if (name.find('\0') != std::string::npos || name.find_first_of("\r\n") != std::string::npos)
        top.fail(top.at(key), "problem.bad-path", "the path contains a NUL byte or a line break");
    const fs::path rel(name);
    if (rel.is_absolute() || name.find("..") != std::string::npos)
        top.fail(top.at(key), "problem.path-outside", "\"" + name + "\" must be a path inside the problem's folder");
    const fs::path path = dir / rel;
    std::error_code ec;
    const auto status = fs::symlink_status(path, ec);
    if (ec || !fs::exists(status))
        top.fail(top.at(key), "problem.missing-source", "\"" + path.string() + "\" does not exist");
    const auto folder = fs::canonical(dir.empty() ? fs::path(".") : dir, ec);
    const auto target = ec ? fs::path() : fs::canonical(path, ec);
    if (ec)
        top.fail(
            top.at(key), "problem.missing-source", "\"" + path.string() + "\" cannot be resolved: " + ec.message());
    const auto inside = target.lexically_relative(folder);
    if (inside.empty() || *inside.begin() == "..")
        top.fail(top.at(key), "problem.path-outside",
            "\"" + name + "\" resolves to " + target.string() + ", outside the problem's folder");
    return path;
}

Candidate loadSource(const std::filesystem::path& path) { return loadCandidate(path.string()); }

} // namespace

Symbols SizeSet::symbols() const
{
    Symbols s;
    for (const auto& [k, v] : values)
        s[k] = static_cast<double>(v);
    return s;
}

const TensorSpec* Problem::tensor(const std::string& n) const
{
    for (const auto* list : { &inputs, &outputs })
        for (const auto& t : *list)
            if (t.name == n)
                return &t;
    return nullptr;
}

bool Problem::hasRowPadding() const
{
    for (const auto* list : { &inputs, &outputs })
        for (const auto& t : *list)
            if (!t.rowPadding.empty())
                return true;
    return false;
}

const ScalarSpec* Problem::scalar(const std::string& n) const
{
    for (const auto& s : scalars)
        if (s.name == n)
            return &s;
    return nullptr;
}

Tolerance defaultTolerance(DType type)
{
    switch (type) {
    case DType::F16:
        return { 1e-2, 1e-2 };
    case DType::BF16:
        return { 2e-2, 2e-2 };
    case DType::F32:
        return { 1e-5, 1e-5 };
    case DType::F64:
        return { 1e-12, 1e-12 };
    default:
        return { 0.0, 0.0 };
    }
}

Tolerance Problem::tolerance(DType type) const
{
    auto it = tolerances.find(type);
    return it != tolerances.end() ? it->second : defaultTolerance(type);
}

double Problem::bytes(const SizeSet& sizes) const
{
    return evaluate(bytesExpression, sizes.symbols(), file.string(), "bytes");
}

bool Problem::isMatrixProduct() const
{
    if (flopsExpression.empty() || mainSizes.empty())
        return false;
    // A contraction's FLOPs per byte grow in proportion to the sizes (2MNK ÷ (MK + KN + MN) doubles when
    // M, N and K do); an element-wise or reduction operator's stay put. Half way between the two.
    constexpr double kGrowth = 1.5;
    try {
        const Symbols at = mainSizes.front().symbols();
        Symbols doubled = at;
        for (auto& symbol : doubled)
            symbol.second *= 2;
        const double bytesAt = evaluate(bytesExpression, at, file.string(), "bytes");
        const double bytesDoubled = evaluate(bytesExpression, doubled, file.string(), "bytes");
        const double flopsAt = evaluate(flopsExpression, at, file.string(), "flops");
        const double flopsDoubled = evaluate(flopsExpression, doubled, file.string(), "flops");
        if (!(bytesAt > 0) || !(bytesDoubled > 0) || !(flopsAt > 0) || !(flopsDoubled > 0))
            return false;
        return (flopsDoubled / bytesDoubled) >= kGrowth * (flopsAt / bytesAt);
    } catch (const std::exception&) { // an expression that does not evaluate at twice the sizes
        return false;
    }
}

ComputeCeiling Problem::computeCeiling(bool kernelIssuesTensorInstructions) const
{
    if (compute)
        return { *compute, CeilingReason::Declared };
    std::vector<DType> types;
    for (const TensorSpec& input : inputs)
        types.push_back(input.dtype);
    ComputeCeiling ceiling = isMatrixProduct()
        ? ComputeCeiling { defaultPrecision(types), CeilingReason::MatrixProduct }
        : ComputeCeiling { cudaCorePrecision(types), CeilingReason::NotMatrixProduct };
    if (kernelIssuesTensorInstructions && !isTensorPrecision(ceiling.precision))
        ceiling = { tensorPrecision(types), CeilingReason::TensorInstructions };
    return ceiling;
}

double Problem::flops(const SizeSet& sizes) const
{
    return flopsExpression.empty() ? 0.0 : evaluate(flopsExpression, sizes.symbols(), file.string(), "flops");
}

std::string Problem::candidateFileName() const
{
    if (hasBaselineKernel())
        return baseline.fileName;
    return (dir / (language() == CandidateLanguage::Triton ? "kernel.py" : "kernel.cu")).string();
}

Problem parseProblem(const std::string& text, const std::filesystem::path& path)
{
    const std::string file = path.string();
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        throw Error(
            "problem.bad-json", file, "byte " + std::to_string(e.byte), std::string("invalid JSON: ") + e.what());
    } catch (const json::exception& e) { // e.g. a number too large for a double (1e400)
        throw Error("problem.bad-json", file, {}, std::string("invalid JSON: ") + e.what());
    }
    Fields top(root, "", file);
    top.onlyKnown({ "name", "description", "arch", "sizes", "inputs", "outputs", "scalars", "tolerances", "reference",
        "baseline", "language", "bytes", "flops", "compute" });

    Problem p;
    p.file = path;
    p.dir = path.parent_path();
    p.name = top.string("name");
    if (p.name.empty())
        top.fail("name", "problem.empty", "must not be empty");
    p.description = top.string("description", std::string());
    p.arch = top.string("arch", std::string("sm_90"));
    static const std::regex arch(R"(sm_\d{2,3}[a-z]?)");
    if (!std::regex_match(p.arch, arch))
        top.fail("arch", "problem.bad-arch", "\"" + p.arch + "\" is not an architecture such as sm_90");

    Fields sizes(top.required("sizes"), "sizes", file);
    sizes.onlyKnown({ "symbols", "main", "fuzz", "constraints", "fixed" });
    const auto& symbols = sizes.array("symbols", true);
    checkCount(symbols.size(), kMaxSymbols, "problem.too-many-symbols", file, "sizes.symbols");
    for (std::size_t i = 0; i < symbols.size(); ++i) {
        const auto where = "sizes.symbols[" + std::to_string(i) + "]";
        if (!symbols[i].is_string())
            top.fail(where, "problem.bad-name", "a size symbol must be an identifier such as M or N");
        const auto symbol = symbols[i].get<std::string>();
        checkName(top, where, symbol);
        if (std::find(p.symbols.begin(), p.symbols.end(), symbol) != p.symbols.end())
            top.fail(where, "problem.duplicate", "size symbol " + symbol + " is declared twice");
        p.symbols.push_back(symbol);
    }
    const auto& mains = sizes.array("main", true);
    checkCount(mains.size(), kMaxMainSizes, "problem.too-many-sizes", file, "sizes.main");
    for (std::size_t i = 0; i < mains.size(); ++i)
        p.mainSizes.push_back(parseSizeSet(mains[i], "sizes.main[" + std::to_string(i) + "]", p, file));
    if (sizes.has("fuzz")) {
        const auto& fuzz = sizes.array("fuzz", false);
        checkCount(fuzz.size(), kMaxFuzzSizes, "problem.too-many-sizes", file, "sizes.fuzz");
        for (std::size_t i = 0; i < fuzz.size(); ++i)
            p.fuzzSizes.push_back(parseSizeSet(fuzz[i], "sizes.fuzz[" + std::to_string(i) + "]", p, file));
    }
    p.fixedSizes = sizes.string("fixed", std::string());
    if (!p.fixedSizes.empty() && !p.fuzzSizes.empty())
        sizes.fail(sizes.at("fixed"), "problem.fixed-with-fuzz",
            "a problem verified at its main sizes only (\"fixed\") has no fuzz sizes; drop one or the other");
    const std::set<std::string> symbolSet(p.symbols.begin(), p.symbols.end());
    if (sizes.has("constraints")) {
        const auto& list = sizes.array("constraints", false);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto where = "sizes.constraints[" + std::to_string(i) + "]";
            p.sizeConstraints.push_back(sizes.expression(where, list[i]));
            checkExpression(p.sizeConstraints.back(), symbolSet, where, file);
        }
    }
    for (const auto* list : { &p.mainSizes, &p.fuzzSizes })
        for (std::size_t i = 0; i < list->size(); ++i)
            for (const auto& c : p.sizeConstraints)
                if (evaluate(c, (*list)[i].symbols(), file, "sizes") == 0.0)
                    top.fail(
                        std::string(list == &p.mainSizes ? "sizes.main[" : "sizes.fuzz[") + std::to_string(i) + "]",
                        "problem.size-constraint", "size set " + (*list)[i].label + " breaks constraint " + c);

    std::set<std::string> names(p.symbols.begin(), p.symbols.end());
    p.inputs = parseTensors(top, "inputs", true, p, names);
    p.outputs = parseTensors(top, "outputs", false, p, names);

    if (top.has("scalars")) {
        const auto& list = top.array("scalars", false);
        checkCount(list.size(), kMaxScalars, "problem.too-many-scalars", file, "scalars");
        for (std::size_t i = 0; i < list.size(); ++i) {
            Fields s(list[i], "scalars[" + std::to_string(i) + "]", file);
            s.onlyKnown({ "name", "dtype", "value" });
            ScalarSpec spec { s.string("name"), s.dtype("dtype"), s.number("value") };
            checkName(s, s.at("name"), spec.name);
            checkScalarValue(spec, file, s.at("value"));
            if (!names.insert(spec.name).second)
                s.fail(s.at("name"), "problem.duplicate", "\"" + spec.name + "\" is declared twice");
            p.scalars.push_back(spec);
        }
    }

    if (top.has("tolerances")) {
        const auto& tol = top.required("tolerances");
        if (!tol.is_object())
            top.fail("tolerances", "problem.wrong-type", "must be an object of dtype → {atol, rtol}");
        for (const auto& [k, v] : tol.items()) {
            const auto type = parseDType(k);
            if (!type)
                top.fail("tolerances." + k, "problem.bad-dtype", "unknown dtype \"" + k + "\"");
            Fields t(v, "tolerances." + k, file);
            t.onlyKnown({ "atol", "rtol" });
            Tolerance tl { t.number("atol"), t.number("rtol") };
            if (tl.atol < 0 || tl.rtol < 0)
                t.fail(t.path(), "problem.bad-tolerance", "tolerances must not be negative");
            p.tolerances[*type] = tl;
        }
    }

    p.bytesExpression = top.expression("bytes", top.required("bytes"));
    checkExpression(p.bytesExpression, symbolSet, "bytes", file);
    if (top.has("flops")) {
        p.flopsExpression = top.expression("flops", top.required("flops"));
        checkExpression(p.flopsExpression, symbolSet, "flops", file);
    }
    if (top.has("compute")) {
        const auto name = top.string("compute");
        p.compute = parsePrecision(name);
        if (!p.compute)
            top.fail("compute", "problem.bad-compute",
                "\"" + name + "\" is not a precision: fp64, fp32, tf32, fp16, bf16, fp8, int8 or fp64-tensor");
    }

    p.referencePath = sourcePath(top, "reference", p.dir);
    const bool eagerBaseline = !top.has("baseline")
        || (top.required("baseline").is_string() && top.required("baseline").get<std::string>() == "eager");
    if (!eagerBaseline)
        p.baselinePath = sourcePath(top, "baseline", p.dir);
    if (top.has("language")) {
        const auto name = top.string("language");
        if (name != "triton" && name != "cuda")
            top.fail(
                "language", "problem.bad-language", "\"" + name + "\" is not a candidate language: triton or cuda");
        p.preferredLanguage = name == "cuda" ? CandidateLanguage::Cuda : CandidateLanguage::Triton;
    }
    checkAtEverySize(p);
    if (p.referencePath.extension() == ".py") {
        const auto where = p.referencePath.string();
        PythonReference python { readInputFile(where, kMaxCandidateSourceBytes, "reference"), where };
        if (python.source.find("def reference(") == std::string::npos)
            throw Error("problem.bad-reference", where, "reference",
                "a PyTorch reference must define reference(**tensors, **scalars)");
        p.reference.source = python.source;
        p.reference.fileName = where;
        p.pythonReference = std::move(python);
    } else {
        p.reference = loadSource(p.referencePath);
    }
    if (eagerBaseline && !p.pythonReference)
        top.fail("baseline", "problem.needs-baseline",
            "a CUDA reference needs a baseline kernel (\"baseline\": \"file.cu\" or a Triton .py): only a PyTorch "
            "reference can start from PyTorch eager with no kernel");
    if (!eagerBaseline)
        p.baseline = loadSource(p.baselinePath);
    p.contentHash = contentHash({ text, p.reference.source, p.baseline.source });
    return p;
}

std::string problemArchOf(const std::string& problemJson)
{
    static const std::regex arch(R"(sm_\d{2,3}[a-z]?)");
    const json root = json::parse(problemJson, nullptr, false);
    if (root.is_object() && root.contains("arch") && root["arch"].is_string()
        && std::regex_match(root["arch"].get_ref<const std::string&>(), arch))
        return root["arch"].get<std::string>();
    return "sm_90";
}

std::string problemFixedSizesOf(const std::string& problemJson)
{
    const json root = json::parse(problemJson, nullptr, false);
    if (root.is_object() && root.contains("sizes") && root["sizes"].is_object() && root["sizes"].contains("fixed")
        && root["sizes"]["fixed"].is_string())
        return root["sizes"]["fixed"].get<std::string>();
    return {};
}

Problem loadProblem(const std::filesystem::path& path)
{
    return parseProblem(readInputFile(path, kMaxProblemBytes, "problem"), path);
}

} // namespace kl
