// The job's memory plan (runner/memory_plan.h) on the CPU: which phase is the peak and what is in it,
// byte for byte, on KernelBench's 23_Softmax at its real size (4096 x 393216 fp32) and on a padded
// case with scratch; and the out-of-memory detail naming the sizes.
#include "core/verify/patterns.h"
#include "runner/memory_plan.h"

#include <QtTest>

using namespace kl;
using namespace kl::runner;

namespace {

constexpr std::size_t kGuards = 2 * verify::kGuardBytes;

protocol::Buffer buffer(const std::string& name, PlannedBuffer::Role role, DType type, std::int64_t rows,
    std::int64_t length, std::int64_t stride)
{
    protocol::Buffer b;
    b.name = name;
    b.role = role;
    b.dtype = type;
    b.rows = rows;
    b.rowLength = length;
    b.rowStride = stride;
    return b;
}

// 23_Softmax: x -> y, both 4096 x 393216 fp32 (6.44 GB each), 12.9 GB moved per call.
protocol::EvaluateRequest softmax(bool python)
{
    protocol::EvaluateRequest request;
    protocol::Case c;
    c.label = "main";
    c.timed = true;
    c.bytes = 2.0 * 4096 * 393216 * 4;
    c.buffers = { buffer("x", PlannedBuffer::Role::Input, DType::F32, 4096, 393216, 393216),
        buffer("y", PlannedBuffer::Role::Output, DType::F32, 4096, 393216, 393216) };
    request.cases.push_back(c);
    if (python)
        request.pythonReference = protocol::PythonReference { "def reference(x): ...", "ref.py", {} };
    return request;
}

constexpr std::size_t kTensor = 4096ull * 393216 * 4; // 6,442,450,944 bytes

} // namespace

class TestMemoryPlan : public QObject {
    Q_OBJECT

private slots:
    // CUDA reference (no worker), flush not yet allocated: the timing phase is the peak: case memory
    // without the reference's outputs (lean), the flush, and a same-size copy of 12.9 GB.
    void cudaReferenceTimingIsThePeak()
    {
        MemoryPlanContext context;
        context.flushBytes = 120ull << 20;
        context.referenceCacheCapacity = 1ull << 30; // too small for 6.4 GB: not kept
        const MemoryPlan plan = planJobMemory(softmax(false), context);
        QCOMPARE(plan.peak.phase, std::string("time"));
        QCOMPARE(plan.peak.inputs, kTensor + kGuards);
        QCOMPARE(plan.peak.outputs, kTensor + kGuards);
        QCOMPARE(plan.peak.referenceOutputs, std::size_t { 0 });
        QCOMPARE(plan.peak.flush, std::size_t { 120ull << 20 });
        QCOMPARE(plan.peak.copy, 2 * kTensor);
        QCOMPARE(plan.peak.worker, std::size_t { 0 });
        QCOMPARE(plan.peak.total(), 4 * kTensor + 2 * kGuards + (120ull << 20));
        QCOMPARE(plan.needed(), plan.peak.total() + (256ull << 20));
    }

    // A PyTorch reference by the host path: verify holds the case with the reference's outputs plus the
    // worker's own device copies (inputs, outputs, result) or torch.compile's warm-up, whichever is larger;
    // timing keeps the reference's outputs (the contenders' worker reads them) and adds the worker's two
    // results, its flush and (host path) its copy of the inputs.
    void pythonReferenceCountsTheWorker()
    {
        MemoryPlanContext context;
        context.flushBytes = 120ull << 20;
        context.flushAllocated = true;
        protocol::EvaluateRequest verifyOnly = softmax(true);
        verifyOnly.options.time = false;
        const MemoryPlan verify = planJobMemory(verifyOnly, context);
        QCOMPARE(verify.peak.phase, std::string("verify"));
        QCOMPARE(verify.peak.referenceOutputs, kTensor + kGuards);
        QCOMPARE(verify.peak.worker, 3 * kTensor);
        QCOMPARE(verify.peak.total(), 3 * (kTensor + kGuards) + 3 * kTensor);

        const MemoryPlan timed = planJobMemory(softmax(true), context);
        QCOMPARE(timed.peak.phase, std::string("time"));
        QCOMPARE(timed.peak.referenceOutputs, kTensor + kGuards);
        QCOMPARE(timed.peak.flush, std::size_t { 0 });
        QCOMPARE(timed.peak.worker, 3 * kTensor + (120ull << 20));
        QCOMPARE(timed.peak.total(), 3 * (kTensor + kGuards) + 2 * kTensor + 3 * kTensor + (120ull << 20));

        // On the runner's buffers the contenders need no copy of the inputs.
        context.referenceOnGpu = true;
        QCOMPARE(planJobMemory(softmax(true), context).peak.worker, 2 * kTensor + (120ull << 20));
    }

    // Reference cache in device memory: its copy of the reference's outputs counts when it would be kept.
    void referenceCacheCountsWhenItWouldKeep()
    {
        protocol::EvaluateRequest request = softmax(false);
        request.options.time = false;
        MemoryPlanContext context;
        context.referenceCacheCapacity = 8 * kTensor;
        QCOMPARE(planJobMemory(request, context).peak.referenceCache, kTensor + kGuards);
        context.referenceCacheOnDevice = false;
        QCOMPARE(planJobMemory(request, context).peak.referenceCache, std::size_t { 0 });
        context.referenceCacheOnDevice = true;
        context.referenceCacheCapacity = kTensor; // smaller than the entry with its guards
        QCOMPARE(planJobMemory(request, context).peak.referenceCache, std::size_t { 0 });
    }

    // Padded rows count their gaps; scratch of the candidate, the baseline and (verify) the reference.
    // A second timed case is timed while the first (profiled) case's memory is kept.
    void paddingScratchAndTheKeptCase()
    {
        protocol::EvaluateRequest request;
        protocol::Case small;
        small.label = "small";
        small.timed = true;
        small.buffers = { buffer("a", PlannedBuffer::Role::Input, DType::F16, 10, 100, 128),
            buffer("b", PlannedBuffer::Role::Output, DType::F16, 10, 100, 128) };
        small.programs.candidate.scratch = { { "s", DType::F32, 1000, false } };
        small.programs.reference.scratch = { { "r", DType::F64, 10, false } };
        small.programs.baseline = protocol::Program {};
        small.programs.baseline->scratch = { { "t", DType::I8, 7, false } };
        protocol::Case large = small;
        large.label = "large";
        large.buffers = { buffer("a", PlannedBuffer::Role::Input, DType::F16, 1000, 100, 128),
            buffer("b", PlannedBuffer::Role::Output, DType::F16, 1000, 100, 128) };
        large.bytes = 1000.0;
        request.cases = { small, large };
        MemoryPlanContext context;
        const MemoryPlan plan = planJobMemory(request, context);
        // verify of large: 3 x (1000*128*2 + guards) + 4000 + 80 + 7
        const std::size_t tensor = 1000 * 128 * 2 + kGuards;
        const std::size_t verifyLarge = 3 * tensor + 4000 + 80 + 7;
        const std::size_t smallTimed = 2 * (10 * 128 * 2 + kGuards) + 4000 + 7;
        const std::size_t timeLarge = 2 * tensor + 4000 + 7 + smallTimed + 1000;
        QCOMPARE(plan.peak.total(), std::max(verifyLarge, timeLarge));
        QCOMPARE(plan.peak.phase, std::string(timeLarge > verifyLarge ? "time" : "verify"));
        QCOMPARE(plan.peak.caseLabel, std::string("large"));
    }

    void shortfallNamesTheSizes()
    {
        MemoryPlanContext context;
        context.flushBytes = 120'000'000;
        const MemoryPlan plan = planJobMemory(softmax(false), context);
        QVERIFY(!memoryShortfall(plan, plan.needed(), 150'000'000'000ull));
        const auto detail = memoryShortfall(plan, 20'000'000'000ull, 150'000'000'000ull);
        QVERIFY(detail.has_value());
        QCOMPARE(*detail,
            std::string("the job needs 26.2 GB at its peak (time of main: inputs 6.44 GB, outputs 6.44 GB, L2 flush "
                        "120 MB, same-size copy 12.9 GB, headroom 268 MB) but the GPU has 20.0 GB free of 150 GB; "
                        "nothing was launched"));
    }

    void bytesFormat()
    {
        QCOMPARE(formatBytes(0), std::string("0 B"));
        QCOMPARE(formatBytes(999), std::string("999 B"));
        QCOMPARE(formatBytes(12'345), std::string("12.3 kB"));
        QCOMPARE(formatBytes(6'442'450'944ull), std::string("6.44 GB"));
        QCOMPARE(formatBytes(140'000'000'000ull), std::string("140 GB"));
    }
};

QTEST_APPLESS_MAIN(TestMemoryPlan)
#include "test_memory_plan.moc"
