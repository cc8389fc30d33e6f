// The compute side of speed of light: precision names, the default precision of a problem from its
// inputs, the per-architecture ceiling table (docs/compute-ceilings.md), the problem's "compute" field and,
// without it, the ceiling chosen from what the operator is (a matrix product or not) and why.
#include "core/model/precision.h"
#include "core/model/problem.h"
#include "expect_error.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace fs = std::filesystem;
using kl::Precision;

namespace {

void write(const fs::path& p, const std::string& text)
{
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// A GEMM-shaped problem with inputs of `dtype` and, when given, "compute": `compute`.
kl::Problem gemmProblem(const fs::path& root, const std::string& dtype, const std::string& compute = {})
{
    write(root / "k.cu",
        "extern \"C\" __global__ void k(float* c, int n) {}\n// @kl launch k grid=(1) block=(32) args=(c, M)\n");
    write(root / "p.json",
        R"({"name":"p","sizes":{"symbols":["M"],"main":[{"M":64}]},
            "inputs":[{"name":"a","dtype":")"
            + dtype + R"(","shape":["M","M"]},{"name":"b","dtype":")" + dtype
            + R"(","shape":["M","M"]}],"outputs":[{"name":"c","dtype":"f32","shape":["M","M"]}],
            "reference":"k.cu","baseline":"k.cu","bytes":"12*M*M","flops":"2*M*M*M")"
            + (compute.empty() ? std::string() : ",\"compute\":\"" + compute + "\"") + "}");
    return kl::loadProblem(root / "p.json");
}

fs::path example(const std::string& name)
{
    return fs::path(KL_SOURCE_DIR) / "resources/examples" / name / "problem.json";
}

std::string readText(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A bundled example as its file says, with `change` applied to its JSON (its sources stay beside it).
kl::Problem exampleChanged(const std::string& name, const std::function<void(nlohmann::json&)>& change)
{
    auto json = nlohmann::json::parse(readText(example(name)));
    change(json);
    return kl::parseProblem(json.dump(), example(name));
}

// A problem as import-kernelbench writes it (core/session/kernelbench_import.cpp): a PyTorch reference, no
// baseline, the bytes of its tensors and, where flop_count.py found products, their FLOPs.
kl::Problem importedProblem(const fs::path& root, const nlohmann::json& json)
{
    write(root / "reference.py", "def reference(**tensors):\n    pass\n");
    write(root / "problem.json", json.dump());
    return kl::loadProblem(root / "problem.json");
}

} // namespace

class TestPrecision : public QObject {
    Q_OBJECT

private slots:
    void namesRoundTrip()
    {
        for (const Precision p : kl::allPrecisions()) {
            QCOMPARE(kl::parsePrecision(kl::precisionName(p)), std::optional<Precision>(p));
            QVERIFY(!kl::precisionLabel(p).empty());
        }
        QVERIFY(!kl::parsePrecision("half"));
        QVERIFY(kl::isTensorPrecision(Precision::Fp16));
        QVERIFY(kl::isTensorPrecision(Precision::Fp64Tensor));
        QVERIFY(!kl::isTensorPrecision(Precision::Fp32));
        QVERIFY(!kl::isTensorPrecision(Precision::Fp64));
    }

    void defaultFromInputs()
    {
        using kl::DType;
        QCOMPARE(kl::defaultPrecision({ DType::F16, DType::F16 }), Precision::Fp16);
        QCOMPARE(kl::defaultPrecision({ DType::BF16 }), Precision::Bf16);
        QCOMPARE(kl::defaultPrecision({ DType::F32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({ DType::F64 }), Precision::Fp64);
        QCOMPARE(kl::defaultPrecision({ DType::I8, DType::I8 }), Precision::Int8);
        QCOMPARE(kl::defaultPrecision({ DType::U8 }), Precision::Int8);
        // The narrowest floating type wins: its ceiling is the highest, so the floor is never too strict.
        QCOMPARE(kl::defaultPrecision({ DType::F32, DType::F16 }), Precision::Fp16);
        QCOMPARE(kl::defaultPrecision({ DType::F64, DType::F32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({ DType::I32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({}), Precision::Fp32);
    }

    void ceilingTable_data()
    {
        QTest::addColumn<QString>("cc");
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("rate");
        // sm_90 against docs/compute-ceilings.md's table (FP64 tensor 256: 67 TFLOP/s at 1980 MHz).
        QTest::newRow("sm_90 fp16") << "9.0" << int(Precision::Fp16) << 4096.0;
        QTest::newRow("sm_90 bf16") << "9.0" << int(Precision::Bf16) << 4096.0;
        QTest::newRow("sm_90 tf32") << "9.0" << int(Precision::Tf32) << 2048.0;
        QTest::newRow("sm_90 fp8") << "9.0" << int(Precision::Fp8) << 8192.0;
        QTest::newRow("sm_90 int8") << "9.0" << int(Precision::Int8) << 8192.0;
        QTest::newRow("sm_90 fp32") << "9.0" << int(Precision::Fp32) << 256.0;
        QTest::newRow("sm_90 fp64") << "9.0" << int(Precision::Fp64) << 128.0;
        QTest::newRow("sm_90 fp64 tensor") << "9.0" << int(Precision::Fp64Tensor) << 256.0;
        QTest::newRow("sm_80 fp16") << "8.0" << int(Precision::Fp16) << 2048.0;
        QTest::newRow("sm_80 fp32") << "8.0" << int(Precision::Fp32) << 128.0;
        QTest::newRow("sm_80 tf32") << "8.0" << int(Precision::Tf32) << 1024.0;
        QTest::newRow("sm_80 int8") << "8.0" << int(Precision::Int8) << 4096.0;
        QTest::newRow("sm_80 fp64 tensor") << "8.0" << int(Precision::Fp64Tensor) << 128.0;
        QTest::newRow("sm_80 no fp8") << "8.0" << int(Precision::Fp8) << 0.0;
        QTest::newRow("sm_86 fp16") << "8.6" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("sm_86 fp32") << "8.6" << int(Precision::Fp32) << 256.0;
        QTest::newRow("sm_86 no fp64 tensor") << "8.6" << int(Precision::Fp64Tensor) << 0.0;
        QTest::newRow("sm_89 fp8") << "8.9" << int(Precision::Fp8) << 2048.0;
        QTest::newRow("sm_89 fp16") << "8.9" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("sm_100 fp16") << "10.0" << int(Precision::Fp16) << 8192.0;
        QTest::newRow("sm_120 fp16") << "12.0" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("arch name") << "sm_90a" << int(Precision::Fp16) << 4096.0;
        QTest::newRow("arch name sm_100") << "sm_100" << int(Precision::Fp8) << 16384.0;
    }

    void ceilingTable()
    {
        QFETCH(QString, cc);
        QFETCH(int, precision);
        QFETCH(double, rate);
        const auto got = kl::flopsPerSmPerClock(cc.toStdString(), static_cast<Precision>(precision));
        QVERIFY(got);
        QCOMPARE(*got, rate);
    }

    void everyArchitectureHasEveryPrecision()
    {
        QVERIFY(kl::knownArchitectures().size() >= 4);
        for (const auto& cc : kl::knownArchitectures())
            for (const Precision p : kl::allPrecisions())
                QVERIFY2(kl::flopsPerSmPerClock(cc, p), cc.c_str());
        QVERIFY(!kl::flopsPerSmPerClock("7.0", Precision::Fp16));
    }

    void ceilingsFromPublishedPeaks()
    {
        // H100 SXM: 989 TFLOP/s fp16 dense at 1830 MHz, 66.9 FP32 at 1980 MHz (132 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "9.0", 132, 1830) - 989.4) < 0.5);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "9.0", 132, 1980) - 66.9) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp64Tensor, "9.0", 132, 1980) - 66.9) < 0.1);
        // A100 SXM: 312 fp16, 19.5 FP32, 9.7 FP64, 624 int8 at 1410 MHz (108 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.0", 108, 1410) - 311.9) < 0.5);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.0", 108, 1410) - 19.5) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp64, "8.0", 108, 1410) - 9.7) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Int8, "8.0", 108, 1410) - 623.8) < 0.5);
        // L40S: 362 fp16 (fp32 accumulate), 733 fp8, 91.6 FP32 at 2520 MHz (142 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.9", 142, 2520) - 366.4) < 5.0);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp8, "8.9", 142, 2520) - 732.8) < 1.0);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.9", 142, 2520) - 91.6) < 0.1);
        // A40: 149.7 fp16, 37.4 FP32 at 1740 MHz (84 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.6", 84, 1740) - 149.7) < 0.2);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.6", 84, 1740) - 37.4) < 0.1);
        // Unknown parts: 0.
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "9.0", 0, 1980), 0.0);
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "9.0", 132, 0), 0.0);
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "6.1", 132, 1980), 0.0);
    }

    void problemComputeField()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        QCOMPARE(gemmProblem(root, "f16").computePrecision(), Precision::Fp16);
        QVERIFY(!gemmProblem(root, "f16").compute);
        QCOMPARE(gemmProblem(root, "bf16").computePrecision(), Precision::Bf16);
        QCOMPARE(gemmProblem(root, "f32").computePrecision(), Precision::Fp32);
        QCOMPARE(gemmProblem(root, "f64").computePrecision(), Precision::Fp64);
        QCOMPARE(gemmProblem(root, "i8").computePrecision(), Precision::Int8);
        QCOMPARE(gemmProblem(root, "f32", "tf32").computePrecision(), Precision::Tf32);
        QCOMPARE(gemmProblem(root, "f16", "fp32").computePrecision(), Precision::Fp32);
        QCOMPARE(gemmProblem(root, "f16", "fp8").computePrecision(), Precision::Fp8);
        kl::test::expectError([&] { gemmProblem(root, "f16", "half"); }, "problem.bad-compute", "compute");
    }

    // LayerNorm+GELU (fp16 in and out, fp32 maths): 20 FLOPs per element whatever the sizes, not a matrix
    // product, so its FLOPs are held to the CUDA cores' FP32 ceiling, 16x under FP16 tensor on sm_90.
    void layernormRunsOnTheCudaCores()
    {
        const auto p = kl::loadProblem(example("layernorm_gelu"));
        QVERIFY(!p.compute);
        QVERIFY(!p.isMatrixProduct());
        const auto ceiling = p.computeCeiling();
        QCOMPARE(ceiling.precision, Precision::Fp32);
        QCOMPARE(ceiling.reason, kl::CeilingReason::NotMatrixProduct);
        QCOMPARE(p.computePrecision(), Precision::Fp32);
        QCOMPARE(
            kl::ceilingText(ceiling.precision, ceiling.reason), std::string("FP32 CUDA cores: not a matrix product"));
        QCOMPARE(*kl::flopsPerSmPerClock("sm_90", Precision::Fp16) / *kl::flopsPerSmPerClock("sm_90", Precision::Fp32),
            16.0);
        // The Triton twin and the bf16 softmax: the same.
        QCOMPARE(kl::loadProblem(example("layernorm_gelu_triton")).computeCeiling(), ceiling);
        const auto softmax = kl::loadProblem(example("softmax_bf16"));
        QCOMPARE(softmax.computeCeiling(), ceiling);
    }

    // The bundled fp16 GEMM says "compute": "fp16"; without it the rule gives the same: a matrix product.
    void gemmRunsOnTheTensorCores()
    {
        const auto declared = kl::loadProblem(example("gemm_fp16"));
        QCOMPARE(declared.computeCeiling(), (kl::ComputeCeiling { Precision::Fp16, kl::CeilingReason::Declared }));
        const auto derived = exampleChanged("gemm_fp16", [](nlohmann::json& j) { j.erase("compute"); });
        QVERIFY(!derived.compute);
        QVERIFY(derived.isMatrixProduct());
        QCOMPARE(derived.computeCeiling(), (kl::ComputeCeiling { Precision::Fp16, kl::CeilingReason::MatrixProduct }));
        QCOMPARE(kl::ceilingText(Precision::Fp16, kl::CeilingReason::MatrixProduct),
            std::string("FP16 tensor: a matrix product"));
        // bf16 and int8 products run on the tensor cores too; an fp32 one on the CUDA cores unless it says tf32.
        const auto bf16 = exampleChanged("gemm_fp16", [](nlohmann::json& j) {
            j.erase("compute");
            for (auto& t : j["inputs"])
                t["dtype"] = "bf16";
        });
        QCOMPARE(bf16.computeCeiling(), (kl::ComputeCeiling { Precision::Bf16, kl::CeilingReason::MatrixProduct }));
        QTemporaryDir dir;
        QCOMPARE(gemmProblem(dir.path().toStdString(), "f32").computeCeiling(),
            (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::MatrixProduct }));
        QCOMPARE(gemmProblem(dir.path().toStdString(), "i8").computeCeiling(),
            (kl::ComputeCeiling { Precision::Int8, kl::CeilingReason::MatrixProduct }));
    }

    // An explicit "compute" wins over the rule both ways.
    void declaredComputeWins()
    {
        const auto layernorm = exampleChanged("layernorm_gelu", [](nlohmann::json& j) { j["compute"] = "fp16"; });
        QCOMPARE(layernorm.computeCeiling(), (kl::ComputeCeiling { Precision::Fp16, kl::CeilingReason::Declared }));
        QCOMPARE(layernorm.computeCeiling(true), layernorm.computeCeiling());
        QCOMPARE(kl::ceilingText(Precision::Fp16, kl::CeilingReason::Declared),
            std::string("FP16 tensor: the problem's \"compute\""));
        const auto gemm = exampleChanged("gemm_fp16", [](nlohmann::json& j) { j["compute"] = "fp32"; });
        QCOMPARE(gemm.computeCeiling(), (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::Declared }));
    }

    // A kernel whose code issues tensor-core instructions can beat the CUDA cores' floor: it is held to the
    // inputs' tensor precision.
    void tensorInstructionsRaiseTheCeiling()
    {
        const auto layernorm = kl::loadProblem(example("layernorm_gelu"));
        QCOMPARE(layernorm.computeCeiling(true),
            (kl::ComputeCeiling { Precision::Fp16, kl::CeilingReason::TensorInstructions }));
        QTemporaryDir dir;
        const auto f32 = gemmProblem(dir.path().toStdString(), "f32");
        QCOMPARE(
            f32.computeCeiling(true), (kl::ComputeCeiling { Precision::Tf32, kl::CeilingReason::TensorInstructions }));
        // Already on the tensor cores: the product's reason stands.
        const auto derived = exampleChanged("gemm_fp16", [](nlohmann::json& j) { j.erase("compute"); });
        QCOMPARE(derived.computeCeiling(true), derived.computeCeiling());
        QCOMPARE(kl::tensorPrecision({ kl::DType::F64 }), Precision::Fp64Tensor);
        QCOMPARE(kl::cudaCorePrecision({ kl::DType::F64 }), Precision::Fp64);
        QCOMPARE(kl::cudaCorePrecision({ kl::DType::BF16, kl::DType::I8 }), Precision::Fp32);
        QCOMPARE(kl::cudaCorePrecision({ kl::DType::I8 }), Precision::Fp32);
    }

    // Problems as import-kernelbench writes them: a matmul (flop_count.py: 2·M·K·N) against an element-wise
    // operator with FLOPs of its own (and one without: the copy alone, on the CUDA cores all the same).
    void importedMatmulAgainstElementwise()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        using nlohmann::json;
        const auto tensor = [](const char* name, const std::string& dtype, json shape) {
            return json { { "name", name }, { "dtype", dtype }, { "shape", std::move(shape) } };
        };
        const auto matmul = [&](const std::string& dtype, const std::string& bytes) {
            return importedProblem(root,
                { { "name", "1_Square_matmul" }, { "arch", "sm_90" },
                    { "sizes",
                        { { "symbols", { "M", "K", "N" } },
                            { "main", json::array({ { { "M", 1024 }, { "K", 4096 }, { "N", 2048 } } }) },
                            { "fuzz", json::array() } } },
                    { "inputs", { tensor("A", dtype, { "M", "K" }), tensor("B", dtype, { "K", "N" }) } },
                    { "outputs", { tensor("output0", dtype, { "M", "N" }) } }, { "reference", "reference.py" },
                    { "bytes", bytes }, { "flops", "2 * M * K * N" } });
        };
        const auto f32 = matmul("f32", "4 * M * K + 4 * K * N + 4 * M * N");
        QVERIFY(f32.isMatrixProduct());
        QCOMPARE(f32.computeCeiling(), (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::MatrixProduct }));
        const auto f16 = matmul("f16", "2 * M * K + 2 * K * N + 2 * M * N");
        QCOMPARE(f16.computeCeiling(), (kl::ComputeCeiling { Precision::Fp16, kl::CeilingReason::MatrixProduct }));

        const auto elementwise = [&](const std::string& dtype, const std::string& flops) {
            json p = { { "name", "26_GELU_" }, { "arch", "sm_90" },
                { "sizes",
                    { { "symbols", { "batch_size", "dim" } },
                        { "main", json::array({ { { "batch_size", 4096 }, { "dim", 393216 } } }) },
                        { "fuzz", json::array() } } },
                { "inputs", { tensor("x", dtype, { "batch_size", "dim" }) } },
                { "outputs", { tensor("output0", dtype, { "batch_size", "dim" }) } }, { "reference", "reference.py" },
                { "bytes", "4 * batch_size * dim" } };
            if (!flops.empty())
                p["flops"] = flops;
            return importedProblem(root, p);
        };
        const auto gelu = elementwise("f16", "14 * batch_size * dim");
        QVERIFY(!gelu.isMatrixProduct());
        QCOMPARE(gelu.computeCeiling(), (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::NotMatrixProduct }));
        // As the importer writes an element-wise one (flop_count.py counts only products): no FLOPs.
        QCOMPARE(elementwise("f32", "").computeCeiling(),
            (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::NotMatrixProduct }));
        // A row reduction does as few FLOPs per byte at any size: not a product either.
        const auto sum = importedProblem(root,
            { { "name", "47_Sum_reduction" }, { "arch", "sm_90" },
                { "sizes",
                    { { "symbols", { "M", "N" } }, { "main", json::array({ { { "M", 4096 }, { "N", 8192 } } }) },
                        { "fuzz", json::array() } } },
                { "inputs", { tensor("x", "bf16", { "M", "N" }) } },
                { "outputs", { tensor("output0", "bf16", json::array({ "M" })) } }, { "reference", "reference.py" },
                { "bytes", "2 * M * N + 2 * M" }, { "flops", "M * N" } });
        QCOMPARE(sum.computeCeiling(), (kl::ComputeCeiling { Precision::Fp32, kl::CeilingReason::NotMatrixProduct }));
    }

    void reasonNamesRoundTrip()
    {
        for (const auto r : { kl::CeilingReason::Declared, kl::CeilingReason::MatrixProduct,
                 kl::CeilingReason::NotMatrixProduct, kl::CeilingReason::TensorInstructions }) {
            QCOMPARE(kl::parseCeilingReason(kl::ceilingReasonName(r)), std::optional<kl::CeilingReason>(r));
            QVERIFY(!kl::ceilingReasonText(r).empty());
        }
        QVERIFY(!kl::parseCeilingReason("because"));
        QCOMPARE(kl::ceilingText(Precision::Fp16, std::nullopt), std::string("FP16 tensor"));
    }
};

QTEST_GUILESS_MAIN(TestPrecision)
#include "test_precision.moc"
