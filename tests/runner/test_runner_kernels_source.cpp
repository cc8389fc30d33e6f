// The runner's own kernels compile with NVRTC for every architecture the runner runs on (sm_80 and
// later: the generators use bf16), no GPU needed; the tensor-ceiling microbenchmark kl_mma_peak issues
// mma.sync m16n8k16 with fp32 accumulation in independent chains (runner/tensor_peak.h).
#include "runner/runner_kernels_source.h"

#include <QTest>

#include <nvrtc.h>

#include <string>

namespace {

struct Compiled {
    nvrtcResult result = NVRTC_ERROR_COMPILATION;
    std::string log;
    std::string ptx;
};

Compiled compile(const std::string& arch)
{
    Compiled out;
    nvrtcProgram program = nullptr;
    nvrtcCreateProgram(&program, kl::runner::kRunnerKernelSource, "kernelloop_runner_kernels.cu", 0, nullptr, nullptr);
    const std::string archOption = "--gpu-architecture=" + arch;
    const char* options[] = { archOption.c_str(), "-default-device" };
    out.result = nvrtcCompileProgram(program, 2, options);
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    out.log.assign(size, '\0');
    nvrtcGetProgramLog(program, out.log.data());
    if (out.result == NVRTC_SUCCESS) {
        nvrtcGetPTXSize(program, &size);
        out.ptx.assign(size, '\0');
        nvrtcGetPTX(program, out.ptx.data());
    }
    nvrtcDestroyProgram(&program);
    return out;
}

int occurrences(const std::string& text, const std::string& what)
{
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

class TestRunnerKernelsSource : public QObject {
    Q_OBJECT
private slots:
    void compilesForEveryArchitecture_data()
    {
        QTest::addColumn<QString>("arch");
        QTest::newRow("sm_80") << QStringLiteral("sm_80");
        QTest::newRow("sm_86") << QStringLiteral("sm_86");
        QTest::newRow("sm_89") << QStringLiteral("sm_89");
        QTest::newRow("sm_90") << QStringLiteral("sm_90");
    }
    void compilesForEveryArchitecture()
    {
        QFETCH(QString, arch);
        const Compiled c = compile(arch.toStdString());
        QVERIFY2(c.result == NVRTC_SUCCESS, c.log.c_str());
        QVERIFY(c.ptx.find(".entry kl_mma_peak") != std::string::npos);
        // The chains stay independent and fp16 x fp16 + fp32: what the tensor ceiling is of.
        QVERIFY(occurrences(c.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") >= 8);
    }
};

QTEST_GUILESS_MAIN(TestRunnerKernelsSource)
#include "test_runner_kernels_source.moc"
