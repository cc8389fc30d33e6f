// import-kernelbench for real: the three bundled KernelBench-format problems and one written here
// become problem folders that `check` accepts (with a naive CUDA baseline, NVRTC being what CI has),
// and whose generated reference.py, run by the runner's own PyTorch worker on Debian's CPU PyTorch,
// gives what the operator's formula gives at every fuzz size.
#include "kernelbench_cli.h"

#include "core/model/expression.h"
#include "core/model/problem.h"
#include "runner/python_worker.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <random>

namespace fs = std::filesystem;
using namespace kbtest;

namespace {

const QString kRoot = QStringLiteral(KL_SOURCE_DIR);

// The operator's formula, written here independently of PyTorch: outputs from inputs at one size.
using Formula = std::function<void(const std::map<std::string, std::vector<float>>& inputs,
    const std::map<std::string, std::int64_t>& sizes, std::vector<float>& y)>;

void gelu(const std::map<std::string, std::vector<float>>& in, const std::map<std::string, std::int64_t>&,
    std::vector<float>& y)
{
    const auto& x = in.at("x");
    for (std::size_t i = 0; i < x.size(); ++i)
        y[i] = static_cast<float>(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
}

void softmax(const std::map<std::string, std::vector<float>>& in, const std::map<std::string, std::int64_t>& s,
    std::vector<float>& y)
{
    const auto& x = in.at("x");
    const auto rows = s.at("batch_size"), cols = s.at("dim");
    for (std::int64_t r = 0; r < rows; ++r) {
        double top = -1e300, sum = 0;
        for (std::int64_t c = 0; c < cols; ++c)
            top = std::max(top, double(x[std::size_t(r * cols + c)]));
        for (std::int64_t c = 0; c < cols; ++c)
            sum += std::exp(double(x[std::size_t(r * cols + c)]) - top);
        for (std::int64_t c = 0; c < cols; ++c)
            y[std::size_t(r * cols + c)]
                = static_cast<float>(std::exp(double(x[std::size_t(r * cols + c)]) - top) / sum);
    }
}

void rmsNorm(const std::map<std::string, std::vector<float>>& in, const std::map<std::string, std::int64_t>& s,
    std::vector<float>& y)
{
    const auto &x = in.at("x"), &w = in.at("weight");
    const auto rows = s.at("tokens"), cols = s.at("hidden");
    for (std::int64_t r = 0; r < rows; ++r) {
        double squares = 0;
        for (std::int64_t c = 0; c < cols; ++c)
            squares += double(x[std::size_t(r * cols + c)]) * x[std::size_t(r * cols + c)];
        const double scale = 1.0 / std::sqrt(squares / double(cols) + 1e-6);
        for (std::int64_t c = 0; c < cols; ++c)
            y[std::size_t(r * cols + c)] = static_cast<float>(x[std::size_t(r * cols + c)] * scale * w[std::size_t(c)]);
    }
}

// The problem written by the test: three size globals, two inputs (one from rand: uniform), a
// parameter, an init scalar. y = tanh(a) * alpha + b + bias[c].
const char* kGenericProblem = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, alpha):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(channels))
        self.alpha = alpha

    def forward(self, a, b):
        return torch.tanh(a) * self.alpha + b + self.bias


batch = 6
seq = 40
channels = 24
alpha = 0.75
axis = 1  # an integer global that is no size: changing it changes no shape


def get_inputs():
    return [torch.randn(batch, seq, channels), torch.rand(batch, seq, channels)]


def get_init_inputs():
    return [channels, alpha]
)";

const char* kGenericBaseline = R"(// @kl tunable THREADS = 256 in 64, 128, 256
// @kl launch residual grid=(cdiv(batch * seq * channels, THREADS)) block=(THREADS) args=(a, b, bias, y, batch * seq, channels)
extern "C" __global__ void residual(const float* a, const float* b, const float* bias, float* y, int rows, int cols)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols)
        y[i] = tanhf(a[i]) * 0.75f + b[i] + bias[i % cols];
}
)";

void residual(const std::map<std::string, std::vector<float>>& in, const std::map<std::string, std::int64_t>& s,
    std::vector<float>& y)
{
    const auto &a = in.at("a"), &b = in.at("b"), &bias = in.at("bias");
    const auto channels = s.at("channels");
    for (std::size_t i = 0; i < a.size(); ++i)
        y[i] = static_cast<float>(std::tanh(double(a[i])) * 0.75 + b[i] + bias[i % std::size_t(channels)]);
}

// Runs the folder's reference.py in the runner's PyTorch worker at every fuzz size (and a small copy
// of the main shape's proportions is not needed: fuzz sizes are what verification runs) and compares
// with the formula. Returns the number of size sets checked.
int referenceMatchesFormula(const fs::path& dir, const Formula& formula)
{
    const auto problem = kl::loadProblem(dir / "problem.json");
    const std::string source = readText(QString::fromStdString((dir / "reference.py").string())).toStdString();
    kl::runner::PythonWorker worker;
    std::mt19937 random(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int checked = 0;
    for (const auto& sizes : problem.fuzzSizes) {
        std::vector<kl::runner::SharedTensors::Tensor> tensors;
        std::map<std::string, std::vector<std::int64_t>> shapes;
        for (const auto* list : { &problem.inputs, &problem.outputs })
            for (const auto& t : *list) {
                const std::vector<std::int64_t> shape = shapeAt(t, sizes);
                const std::int64_t rows = rowsOf(shape);
                shapes[t.name] = shape;
                tensors.push_back(
                    { t.name, list == &problem.outputs, { kl::DType::F32, rows, shape.back(), shape.back() } });
            }
        kl::runner::SharedTensors shared(tensors);
        std::map<std::string, std::vector<float>> inputs;
        for (const auto& t : problem.inputs) {
            std::int64_t n = 1;
            for (auto d : shapes[t.name])
                n *= d;
            auto& values = inputs[t.name];
            for (std::int64_t i = 0; i < n; ++i)
                values.push_back(normal(random));
            std::memcpy(shared.at(shared.offsetOf(t.name)), values.data(), values.size() * sizeof(float));
        }
        const nlohmann::json reply = worker.call(
            { { "op", "reference" }, { "source", source }, { "file", "reference.py" }, { "shm", shared.path() },
                { "tensors", shared.describe(shapes) }, { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
            std::chrono::seconds(60));
        if (!reply.value("ok", false))
            qFatal("reference at %s: %s", sizes.label.c_str(), reply.dump().c_str());
        const auto& out = problem.outputs.front();
        std::int64_t n = 1;
        for (auto d : shapes[out.name])
            n *= d;
        std::vector<float> want(std::size_t(n), 0.0f);
        formula(inputs, { sizes.values.begin(), sizes.values.end() }, want);
        const auto* got = reinterpret_cast<const float*>(shared.at(shared.offsetOf(out.name)));
        for (std::int64_t i = 0; i < n; ++i)
            if (std::fabs(got[i] - want[std::size_t(i)]) > 1e-4f * (1.0f + std::fabs(want[std::size_t(i)])))
                qFatal("%s at %s, element %lld: reference %g, formula %g", dir.filename().c_str(), sizes.label.c_str(),
                    static_cast<long long>(i), double(got[i]), double(want[std::size_t(i)]));
        ++checked;
    }
    return checked;
}

nlohmann::json problemJson(const QString& dir)
{
    return nlohmann::json::parse(readText(dir + QStringLiteral("/problem.json")).toStdString());
}

} // namespace

class TestKernelBenchImport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch)");
        qputenv("KL_PYTHON", kPython);
    }

    void bundledProblems_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("symbols");
        QTest::addColumn<QString>("inputs");
        QTest::addColumn<QString>("bytes");
        QTest::newRow("gelu") << QStringLiteral("gelu") << QStringLiteral("batch_size=4096 dim=8192")
                              << QStringLiteral("x") << QStringLiteral("4 * batch_size * dim + 4 * batch_size * dim");
        QTest::newRow("softmax") << QStringLiteral("softmax") << QStringLiteral("batch_size=4096 dim=8192")
                                 << QStringLiteral("x")
                                 << QStringLiteral("4 * batch_size * dim + 4 * batch_size * dim");
        QTest::newRow("rms_norm") << QStringLiteral("rms_norm") << QStringLiteral("tokens=8192 hidden=4096")
                                  << QStringLiteral("x weight")
                                  << QStringLiteral("4 * tokens * hidden + 4 * hidden + 4 * tokens * hidden");
    }

    // Each bundled problem: the sizes are KernelBench's globals, the fuzz sizes cover 1, odd, prime,
    // non-power-of-two and longer than a 4096 block; check passes with a naive baseline; the reference
    // agrees with the formula at every fuzz size.
    void bundledProblems()
    {
        QFETCH(QString, name);
        QFETCH(QString, symbols);
        QFETCH(QString, inputs);
        QFETCH(QString, bytes);
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QLatin1Char('/') + name;
        const auto run
            = importKernelBench(kRoot + QStringLiteral("/resources/kernelbench/") + name + QStringLiteral(".py"), dir,
                { QStringLiteral("--baseline"),
                    kRoot + QStringLiteral("/tests/kernelbench/baselines/") + name + QStringLiteral(".cu") });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        const auto p = problemJson(dir);
        QString got;
        for (const auto& s : p["sizes"]["symbols"])
            got += (got.isEmpty() ? QString() : QStringLiteral(" ")) + QString::fromStdString(s.get<std::string>())
                + QLatin1Char('=') + QString::number(p["sizes"]["main"][0][s.get<std::string>()].get<qint64>());
        QCOMPARE(got, symbols);
        QString names;
        for (const auto& t : p["inputs"])
            names += (names.isEmpty() ? QString() : QStringLiteral(" "))
                + QString::fromStdString(t["name"].get<std::string>());
        QCOMPARE(names, inputs);
        QCOMPARE(QString::fromStdString(p["bytes"].get<std::string>()), bytes);
        QCOMPARE(p["reference"].get<std::string>(), std::string("reference.py"));
        QCOMPARE(p["baseline"].get<std::string>(), std::string("baseline.cu"));
        std::set<std::int64_t> rowLengths;
        bool allOnes = false;
        const std::string row = p["sizes"]["symbols"].back().get<std::string>();
        for (const auto& f : p["sizes"]["fuzz"]) {
            rowLengths.insert(f[row].get<std::int64_t>());
            bool ones = true;
            for (const auto& [k, v] : f.items())
                ones = ones && v.get<std::int64_t>() == 1;
            allOnes = allOnes || ones;
        }
        QVERIFY(allOnes);
        QVERIFY(rowLengths.count(12289)); // prime, three 4096-blocks and one element
        QVERIFY(rowLengths.count(4097)); // one past a block
        QVERIFY(rowLengths.count(1000)); // not a power of two
        QVERIFY(rowLengths.count(1));

        const auto check = runCli({ QStringLiteral("check"), dir + QStringLiteral("/problem.json") });
        QVERIFY2(check.exitCode == 0, qPrintable(check.err + check.out));
        const std::map<QString, Formula> formulas { { QStringLiteral("gelu"), gelu },
            { QStringLiteral("softmax"), softmax }, { QStringLiteral("rms_norm"), rmsNorm } };
        QCOMPARE(referenceMatchesFormula(dir.toStdString(), formulas.at(name)), int(p["sizes"]["fuzz"].size()));
    }

    // A problem this test writes: the importer works on any such file, not on the bundled three. The
    // parameter becomes an input; `axis` (an int global no shape follows) is not a size; rand is uniform.
    void problemWrittenHere()
    {
        QTemporaryDir tmp;
        const QString file = writeText(tmp.path() + QStringLiteral("/residual.py"), kGenericProblem);
        const QString baseline = writeText(tmp.path() + QStringLiteral("/start.cu"), kGenericBaseline);
        const QString dir = tmp.path() + QStringLiteral("/out");
        const auto run = importKernelBench(file, dir, { QStringLiteral("--baseline"), baseline });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        const auto p = problemJson(dir);
        QCOMPARE(p["sizes"]["symbols"].dump(), std::string(R"(["batch","seq","channels"])"));
        QCOMPARE(p["inputs"].size(), std::size_t(3));
        QCOMPARE(p["inputs"][1]["distribution"]["kind"].get<std::string>(), std::string("uniform"));
        QCOMPARE(p["inputs"][2]["name"].get<std::string>(), std::string("bias"));
        QCOMPARE(p["inputs"][2]["shape"].dump(), std::string(R"(["channels"])"));
        QCOMPARE(p["outputs"][0]["shape"].dump(), std::string(R"(["batch","seq","channels"])"));
        const auto check = runCli({ QStringLiteral("check"), dir + QStringLiteral("/problem.json") });
        QVERIFY2(check.exitCode == 0, qPrintable(check.err + check.out));
        QVERIFY(referenceMatchesFormula(dir.toStdString(), residual) >= 5);
    }

    // No --baseline: no kernel yet. The problem has no "baseline" (PyTorch eager is the time to beat),
    // candidates are Triton by default, `check` says what a session will do.
    void noKernelWithoutBaseline()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QStringLiteral("/gelu");
        const auto run = importKernelBench(kRoot + QStringLiteral("/resources/kernelbench/gelu.py"), dir);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QVERIFY2(run.out.contains(QStringLiteral("no kernel yet")), qPrintable(run.out));
        QVERIFY(!QFile::exists(dir + QStringLiteral("/baseline.py")));
        const auto json = nlohmann::json::parse(readText(dir + QStringLiteral("/problem.json")).toStdString());
        QVERIFY(!json.contains("baseline"));
        const auto problem = kl::loadProblem((dir + QStringLiteral("/problem.json")).toStdString());
        QVERIFY(!problem.hasBaselineKernel());
        QCOMPARE(int(problem.language()), int(kl::CandidateLanguage::Triton));
        const auto check = runCli({ QStringLiteral("check"), dir + QStringLiteral("/problem.json") });
        QVERIFY2(check.exitCode == 0, qPrintable(check.err + check.out));
        QVERIFY2(check.out.contains(QStringLiteral("no kernel yet")), qPrintable(check.out));
        QVERIFY2(check.out.contains(QStringLiteral("PyTorch eager")), qPrintable(check.out));
        // The folder holds a problem now: a second import refuses unless --force.
        const auto again = importKernelBench(kRoot + QStringLiteral("/resources/kernelbench/gelu.py"), dir);
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains(QStringLiteral("[kernelbench.exists]")), qPrintable(again.err));
        QCOMPARE(importKernelBench(
                     kRoot + QStringLiteral("/resources/kernelbench/gelu.py"), dir, { QStringLiteral("--force") })
                     .exitCode,
            0);
    }

    // A folder: one problem folder each, and a summary naming what was refused and why; one bad file
    // does not stop the others.
    void folderWithSummary()
    {
        QTemporaryDir tmp;
        const QString in = tmp.path() + QStringLiteral("/in");
        QDir().mkpath(in);
        QFile::copy(kRoot + QStringLiteral("/resources/kernelbench/gelu.py"), in + QStringLiteral("/26_GELU.py"));
        QFile::copy(kRoot + QStringLiteral("/resources/kernelbench/swish.py"), in + QStringLiteral("/25_Swish.py"));
        writeText(in + QStringLiteral("/99_Random.py"),
            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.rand_like(x)\n\ndef get_inputs():\n    return [torch.randn(64, 128)]\n\n"
            "def get_init_inputs():\n    return []\n");
        const QString out = tmp.path() + QStringLiteral("/problems");
        const auto run = runCli({ QStringLiteral("import-kernelbench"), in, QStringLiteral("-o"), out });
        QCOMPARE(run.exitCode, 1); // one refused
        QVERIFY2(run.out.contains(QStringLiteral("imported 2 of 3")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("refused 99_Random.py: kernelbench.")), qPrintable(run.out));
        QVERIFY(QFile::exists(out + QStringLiteral("/26_GELU/problem.json")));
        QVERIFY(QFile::exists(out + QStringLiteral("/25_Swish/problem.json")));
        QVERIFY(!QFile::exists(out + QStringLiteral("/99_Random/problem.json")));
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchImport)
#include "test_kernelbench_import.moc"
