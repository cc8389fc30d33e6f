// The compute side of the findings (core/findings/rules_compute.cpp, issue 25): over recorded-format dumps of
// a CUDA-core GEMM and a tensor-core GEMM recorded on the H200 (tests/fixtures/findings/gemm-*-sol-h200.json), the
// tensor instructions counted in real NVRTC output (PTX) and in SASS text, and the tuner's moves following the compute
// hints.
#include "core/compile/compiler.h"
#include "core/findings/synthesise.h"
#include "core/findings/telemetry.h"
#include "core/lines/tensor_instructions.h"
#include "core/loop/evaluation.h"
#include "core/model/candidate.h"
#include "core/tuner/move_ranking.h"

#include <QtTest>

#include <fstream>
#include <sstream>

using kl::Finding;
using kl::Telemetry;

namespace {

const std::string kFixtures = KL_SOURCE_DIR "/tests/fixtures/findings/";

const Finding* find(const std::vector<Finding>& findings, const std::string& id)
{
    for (const auto& f : findings)
        if (f.id == id)
            return &f;
    return nullptr;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string ptxOf(const std::string& source, const std::string& name, const kl::TunableValues& tunables = {})
{
    const auto candidate = kl::parseCandidate(source, name);
    kl::CompileOptions options;
    options.tunables = tunables;
    const auto compiled = kl::compileCandidate(candidate, options);
    return compiled.ok ? compiled.ptx : std::string();
}

// A tensor-core kernel as a first attempt at one writes it: mma.sync m16n8k16 from registers.
const char* kMmaKernel = R"(
// @kl launch mma_kernel grid=(1) block=(32) args=(out)
extern "C" __global__ void mma_kernel(float* out)
{
    unsigned a = threadIdx.x, b = threadIdx.x * 3u;
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, "
                 "{%0,%1,%2,%3};" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a), "r"(b));
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}
)";

} // namespace

class TestFindingsCompute : public QObject {
    Q_OBJECT
private slots:
    // The naive tiled GEMM on the CUDA cores: the tensor cores did nothing, and the ceiling it is held to is
    // the FP16 tensor one, not FP32 (which the kernel's 9 TFLOP/s would come closer to).
    void cudaCoreGemm()
    {
        const Telemetry t = kl::loadTelemetry(kFixtures + "gemm-tiled-sol-h200.json");
        QCOMPARE(t.precision, std::optional<kl::Precision>(kl::Precision::Fp16));
        QVERIFY(std::abs(t.peakTflops - 1070.5) < 0.5);
        QVERIFY(t.pctOfSol && *t.pctOfSol < 1.0);
        QCOMPARE(t.solBound, std::optional<kl::Bound>(kl::Bound::Compute));
        const auto findings = kl::synthesise(t);
        const Finding* none = find(findings, "compute.no-tensor-instructions");
        QVERIFY(none);
        QCOMPARE(none->severity, Finding::Severity::Critical);
        QVERIFY2(none->title.find("an fp16 compute-bound kernel issued no tensor-core instructions") == 0,
            none->title.c_str());
        // Judged from the code, not the counter: on the H200 this CUDA-core kernel still executed 134.7M
        // instructions on the tensor pipe (ptxas's HFMA2.MMA moves), so a counter-only rule would stay silent.
        QVERIFY2(none->title.find("(no mma.sync/wgmma.mma_async/wmma.mma in the PTX)") != std::string::npos,
            none->title.c_str());
        QVERIFY(t.metrics.at(kl::metric::kTensorInstructions) > 1e8);
        QCOMPARE(none->tunerHints, std::vector<std::string> { kl::hint::kTensorCores });
        QVERIFY(!find(findings, "compute.tensor-pipe")); // the same fact, said once
        const Finding* under = find(findings, "compute.under-ceiling");
        QVERIFY(under);
        QVERIFY2(under->title.find("of FP16 tensor peak") != std::string::npos, under->title.c_str());
        QVERIFY(findings.front().id == "compute.no-tensor-instructions");
    }

    // The WMMA candidate on the H200: 53 TFLOP/s, the tensor pipe 9% busy at 5% of SOL, a warning with staging
    // directions.
    void tensorCoreGemm()
    {
        const Telemetry t = kl::loadTelemetry(kFixtures + "gemm-wmma-sol-h200.json");
        const auto findings = kl::synthesise(t);
        QVERIFY(!find(findings, "compute.no-tensor-instructions"));
        const Finding* pipe = find(findings, "compute.tensor-pipe");
        QVERIFY2(pipe, findings.empty() ? "none" : findings.front().id.c_str());
        QCOMPARE(QString::fromStdString(pipe->title), QStringLiteral("tensor pipe 9% busy at 5% of SOL"));
        QCOMPARE(pipe->severity, Finding::Severity::Warning);
        QVERIFY(std::abs(pipe->evidence.at("tensor_pipe_pct") - 8.648) < 0.001);
        QVERIFY(std::find(pipe->tunerHints.begin(), pipe->tunerHints.end(), kl::hint::kMoreStages)
            != pipe->tunerHints.end());
        // Already on the tensor cores: told to feed them, not to start using them.
        const Finding* under = find(findings, "compute.under-ceiling");
        QVERIFY(under);
        QVERIFY2(under->directions.back().rfind("feed the tensor cores", 0) == 0, under->directions.back().c_str());
    }

    // Memory-bound problems read as before: no compute finding, whatever the precision.
    void memoryBoundIsSilent()
    {
        Telemetry t = kl::loadTelemetry(kFixtures + "layernorm-vectorised-sol-synthetic.json");
        t.precision = kl::Precision::Fp16;
        t.metrics[kl::metric::kTensorInstructions] = 0.0;
        t.tensorInstructions = kl::lines::TensorInstructions { 0, "PTX", {} };
        for (const auto& f : kl::synthesise(t))
            QVERIFY2(f.id.rfind("compute.", 0) != 0, f.id.c_str());
    }

    // FP32 FLOPs on the CUDA cores: no tensor finding even when compute-bound without tensor instructions.
    void fp32IsNotATensorPrecision()
    {
        Telemetry t = kl::loadTelemetry(kFixtures + "gemm-tiled-sol-h200.json");
        t.precision = kl::Precision::Fp32;
        t.solBound.reset();
        t.peakTflops = 66.9;
        QVERIFY(!find(kl::synthesise(t), "compute.no-tensor-instructions"));
    }

    // The code says it too: the PTX of the bundled tiled baseline has no mma, an mma.sync kernel has one.
    void tensorInstructionsInPtx()
    {
        const std::string tiled = ptxOf(readFile(KL_SOURCE_DIR "/resources/examples/gemm_fp16/baseline.cu"),
            "baseline.cu", { { "TILE", 16 }, { "WPT", 1 } });
        QVERIFY(!tiled.empty());
        const auto none = kl::lines::countTensorInstructions({}, tiled);
        QVERIFY(none);
        QCOMPARE(none->source, std::string("PTX"));
        QCOMPARE(none->count, std::int64_t(0));
        QCOMPARE(none->text(), std::string("no mma.sync/wgmma.mma_async/wmma.mma in the PTX"));
        const auto some = kl::lines::countTensorInstructions({}, ptxOf(kMmaKernel, "mma.cu"));
        QVERIFY(some);
        QCOMPARE(some->count, std::int64_t(1));
        QCOMPARE(some->text(), std::string("1 mma.sync in the PTX"));
        QVERIFY(!kl::lines::countTensorInstructions({}, {}));
        // The telemetry carries it to the rule: the same CUDA-core dump, judged from the code.
        Telemetry t = kl::loadTelemetry(kFixtures + "gemm-tiled-sol-h200.json");
        t.tensorInstructions = none;
        const Finding* f = find(kl::synthesise(t), "compute.no-tensor-instructions");
        QVERIFY(f);
        QVERIFY2(
            f->title.find("(no mma.sync/wgmma.mma_async/wmma.mma in the PTX)") != std::string::npos, f->title.c_str());
    }

    // SASS wins over PTX where it was disassembled; every opcode ending in MMA counts, HFMA2.MMA does not.
    void tensorInstructionsInSass()
    {
        const std::string sass = R"(	.section	.text.gemm,"ax",@progbits
.text.gemm:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   HFMA2.MMA R2, -RZ, RZ, 0, 0 ;
        /*0020*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0030*/               @P0 HMMA.16816.F32 R20, R8, R14, R20 ;
        /*0040*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;
        /*0050*/                   IMMA.16832.S8.S8 R40, R8, R12, R40 ;
        /*0060*/                   EXIT ;
)";
        const auto found = kl::lines::countTensorInstructions(sass, "mma.sync.aligned.m16n8k16 ignored");
        QVERIFY(found);
        QCOMPARE(found->source, std::string("SASS"));
        QCOMPARE(found->count, std::int64_t(4));
        QCOMPARE(found->byOpcode.at("HMMA"), std::int64_t(2));
        QCOMPARE(found->text(), std::string("1 HGMMA, 2 HMMA, 1 IMMA in the SASS"));
        const auto none
            = kl::lines::countTensorInstructions(".text.gemm:\n"
                                                 "        /*0000*/                   FFMA R1, R2, R3, R1 ;\n",
                "wmma.mma.sync ignored");
        QVERIFY(none);
        QCOMPARE(none->text(), std::string("no HMMA/HGMMA/IMMA/IGMMA/QGMMA in the SASS"));
    }

    // The tuner follows the compute hints as it follows the memory ones: larger tiles up, more stages up.
    void movesFollowComputeHints()
    {
        kl::Guidance guidance;
        guidance.hints = { kl::hint::kLargerTiles };
        QVERIFY(kl::moveScore({ { "TILE", 16 } }, { { "TILE", 32 } }, guidance) > 0);
        QVERIFY(kl::moveScore({ { "TILE", 32 } }, { { "TILE", 16 } }, guidance) < 0);
        guidance.hints = { kl::hint::kMoreStages };
        QVERIFY(kl::moveScore({ { "STAGES", 2 } }, { { "STAGES", 3 } }, guidance) > 0);
        const auto& known = kl::knownHints();
        QVERIFY(std::find(known.begin(), known.end(), kl::hint::kLargerTiles) != known.end());
    }
};

QTEST_GUILESS_MAIN(TestFindingsCompute)
#include "test_findings_compute.moc"
