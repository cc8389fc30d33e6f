// The runner's PyTorch worker, for real: python/kernelloop/torch_reference_worker.py under Debian's
// CPU PyTorch, driven through runner/python_worker.* exactly as the runner drives it (pipe, host
// shared memory, row strides with padding gaps), on the example's PyTorch reference.
#include "runner/job_failure.h"
#include "runner/python_worker.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
