// Issue 39: the KernelBench operators the import used to refuse, each as a KernelBench-format file of
// ours (tests/fixtures/kernelbench/): a strided dilated 3-D convolution, a grouped transposed convolution
// with output_padding, pooling with ceil_mode (max_pool3d has no meta kernel in PyTorch 1.13), a channel
// count num_groups must divide, a kernel larger than a small substitute size, a broadcast against a fixed
// dimension (imported at KernelBench's sizes only, and `check` says so), a bool mask, 0-d tensors, 80
// parameter tensors (packed), Dropout(p=0), and an output no size rule covers; and the true refusals: real
// dropout, a missing package, an operator this PyTorch lacks. Each imported problem passes `check`, and
// its reference runs in the runner's real PyTorch worker (Debian's CPU PyTorch) at every fuzz size, with
// the values a formula written here gives where the operator is one line.
//
// With KL_KERNELBENCH_IMPORTED set to a folder of imported problems (scripts/kernelbench-import-survey.sh
// sets it to its level1/ and level2/ output), kernelBenchSample() runs 20 of them, convolutions and
// pooling among them, at every fuzz size in the same worker.
#include "kernelbench_cli.h"

#include "core/model/expression.h"
#include "core/model/problem.h"
#include "runner/python_worker.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace fs = std::filesystem;
using namespace kbtest;

namespace {

const QString kFixtures = QStringLiteral(KL_SOURCE_DIR "/tests/fixtures/kernelbench/");

using Values = std::map<std::string, std::vector<double>>;

struct ReferenceRun {
    bool ok = false;
    std::string reply;
    Values inputs;
    Values outputs;
    std::map<std::string, std::vector<std::int64_t>> shapes;
};

double readElement(const std::byte* at, kl::DType type)
{
    switch (type) {
    case kl::DType::F32: {
        float v;
        std::memcpy(&v, at, sizeof v);
        return v;
    }
    case kl::DType::F64: {
        double v;
        std::memcpy(&v, at, sizeof v);
        return v;
    }
    case kl::DType::U8:
        return double(std::to_integer<unsigned>(*at));
    case kl::DType::I32: {
        std::int32_t v;
        std::memcpy(&v, at, sizeof v);
        return v;
    }
    case kl::DType::I64: {
        std::int64_t v;
        std::memcpy(&v, at, sizeof v);
        return double(v);
    }
    default:
        qFatal("dtype %d not handled by the test", int(type));
    }
}

void writeElement(std::byte* at, kl::DType type, double value)
{
    switch (type) {
    case kl::DType::F32: {
        const float v = float(value);
        std::memcpy(at, &v, sizeof v);
        return;
    }
    case kl::DType::F64:
        std::memcpy(at, &value, sizeof value);
        return;
    case kl::DType::U8:
        *at = std::byte(static_cast<unsigned char>(value));
        return;
    case kl::DType::I32: {
        const auto v = static_cast<std::int32_t>(value);
        std::memcpy(at, &v, sizeof v);
        return;
    }
    case kl::DType::I64: {
        const auto v = static_cast<std::int64_t>(value);
        std::memcpy(at, &v, sizeof v);
        return;
    }
    default:
        qFatal("dtype %d not handled by the test", int(type));
    }
}

// The problem's reference.py in the runner's PyTorch worker at one size set: inputs drawn as the problem
// says (integers for u8 masks, normal values otherwise), outputs read back.
ReferenceRun runReference(const fs::path& dir, const kl::Problem& problem, const kl::SizeSet& sizes,
    kl::runner::PythonWorker& worker, std::mt19937& random, double scale)
{
    const std::string source = readText(QString::fromStdString((dir / "reference.py").string())).toStdString();
    ReferenceRun run;
    std::vector<kl::runner::SharedTensors::Tensor> tensors;
    for (const auto* list : { &problem.inputs, &problem.outputs })
        for (const auto& t : *list) {
            const std::vector<std::int64_t> shape = shapeAt(t, sizes);
            const std::int64_t rows = rowsOf(shape);
            run.shapes[t.name] = shape;
            tensors.push_back({ t.name, list == &problem.outputs, { t.dtype, rows, shape.back(), shape.back() } });
        }
    kl::runner::SharedTensors shared(tensors);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (const auto& t : problem.inputs) {
        std::int64_t n = 1;
        for (auto d : run.shapes[t.name])
            n *= d;
        auto& values = run.inputs[t.name];
        const bool integers = t.distribution.kind == kl::Distribution::Kind::Integers;
        std::uniform_int_distribution<int> pick(int(t.distribution.a), int(t.distribution.b));
        auto* base = shared.at(shared.offsetOf(t.name));
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = integers ? double(pick(random)) : scale * normal(random);
            values.push_back(v);
            writeElement(base + std::size_t(i) * kl::dtypeSize(t.dtype), t.dtype, v);
        }
        for (std::int64_t i = 0; i < n; ++i) // what the reference reads, after the dtype's rounding
            values[std::size_t(i)] = readElement(base + std::size_t(i) * kl::dtypeSize(t.dtype), t.dtype);
    }
    const nlohmann::json reply = worker.call(
        { { "op", "reference" }, { "source", source }, { "file", "reference.py" }, { "shm", shared.path() },
            { "tensors", shared.describe(run.shapes) }, { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
        std::chrono::seconds(120));
    run.ok = reply.value("ok", false);
    run.reply = reply.dump();
    for (const auto& t : problem.outputs) {
        std::int64_t n = 1;
        for (auto d : run.shapes[t.name])
            n *= d;
        const auto* base = shared.at(shared.offsetOf(t.name));
        for (std::int64_t i = 0; i < n; ++i)
            run.outputs[t.name].push_back(readElement(base + std::size_t(i) * kl::dtypeSize(t.dtype), t.dtype));
    }
    return run;
}

// Every fuzz size set (the main one for a problem with fixed sizes) through the worker; `check` compares
// each with a formula where there is one. Returns the number of size sets run.
// `scale`: the standard deviation of the values drawn (normal, mean 0).
int runEverywhere(const fs::path& dir, const std::function<void(const ReferenceRun&, const kl::SizeSet&)>& check = {},
    double scale = 0.25)
{
    const auto problem = kl::loadProblem(dir / "problem.json");
    kl::runner::PythonWorker worker;
    std::mt19937 random(11);
    int count = 0;
    for (const auto& sizes : problem.fuzzSizes.empty() ? problem.mainSizes : problem.fuzzSizes) {
        const auto run = runReference(dir, problem, sizes, worker, random, scale);
        if (!run.ok)
            qFatal("%s at %s: %s", dir.filename().c_str(), sizes.label.c_str(), run.reply.c_str());
        if (check)
            check(run, sizes);
        ++count;
    }
    return count;
}

void near(double got, double want, const char* what, std::size_t index, double tolerance = 1e-4)
{
    if (std::fabs(got - want) > tolerance * (1.0 + std::fabs(want)))
        qFatal("%s, element %zu: reference %g, formula %g", what, index, got, want);
}

struct Imported {
    QString dir;
    nlohmann::json problem;
    CliRun run;
};

// One fixture imported into `tmp`; the import must succeed and `check` pass.
Imported importFixture(const QTemporaryDir& tmp, const QString& name)
{
    Imported imported;
    imported.dir = tmp.path() + QLatin1Char('/') + name;
    imported.run = importKernelBench(kFixtures + name + QStringLiteral(".py"), imported.dir);
    if (imported.run.exitCode != 0)
        qFatal("import of %s: %s", qPrintable(name), qPrintable(imported.run.err + imported.run.out));
    imported.problem = nlohmann::json::parse(readText(imported.dir + QStringLiteral("/problem.json")).toStdString());
    const auto check = runCli({ QStringLiteral("check"), imported.dir + QStringLiteral("/problem.json") });
    if (check.exitCode != 0)
        qFatal("check of %s: %s", qPrintable(name), qPrintable(check.err + check.out));
    imported.run.out += check.out; // the check's words are asserted on too
    return imported;
}

std::string shapeOf(const nlohmann::json& tensors, const std::string& name)
{
    for (const auto& t : tensors)
        if (t["name"] == name)
            return t["shape"].dump();
    return "(no tensor " + name + ")";
}

std::vector<std::string> constraintsOf(const nlohmann::json& problem)
{
    std::vector<std::string> out;
    if (problem["sizes"].contains("constraints"))
        for (const auto& c : problem["sizes"]["constraints"])
            out.push_back(c.get<std::string>());
    return out;
}

bool pythonHas(const char* check)
{
    return std::system((std::string(kPython) + " -c '" + check + "' 2>/dev/null").c_str()) == 0;
}

} // namespace

class TestKernelBenchOperators : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch)");
        qputenv("KL_PYTHON", kPython);
    }

    // conv3d with stride 2, padding 1, dilation 2: out = floor((L + 2 - 4 - 1) / 2) + 1, written as the
    // floor rule over each spatial size; a kernel wider than the input is refused below 3.
    void conv3dStridedDilated()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("conv3d_strided"));
        QCOMPARE(shapeOf(i.problem["outputs"], "y"),
            std::string(R"x(["batch_size","8","floor((depth + 1) / 2) - 1","floor((height + 1) / 2) - 1",)x"
                        R"x("floor((width + 1) / 2) - 1"])x"));
        QCOMPARE(shapeOf(i.problem["inputs"], "conv_weight"), std::string(R"x(["8","in_channels","3","3","3"])x"));
        const auto constraints = constraintsOf(i.problem);
        QVERIFY(std::count(constraints.begin(), constraints.end(), "depth >= 3"));
        QVERIFY(i.problem["sizes"]["fuzz"].size() >= 4);
        QVERIFY(!i.problem["sizes"].contains("fixed"));
        QVERIFY2(i.problem.value("flops", std::string()).find("floor((depth + 1) / 2) - 1") != std::string::npos,
            i.problem.dump().c_str());
        QCOMPARE(runEverywhere(i.dir.toStdString()), int(i.problem["sizes"]["fuzz"].size()));
    }

    // groups = 4: in_channels must be a multiple of 4 (a constraint of the problem, every fuzz size keeps
    // it); stride 2 with output_padding 1 doubles the sizes (2 * height, an affine rule).
    void convTransposeGroupsOutputPadding()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("conv_transpose_groups"));
        QCOMPARE(shapeOf(i.problem["outputs"], "y"), std::string(R"x(["batch_size","8","2 * height","2 * width"])x"));
        QCOMPARE(
            shapeOf(i.problem["inputs"], "conv_transpose_weight"), std::string(R"x(["in_channels","2","3","3"])x"));
        QCOMPARE(constraintsOf(i.problem), std::vector<std::string> { "in_channels % 4 == 0" });
        QVERIFY2(i.run.out.contains(QStringLiteral("in_channels must be divisible by groups")), qPrintable(i.run.out));
        bool otherChannels = false;
        for (const auto& f : i.problem["sizes"]["fuzz"]) {
            QCOMPARE(f["in_channels"].get<int>() % 4, 0);
            otherChannels = otherChannels || f["in_channels"].get<int>() != 16;
        }
        QVERIFY(otherChannels);
        QVERIFY(runEverywhere(i.dir.toStdString()) >= 4);
    }

    // MaxPool3d(3, stride 2, ceil_mode) has no meta kernel in 1.13: its shape rule stands in; then 2-D
    // average pooling with ceil_mode over the flattened channels.
    void poolingCeilMode()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("pool_ceil_mode"));
        QCOMPARE(shapeOf(i.problem["outputs"], "y"),
            std::string(R"x(["batch_size","channels * floor(depth / 2)","floor((height + 2) / 4)",)x"
                        R"x("floor((width + 2) / 4)"])x"));
        QVERIFY(i.problem["sizes"]["fuzz"].size() >= 4);
        QVERIFY(runEverywhere(i.dir.toStdString()) >= 4);
    }

    // GroupNorm(6 groups): channels a multiple of 6.
    void groupNormDivisibility()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("group_norm_divisible"));
        QCOMPARE(constraintsOf(i.problem), std::vector<std::string> { "channels % 6 == 0" });
        QVERIFY2(
            i.run.out.contains(QStringLiteral("num_channels must be divisible by num_groups")), qPrintable(i.run.out));
        for (const auto& f : i.problem["sizes"]["fuzz"])
            QCOMPARE(f["channels"].get<int>() % 6, 0);
        QVERIFY(runEverywhere(i.dir.toStdString()) >= 4);
    }

    // A kernel of 11: length at least 11, the fuzz sizes start at the edge.
    void kernelLargerThanSmallSizes()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("large_kernel"));
        QCOMPARE(constraintsOf(i.problem), std::vector<std::string> { "length >= 11" });
        QCOMPARE(shapeOf(i.problem["outputs"], "y"), std::string(R"x(["batch_size","6","length - 10"])x"));
        bool edge = false;
        for (const auto& f : i.problem["sizes"]["fuzz"]) {
            QVERIFY(f["length"].get<int>() >= 11);
            edge = edge || f["length"].get<int>() == 11;
        }
        QVERIFY(edge);
        QVERIFY(runEverywhere(i.dir.toStdString()) >= 4);
    }

    // HingeLoss as KernelBench writes it: batch_size only at 512 (or 1). Imported at KernelBench's sizes
    // only, no fuzz sizes; problem.json and check say so and why; the reference runs there.
    void broadcastAgainstAFixedDimension()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("broadcast_fixed"));
        QVERIFY(i.problem["sizes"]["fuzz"].empty());
        const std::string fixed = i.problem["sizes"].value("fixed", std::string());
        QVERIFY2(fixed.find("KernelBench's sizes only") != std::string::npos, i.problem.dump().c_str());
        QVERIFY2(fixed.find("must match the size of tensor b") != std::string::npos, fixed.c_str());
        QVERIFY2(i.run.out.contains(QStringLiteral("fixed sizes: imported at KernelBench's sizes only")),
            qPrintable(i.run.out));
        const auto problem = kl::loadProblem((i.dir + QStringLiteral("/problem.json")).toStdString());
        QCOMPARE(problem.fixedSizes, fixed);
        QCOMPARE(runEverywhere(i.dir.toStdString()), 1);
        // A fixed problem with fuzz sizes is a contradiction the loader refuses.
        auto contradiction = i.problem;
        contradiction["sizes"]["fuzz"] = nlohmann::json::array({ { { "batch_size", 1 } } });
        writeText(i.dir + QStringLiteral("/problem.json"), QByteArray::fromStdString(contradiction.dump()));
        const auto check = runCli({ QStringLiteral("check"), i.dir + QStringLiteral("/problem.json") });
        QCOMPARE(check.exitCode, 2);
        QVERIFY2(check.err.contains(QStringLiteral("[problem.fixed-with-fuzz]")), qPrintable(check.err));
    }

    // A bool mask travels as u8 0/1 and is a bool again for the Model: y = cumsum(x * mask) per row.
    void boolMask()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("bool_mask"));
        const auto& mask = i.problem["inputs"][1];
        QCOMPARE(mask["dtype"].get<std::string>(), std::string("u8"));
        QCOMPARE(mask["distribution"].dump(), std::string(R"x({"high":1,"kind":"integers","low":0})x"));
        const int sets = runEverywhere(i.dir.toStdString(), [](const ReferenceRun& r, const kl::SizeSet& s) {
            const auto rows = s.values.at("batch_size"), cols = s.values.at("length");
            const auto &x = r.inputs.at("x"), &m = r.inputs.at("mask"), &y = r.outputs.at("y");
            for (std::int64_t row = 0; row < rows; ++row) {
                double sum = 0;
                for (std::int64_t c = 0; c < cols; ++c) {
                    const auto k = std::size_t(row * cols + c);
                    sum += x[k] * m[k];
                    near(y[k], sum, "masked cumsum", k);
                }
            }
        });
        QVERIFY(sets >= 5);
    }

    // A 0-d parameter and a 0-d input: one element each here, 0-d tensors for the Model.
    void zeroDimTensors()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("zero_dim"));
        QCOMPARE(shapeOf(i.problem["inputs"], "limit"), std::string(R"x(["1"])x"));
        QCOMPARE(shapeOf(i.problem["inputs"], "scale"), std::string(R"x(["1"])x"));
        const int sets = runEverywhere(i.dir.toStdString(), [](const ReferenceRun& r, const kl::SizeSet&) {
            const auto &x = r.inputs.at("x"), &y = r.outputs.at("y");
            const double scale = r.inputs.at("scale")[0], limit = r.inputs.at("limit")[0];
            for (std::size_t k = 0; k < x.size(); ++k)
                near(y[k], std::min(float(x[k] * scale), float(limit)) - scale, "min(x * scale, limit) - scale", k);
        });
        QVERIFY(sets >= 5);
    }

    // 80 parameter tensors: one packed f32 buffer (weight, bias per layer, in order), viewed out of it by
    // the reference; a 40-layer tanh MLP computed here from the same buffer agrees.
    void manyParametersPacked()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("many_parameters"));
        QCOMPARE(i.problem["inputs"].size(), std::size_t(2));
        QCOMPARE(shapeOf(i.problem["inputs"], "params_f32"),
            std::string(R"x(["40 * features * features + 40 * features"])x"));
        QVERIFY2(i.run.out.contains(QStringLiteral("80 parameter tensors packed")), qPrintable(i.run.out));
        const int sets = runEverywhere(
            i.dir.toStdString(),
            [](const ReferenceRun& r, const kl::SizeSet& s) {
                const auto rows = std::size_t(s.values.at("batch_size")), n = std::size_t(s.values.at("features"));
                const auto& p = r.inputs.at("params_f32");
                std::vector<double> x = r.inputs.at("x");
                std::size_t offset = 0;
                for (int layer = 0; layer < 40; ++layer) {
                    std::vector<double> next(rows * n);
                    for (std::size_t b = 0; b < rows; ++b)
                        for (std::size_t o = 0; o < n; ++o) {
                            double sum = p[offset + n * n + o];
                            for (std::size_t k = 0; k < n; ++k)
                                sum += p[offset + o * n + k] * x[b * n + k];
                            next[b * n + o] = std::tanh(sum);
                        }
                    offset += n * n + n;
                    x = next;
                }
                for (std::size_t k = 0; k < x.size(); ++k)
                    near(r.outputs.at("y")[k], x[k], "40 tanh layers", k, 1e-3); // float32 through 40 layers
            },
            0.05); // small weights: 40 layers that do not amplify rounding
        QVERIFY(sets >= 3);
    }

    // nn.Dropout(p=0.0) draws nothing: imported (y = 2x), where dropout with p > 0 is refused below.
    void dropoutZeroIsTheIdentity()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("dropout_zero"));
        const int sets = runEverywhere(i.dir.toStdString(), [](const ReferenceRun& r, const kl::SizeSet&) {
            for (std::size_t k = 0; k < r.inputs.at("x").size(); ++k)
                near(r.outputs.at("y")[k], 2.0 * r.inputs.at("x")[k], "2 x", k);
        });
        QVERIFY(sets >= 5);
    }

    // An output length no rule covers: batch_size stays at KernelBench's 8 in every size set, dim varies.
    void sizeWithoutARuleStays()
    {
        QTemporaryDir tmp;
        const auto i = importFixture(tmp, QStringLiteral("no_shape_rule"));
        QVERIFY(!i.problem["sizes"].contains("fixed"));
        std::set<int> dims;
        for (const auto& f : i.problem["sizes"]["fuzz"]) {
            QCOMPARE(f["batch_size"].get<int>(), 8);
            dims.insert(f["dim"].get<int>());
        }
        QVERIFY(dims.size() >= 3);
        QVERIFY2(i.run.out.contains(QStringLiteral("batch_size stays at 8")), qPrintable(i.run.out));
        QVERIFY(runEverywhere(i.dir.toStdString()) >= 3);
    }

    void trueRefusals_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("says");
        QTest::addColumn<QString>("skipIf");
        QTest::newRow("dropout p > 0") << QStringLiteral("dropout_random") << QStringLiteral("random-ops")
                                       << QStringLiteral("dropout with p = 0.25 in training mode") << QString();
        QTest::newRow("missing package") << QStringLiteral("needs_einops") << QStringLiteral("needs-package")
                                         << QStringLiteral("needs the Python package einops")
                                         << QStringLiteral("import einops");
        QTest::newRow("operator PyTorch 1.13 lacks")
            << QStringLiteral("sdpa") << QStringLiteral("needs-operator")
            << QStringLiteral("torch.nn.functional.scaled_dot_product_attention")
            << QStringLiteral("import torch.nn.functional as F; F.scaled_dot_product_attention");
    }

    // What this Python cannot run is refused naming what is missing (on a PyTorch with it, it imports).
    void trueRefusals()
    {
        QFETCH(QString, file);
        QFETCH(QString, category);
        QFETCH(QString, says);
        QFETCH(QString, skipIf);
        if (!skipIf.isEmpty() && pythonHas(skipIf.toUtf8().constData()))
            QSKIP("this Python has what the file needs");
        QTemporaryDir tmp;
        const auto run
            = importKernelBench(kFixtures + file + QStringLiteral(".py"), tmp.path() + QStringLiteral("/out"));
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(
            run.err.contains(QStringLiteral("[kernelbench.") + category + QStringLiteral("]")), qPrintable(run.err));
        QVERIFY2(run.err.contains(says), qPrintable(run.err));
    }

    // The whole fixtures folder in one warm Python (PyTorch imported once): the same problems as one by one.
    void folderInOneWorker()
    {
        QTemporaryDir tmp;
        const auto run = runCli({ QStringLiteral("import-kernelbench"), kFixtures, QStringLiteral("-o"), tmp.path() });
        QCOMPARE(run.exitCode, 1); // the three true refusals
        QVERIFY2(run.out.contains(QStringLiteral("imported 11 of 14")), qPrintable(run.out));
        const auto one = importKernelBench(kFixtures + QStringLiteral("conv3d_strided.py"),
            tmp.path() + QStringLiteral("/one"), { QStringLiteral("--force") });
        QCOMPARE(one.exitCode, 0);
        QCOMPARE(readText(tmp.path() + QStringLiteral("/one/problem.json")),
            readText(tmp.path() + QStringLiteral("/conv3d_strided/problem.json")));
    }

    // KL_KERNELBENCH_IMPORTED: 20 problems of a real KernelBench import (both levels; convolutions and
    // pooling among them), every fuzz size run by the worker.
    void kernelBenchSample()
    {
        const QByteArray root = qgetenv("KL_KERNELBENCH_IMPORTED");
        if (root.isEmpty())
            QSKIP("KL_KERNELBENCH_IMPORTED is not set (scripts/kernelbench-import-survey.sh sets it)");
        std::vector<fs::path> all;
        for (const auto& level : fs::directory_iterator(root.toStdString()))
            if (level.is_directory())
                for (const auto& problem : fs::directory_iterator(level.path()))
                    if (fs::exists(problem.path() / "problem.json"))
                        all.push_back(problem.path());
        std::sort(all.begin(), all.end());
        std::vector<fs::path> chosen;
        for (const char* kind : { "onv", "ool" }) // conv/Conv and pool/Pool: 3 of each per level
            for (const char* level : { "level1", "level2" }) {
                int taken = 0;
                for (const auto& p : all)
                    if (taken < 3 && p.parent_path().filename() == level
                        && p.filename().string().find(kind) != std::string::npos
                        && std::find(chosen.begin(), chosen.end(), p) == chosen.end()) {
                        chosen.push_back(p);
                        ++taken;
                    }
            }
        for (std::size_t i = 0; chosen.size() < 20 && i < all.size(); i += 23) // then others, both levels
            if (std::find(chosen.begin(), chosen.end(), all[i]) == chosen.end())
                chosen.push_back(all[i]);
        QVERIFY(chosen.size() >= 20);
        int sets = 0;
        for (const auto& dir : chosen) {
            const int n = runEverywhere(dir);
            qInfo("%s/%s: %d size sets", dir.parent_path().filename().c_str(), dir.filename().c_str(), n);
            sets += n;
        }
        qInfo("sample: %zu problems, %d size sets run by the CPU worker", chosen.size(), sets);
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchOperators)
#include "test_kernelbench_operators.moc"
