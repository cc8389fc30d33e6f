// The runner's PyTorch worker, for real: python/kernelloop/torch_reference_worker.py under Debian's
// CPU PyTorch, driven through runner/python_worker.* exactly as the runner drives it (pipe, host
// shared memory, row strides with padding gaps), on the example's PyTorch reference.
#include "core/verify/median_interval.h"
#include "runner/job_failure.h"
#include "runner/python_worker.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kl;
using namespace kl::runner;

namespace {

const fs::path kRoot = KL_SOURCE_DIR;
const char* kPython = "/usr/bin/python3"; // Debian's, where python3-torch installs

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// What the worker module's own functions give for `expression` (Python, `w` the module), as JSON.
nlohmann::json workerFunction(const std::string& expression)
{
    const fs::path script = fs::temp_directory_path() / ("kl-worker-function-" + std::to_string(getpid()) + ".py");
    {
        std::ofstream out(script);
        out << "import json, sys\nsys.path.insert(0, " << nlohmann::json((kRoot / "python" / "kernelloop").string())
            << ")\nimport torch_reference_worker as w\nprint(json.dumps(" << expression << "))\n";
    }
    std::string text;
    if (std::FILE* pipe = popen((std::string(kPython) + " " + script.string()).c_str(), "r")) {
        char buffer[4096];
        while (std::fgets(buffer, sizeof buffer, pipe))
            text += buffer;
        pclose(pipe);
    }
    fs::remove(script);
    return nlohmann::json::parse(text, nullptr, false);
}

std::string pythonList(const std::vector<double>& values)
{
    std::string text = "[";
    for (double v : values)
        text += std::to_string(v) + ",";
    return text + "]";
}

// Samples with a slow tail every seventh run and a narrowing spread: the rule stops on the interval.
std::vector<double> sampleSeries(std::size_t count)
{
    std::vector<double> samples;
    for (std::size_t i = 0; i < count; ++i)
        samples.push_back(6000.0 + static_cast<double>((i * 37) % 11) * 3.0 + (i % 7 == 0 ? 400.0 : 0.0));
    return samples;
}

bool hasTorch()
{
    return fs::exists(kPython) && std::system((std::string(kPython) + " -c 'import torch' 2>/dev/null").c_str()) == 0;
}

} // namespace

class TestTorchWorker : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch)");
        qputenv("KL_PYTHON", kPython);
    }

    // f32 rows of 5 with a stride of 8 (3 padding elements): y = x * scale + b, written back into
    // the output's region, the padding gaps left as they were.
    void referenceThroughSharedMemory()
    {
        const int rows = 3, length = 5, stride = 8;
        const verify::TensorLayout xl { DType::F32, rows, length, stride };
        const verify::TensorLayout bl { DType::F32, 1, length, length };
        SharedTensors shared({ { "x", false, xl }, { "b", false, bl }, { "y", true, xl } });
        auto* x = reinterpret_cast<float*>(shared.at(shared.offsetOf("x")));
        auto* b = reinterpret_cast<float*>(shared.at(shared.offsetOf("b")));
        auto* y = reinterpret_cast<float*>(shared.at(shared.offsetOf("y")));
        for (int i = 0; i < rows * stride; ++i) {
            x[i] = (i % stride) < length ? static_cast<float>(i) : 1e30f;
            y[i] = -7.0f; // the poison a gap keeps
        }
        for (int i = 0; i < length; ++i)
            b[i] = 0.5f * static_cast<float>(i);
        const std::string source = "import torch\ndef reference(x, b, scale):\n"
                                   "    assert x.stride() == (8, 1), x.stride()\n"
                                   "    return x * scale + b\n";
        PythonWorker worker;
        const nlohmann::json reply = worker.call(
            { { "op", "reference" }, { "source", source }, { "file", "ref.py" }, { "shm", shared.path() },
                { "tensors", shared.describe({}) }, { "scalars", { { "scale", 2.0 } } }, { "device", "cpu" } },
            std::chrono::seconds(60));
        QVERIFY2(reply.value("ok", false), reply.dump().c_str());
        QVERIFY(worker.startMillis() > 0.0);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < stride; ++c) {
                const float got = y[r * stride + c];
                if (c < length)
                    QCOMPARE(got, 2.0f * static_cast<float>(r * stride + c) + 0.5f * static_cast<float>(c));
                else
                    QCOMPARE(got, -7.0f);
            }
        qInfo("one reference call: map %.2f ms, call %.2f ms, worker start %.0f ms", reply["ms"].value("map", 0.0),
            reply["ms"].value("call", 0.0), worker.startMillis());
    }

    // The example's own reference (layer_norm + tanh GELU in fp16) on a 2 x 4 input against numbers
    // computed here by hand; outputs written in place when the function takes the output's name.
    void exampleReferenceAndInPlaceOutputs()
    {
        const verify::TensorLayout xl { DType::F32, 2, 4, 4 };
        SharedTensors shared({ { "x", false, xl }, { "y", true, xl } });
        auto* x = reinterpret_cast<float*>(shared.at(shared.offsetOf("x")));
        const float values[8] = { 1, 2, 3, 4, -1, 0, 1, 2 };
        std::memcpy(x, values, sizeof values);
        PythonWorker worker;
        const std::string inPlace = "def reference(x, y):\n    y.copy_(x.flip(-1))\n";
        const nlohmann::json reply = worker.call(
            { { "op", "reference" }, { "source", inPlace }, { "file", "r.py" }, { "shm", shared.path() },
                { "tensors", shared.describe({}) }, { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
            std::chrono::seconds(60));
        QVERIFY2(reply.value("ok", false), reply.dump().c_str());
        const auto* y = reinterpret_cast<const float*>(shared.at(shared.offsetOf("y")));
        QCOMPARE(y[0], 4.0f);
        QCOMPARE(y[7], -1.0f);

        // The bundled example's reference: shapes come from the case (here [2, 4]); gamma 1, beta 0.
        const verify::TensorLayout vl { DType::F32, 1, 4, 4 };
        SharedTensors ln({ { "x", false, xl }, { "gamma", false, vl }, { "beta", false, vl }, { "y", true, xl } });
        std::memcpy(ln.at(ln.offsetOf("x")), values, sizeof values);
        auto* gamma = reinterpret_cast<float*>(ln.at(ln.offsetOf("gamma")));
        auto* beta = reinterpret_cast<float*>(ln.at(ln.offsetOf("beta")));
        for (int i = 0; i < 4; ++i) {
            gamma[i] = 1.0f;
            beta[i] = 0.0f;
        }
        const std::string example = readFile(kRoot / "resources/examples/layernorm_gelu_triton/reference.py");
        const nlohmann::json r2
            = worker.call({ { "op", "reference" }, { "source", example }, { "file", "reference.py" },
                              { "shm", ln.path() }, { "tensors", ln.describe({ { "x", { 2, 4 } } }) },
                              { "scalars", { { "eps", 1e-5 } } }, { "device", "cpu" } },
                std::chrono::seconds(60));
        QVERIFY2(r2.value("ok", false), r2.dump().c_str());
        const auto* out = reinterpret_cast<const float*>(ln.at(ln.offsetOf("y")));
        // Row 1: mean 2.5, var 1.25 → h[3] = 1.5/sqrt(1.25) = 1.3416; gelu_tanh(1.3416) = 1.2207
        QVERIFY2(std::fabs(out[3] - 1.2207f) < 1e-3f, std::to_string(out[3]).c_str());
        QVERIFY2(std::fabs(out[0] + 0.1208f) < 1e-3f, std::to_string(out[0]).c_str()); // gelu(-1.3416)
    }

    // A reference that raises is a reply with its message, and the worker lives on; a wrong shape too.
    void failuresAreReplies()
    {
        const verify::TensorLayout l { DType::F32, 1, 4, 4 };
        SharedTensors shared({ { "x", false, l }, { "y", true, l } });
        PythonWorker worker;
        auto call = [&](const std::string& source) {
            return worker.call(
                { { "op", "reference" }, { "source", source }, { "file", "bad.py" }, { "shm", shared.path() },
                    { "tensors", shared.describe({}) }, { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
                std::chrono::seconds(60));
        };
        const auto raised = call("def reference(x):\n    raise ValueError('no such op')\n");
        QVERIFY(!raised.value("ok", true));
        QCOMPARE(raised.value("category", ""), std::string("reference-error"));
        QVERIFY(raised.value("message", "").find("no such op") != std::string::npos);
        const auto shape = call("def reference(x):\n    return x[:2]\n");
        QVERIFY(shape.value("message", "").find("has shape [2]") != std::string::npos);
        const auto fine = call("def reference(x):\n    return x + 1\n");
        QVERIFY2(fine.value("ok", false), fine.dump().c_str());
    }

    // The contenders repeat as the candidate does (issue 27): the worker's median interval and stop rule
    // are core/verify's, number for number, and its adaptive loop stops where the runner's Timer would.
    void adaptiveRuleAsTheRunners()
    {
        for (std::size_t n : { 3, 5, 6, 7, 20, 21, 57, 200 }) {
            const std::vector<double> samples = sampleSeries(n);
            const verify::MedianInterval cpp = verify::medianInterval(samples);
            const nlohmann::json py = workerFunction("w.median_interval(" + pythonList(samples) + ")");
            if (!cpp.known) {
                QVERIFY2(py.is_null(), py.dump().c_str());
                continue;
            }
            QVERIFY2(py.is_array() && py.size() == 3, py.dump().c_str());
            QCOMPARE(py[0].get<double>(), cpp.median);
            QCOMPARE(py[1].get<double>(), cpp.low);
            QCOMPARE(py[2].get<double>(), cpp.high);
            for (double width : { 0.001, 0.005, 0.05 })
                for (double elapsed : { 10.0, 1000.0 }) {
                    const verify::StopRule rule { width, 20, 150, 500.0 };
                    const auto stop = verify::shouldStop(samples, elapsed, rule);
                    const nlohmann::json said = workerFunction("w.should_stop(" + pythonList(samples) + ", "
                        + std::to_string(elapsed) + ", {'half_width': " + std::to_string(width)
                        + ", 'min_reps': 20, 'max_reps': 150, 'time_cap_ms': 500.0})");
                    QCOMPARE(said.is_null() ? std::string() : said.get<std::string>(),
                        stop ? std::string(verify::stopReasonName(*stop)) : std::string());
                }
        }
        // The loop: the minimum, then a quarter more (at least 10) until the rule stops (runner/timer.cpp),
        // here with a clock that never reaches the cap.
        const verify::StopRule rule { 0.0005, 20, 2000, 1e9 };
        std::vector<double> taken;
        std::size_t next = 20;
        std::string reason;
        for (;;) {
            taken = sampleSeries(next);
            if (const auto stop = verify::shouldStop(taken, 0.0, rule)) {
                reason = std::string(verify::stopReasonName(*stop));
                break;
            }
            next = std::min<std::size_t>(2000, next + std::max<std::size_t>(10, next / 4));
        }
        const nlohmann::json py = workerFunction("(lambda s: [len(s[0]), s[1]])(w.adaptive_samples("
                                                 "(lambda series: (lambda n: [series.pop(0) for _ in range(n)]))("
            + pythonList(sampleSeries(2000))
            + "), {'half_width': 0.0005, 'min_reps': 20, 'max_reps': 2000, "
              "'time_cap_ms': 1e9}, clock=lambda: 0.0))");
        QVERIFY2(py.is_array(), py.dump().c_str());
        QCOMPARE(py[0].get<std::size_t>(), taken.size());
        QCOMPARE(py[1].get<std::string>(), reason);
        QCOMPARE(reason, std::string("interval"));
    }

    // Started early (the runner's --python-worker), the worker imports torch while the runner goes on;
    // a request sent without waiting is answered before the next call's, and kept for the caller.
    void earlyStartAndRequestsSentAhead()
    {
        const verify::TensorLayout l { DType::F32, 1, 4, 4 };
        SharedTensors shared({ { "x", false, l }, { "y", true, l } });
        PythonWorker worker;
        worker.launch();
        QVERIFY(worker.started());
        worker.send({ { "op", "no-such-op" } });
        const nlohmann::json reply
            = worker.call({ { "op", "reference" }, { "source", "def reference(x):\n    return x * 2\n" },
                              { "file", "r.py" }, { "shm", shared.path() }, { "tensors", shared.describe({}) },
                              { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
                std::chrono::seconds(60));
        QVERIFY2(reply.value("ok", false), reply.dump().c_str());
        const std::vector<nlohmann::json> answered = worker.takeAnswered();
        QCOMPARE(answered.size(), std::size_t { 1 });
        QCOMPARE(answered.front().value("category", ""), std::string("bad-request"));
        QVERIFY(worker.takeAnswered().empty());
        QVERIFY(worker.startMillis() > 0.0);
        QVERIFY(worker.startWaitMillis() <= worker.startMillis());
    }

    // The runner's device buffers (tensors with an IPC handle) on a worker without CUDA: a reply that
    // says so (the runner then uses host copies and says why), never a crash.
    void deviceBuffersRefusedWithoutCuda()
    {
        PythonWorker worker;
        const nlohmann::json tensors
            = nlohmann::json::array({ { { "name", "x" }, { "role", "input" }, { "dtype", "f32" }, { "shape", { 4 } },
                { "row_stride", 4 }, { "offset", 65536 }, { "ipc", std::string(128, '0') } } });
        const nlohmann::json reply = worker.call(
            { { "op", "reference" }, { "source", "def reference(x):\n    return x\n" }, { "file", "r.py" },
                { "tensors", tensors }, { "scalars", nlohmann::json::object() }, { "device", "cpu" } },
            std::chrono::seconds(60));
        QVERIFY(!reply.value("ok", true));
        QCOMPARE(reply.value("category", ""), std::string("ipc-unavailable"));
    }

    // No Python there: a categorised failure that says what to set, never a hang or a crash.
    void missingPython()
    {
        qputenv("KL_PYTHON", "/nonexistent/python3");
        PythonWorker worker;
        bool threw = false;
        try {
            worker.call({ { "op", "hello" } }, std::chrono::seconds(10));
        } catch (const JobFailure& failure) {
            threw = true;
            QCOMPARE(failure.category(), protocol::Category::BadRequest);
            QVERIFY2(std::string(failure.what()).find("KL_PYTHON") != std::string::npos, failure.what());
        }
        qputenv("KL_PYTHON", kPython);
        QVERIFY(threw);
    }
};

QTEST_GUILESS_MAIN(TestTorchWorker)
#include "test_torch_worker.moc"
