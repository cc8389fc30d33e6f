// The evaluate request built from the bundled examples: which cases, their strides, launches and
// arguments, kernel names mapped to the cubins' symbols, and the errors a bad candidate gets.
// With the compile part present, the same through real NVRTC.
#include "core/model/error.h"
#include "core/runnerclient/evaluate_job.h"

#include <QtTest>

using namespace kl;
using namespace kl::protocol;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

Problem example(const char* name)
{
    return loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/" + name + "/problem.json");
}

// What the compiler would give: a module and a lowered symbol for every kernel the launches name.
CompiledCandidate compiledByHand(const Candidate& candidate, TunableValues tunables, const std::string& tag)
{
    CompiledCandidate c { TunedCandidate { candidate, std::move(tunables) }, {} };
    c.compiled.ok = true;
    c.compiled.cubin = "cubin of " + tag;
    for (const auto& l : candidate.launches) {
        KernelResources k;
        k.name = l.kernel;
        k.loweredName = "_Z" + std::to_string(l.kernel.size()) + l.kernel + "v";
        c.compiled.kernels.push_back(k);
    }
    return c;
}

EvaluateJob jobByHand(const Problem& p, const TunableValues& candidateTunables, bool withBaseline = true)
{
    EvaluateJob job;
    job.reference = compiledByHand(p.reference, p.reference.defaults(), "reference");
    job.candidate = compiledByHand(p.baseline, p.baseline.withOverrides(candidateTunables), "candidate");
    if (withBaseline)
        job.baseline = compiledByHand(p.baseline, p.baseline.defaults(), "baseline");
    return job;
}

double scalar(const Arg& arg)
{
    const auto& s = std::get<ScalarArg>(arg);
    if (const auto* i = std::get_if<std::int64_t>(&s.value))
        return static_cast<double>(*i);
    return std::get<double>(s.value);
}

const Buffer& bufferOf(const Case& c, const std::string& name)
{
    for (const auto& b : c.buffers)
        if (b.name == name)
            return b;
    throw std::runtime_error("no buffer " + name);
}

template <class F> Error errorOf(F&& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    return Error("none", "", "", "no error was thrown");
}

} // namespace

class TestEvaluateRequest : public QObject {
    Q_OBJECT
private slots:
    void layernormCases()
    {
        const auto p = example("layernorm_gelu");
        const auto request = buildEvaluateRequest(
            p, jobByHand(p, { { "THREADS", 256 }, { "VEC", 8 }, { "CACHE", 4 } }), EvaluateOptions {}, "17");
        QCOMPARE(request.id, std::string("17"));
        // 1 main + 7 fuzz, then (x and y declare row padding) the first main and every fuzz size padded.
        QCOMPARE(request.cases.size(), std::size_t(1 + 7 + 1 + 7));
        QVERIFY(request.cases[0].kind == CaseKind::Main && request.cases[0].timed);
        for (std::size_t i = 1; i < 8; ++i)
            QVERIFY(request.cases[i].kind == CaseKind::Fuzz && !request.cases[i].timed);
        for (std::size_t i = 8; i < 16; ++i)
            QVERIFY(request.cases[i].kind == CaseKind::Padded && !request.cases[i].timed);
        QCOMPARE(request.cases[8].label, std::string("8192x4096"));
        QCOMPARE(request.cases[10].label, std::string("7x1000"));

        const auto& main = request.cases[0];
        QCOMPARE(main.bytes, 2.0 * 8192 * 4096 * 2 + 2.0 * 4096 * 2);
        QCOMPARE(main.flops, 8192.0 * 4096 * 20);
        QCOMPARE(main.buffers.size(), std::size_t(4)); // x, gamma, beta, y
        QCOMPARE(bufferOf(main, "x").rowStride, std::int64_t(4096));
        QCOMPARE(bufferOf(main, "x").rows, std::int64_t(8192));
        QVERIFY(bufferOf(main, "x").distribution->kind == Distribution::Kind::Normal);
        QCOMPARE(bufferOf(main, "x").distribution->b, 2.0);
        QVERIFY(bufferOf(main, "y").role == PlannedBuffer::Role::Output);
        QVERIFY(!bufferOf(main, "y").distribution);

        // Padded: row stride = length + 8 for x and y; gamma (1-D, no padding) unchanged.
        const auto& padded = request.cases[10];
        QCOMPARE(bufferOf(padded, "x").rowLength, std::int64_t(1000));
        QCOMPARE(bufferOf(padded, "x").rowStride, std::int64_t(1008));
        QCOMPARE(bufferOf(padded, "y").rowStride, std::int64_t(1008));
        QCOMPARE(bufferOf(padded, "gamma").rowStride, std::int64_t(1000));
        QCOMPARE(bufferOf(request.cases[2], "x").rowStride, std::int64_t(1000)); // the same size unpadded

        // Reference: cdiv(M, 128) blocks of 128, args x, gamma, beta, y, M, N, stride_x, stride_y, eps.
        const auto& ref = padded.programs.reference.launches.at(0);
        QCOMPARE(ref.kernel, std::string("_Z24layernorm_gelu_referencev"));
        QCOMPARE(ref.grid, (std::array<std::int64_t, 3> { 1, 1, 1 }));
        QCOMPARE(ref.block[0], std::int64_t(128));
        QCOMPARE(ref.args.size(), std::size_t(9));
        QVERIFY(std::get<BufferArg>(ref.args[0]).name == "x");
        QVERIFY(std::get<BufferArg>(ref.args[3]).name == "y");
        QCOMPARE(scalar(ref.args[4]), 7.0);
        QCOMPARE(scalar(ref.args[5]), 1000.0);
        QCOMPARE(scalar(ref.args[6]), 1008.0); // stride_x
        QVERIFY(std::get<ScalarArg>(ref.args[8]).type == DType::F32);
        QCOMPARE(scalar(ref.args[8]), 1e-5);

        // Candidate with its tunables: one block per row of 256 threads.
        const auto& cand = main.programs.candidate.launches.at(0);
        QCOMPARE(cand.kernel, std::string("_Z14layernorm_geluv"));
        QCOMPARE(cand.grid[0], std::int64_t(8192));
        QCOMPARE(cand.block[0], std::int64_t(256));
        // The baseline (default THREADS=128) only where timing happens.
        QVERIFY(main.programs.baseline.has_value());
        QCOMPARE(main.programs.baseline->launches.at(0).block[0], std::int64_t(128));
        for (std::size_t i = 1; i < request.cases.size(); ++i)
            QVERIFY(!request.cases[i].programs.baseline);

        QCOMPARE(request.modules.candidate.cubin, std::string("cubin of candidate"));
        QCOMPARE(request.modules.baseline->cubin, std::string("cubin of baseline"));
        QCOMPARE(request.tolerances.size(), std::size_t(1));
        QCOMPARE(request.tolerances.at(DType::F16).atol, 1e-2);

        // What the runner receives is valid protocol (buffer names, ranges, modules).
        const auto back = std::get<EvaluateRequest>(parseRequest(toLine(request)));
        QCOMPARE(back.cases.size(), request.cases.size());
        QCOMPARE(nlohmann::json(back).dump(), nlohmann::json(request).dump());
    }

    void softmaxCasesWithScratchAndTwoLaunches()
    {
        const auto p = example("softmax_bf16");
        EvaluateOptions options;
        options.time = false;
        const auto request = buildEvaluateRequest(p, jobByHand(p, { { "THREADS", 512 } }, false), options, "18");
        QCOMPARE(request.cases.size(), std::size_t(2 + 5)); // no row padding: no padded cases
        QCOMPARE(request.cases[0].label, std::string("16384x2048"));
        QCOMPARE(request.cases[1].label, std::string("2048x16384"));
        QVERIFY(request.cases[1].timed);
        QVERIFY(!request.modules.baseline);
        QVERIFY(!request.options.time);

        const auto& c = request.cases[1]; // ROWS=2048, COLS=16384
        const auto& prog = c.programs.candidate;
        QCOMPARE(prog.scratch.size(), std::size_t(1));
        QCOMPARE(prog.scratch[0].name, std::string("stats"));
        QCOMPARE(prog.scratch[0].elements, std::int64_t(2 * 2048));
        QVERIFY(!prog.scratch[0].zeroed);
        QVERIFY(c.programs.reference.scratch.empty());
        QCOMPARE(prog.launches.size(), std::size_t(2));
        QCOMPARE(prog.launches[0].kernel, std::string("_Z9row_statsv"));
        QCOMPARE(prog.launches[1].kernel, std::string("_Z9normalisev"));
        QCOMPARE(prog.launches[1].grid, (std::array<std::int64_t, 3> { 16384 / 512, 2048, 1 }));
        QVERIFY(std::get<BufferArg>(prog.launches[0].args[1]).name == "stats");
        // Scratch is not a tensor of the case.
        QCOMPARE(c.buffers.size(), std::size_t(2));
        QCOMPARE(c.bytes, 2.0 * 2048 * 16384 * 2);
        QCOMPARE(request.tolerances.at(DType::BF16).rtol, 2e-2);
        parseRequest(toLine(request)); // valid protocol
    }

    void constraintBrokenAtAFuzzSize()
    {
        const auto p = example("layernorm_gelu");
        auto job = jobByHand(p, {});
        const auto candidate
            = parseCandidate("// vectorised, rows must be a multiple of 8\n"
                             "// @kl constraint N % 8 == 0\n"
                             "// @kl launch layernorm_gelu grid=(M) block=(128) args=(x, gamma, beta, y, M, N, eps)\n"
                             "extern \"C\" __global__ void layernorm_gelu() {}\n",
                "vec8.cu");
        job.candidate = compiledByHand(candidate, {}, "candidate");
        const auto e = errorOf([&] { buildEvaluateRequest(p, job, {}); });
        QCOMPARE(q(e.category()), u"plan.constraint"_qs);
        QCOMPARE(q(e.file()), u"vec8.cu"_qs);
        QCOMPARE(q(e.where()), u"line 2"_qs);
        QVERIFY2(q(e.message()).contains(u"13x4097"_qs), e.what()); // the first fuzz size with N % 8 != 0
        QVERIFY2(q(e.message()).contains(u"candidate, fuzz size 13x4097"_qs), e.what());
    }

    void argumentOutsideItsType()
    {
        const auto p = example("layernorm_gelu");
        auto job = jobByHand(p, {});
        const auto candidate
            = parseCandidate("// @kl launch layernorm_gelu grid=(M) block=(128) args=(x, y, M * N * 1000)\n"
                             "extern \"C\" __global__ void layernorm_gelu() {}\n",
                "big.cu");
        job.candidate = compiledByHand(candidate, {}, "candidate");
        const auto e = errorOf([&] { buildEvaluateRequest(p, job, {}); });
        QCOMPARE(q(e.category()), u"protocol.bad-arg"_qs);
        QCOMPARE(q(e.where()), u"line 1"_qs);
        QVERIFY2(q(e.message()).contains(u"does not fit i32"_qs), e.what());
    }

    void missingKernelAndFailedCompile()
    {
        const auto p = example("softmax_bf16");
        auto job = jobByHand(p, {});
        job.candidate.compiled.kernels.pop_back(); // "normalise" not in the module
        auto e = errorOf([&] { buildEvaluateRequest(p, job, {}); });
        QCOMPARE(q(e.category()), u"request.missing-kernel"_qs);
        QVERIFY2(q(e.message()).contains(u"normalise"_qs), e.what());
        QCOMPARE(e.where(), "line " + std::to_string(p.baseline.launches.at(1).line));

        job = jobByHand(p, {});
        job.baseline->compiled.ok = false;
        job.baseline->compiled.summary = "baseline.cu:12: expected a \";\"";
        QVERIFY(job.firstCompileFailure() == &*job.baseline);
        e = errorOf([&] { buildEvaluateRequest(p, job, {}); });
        QCOMPARE(q(e.category()), u"request.not-compiled"_qs);
        QVERIFY2(q(e.message()).contains(u"expected a"_qs), e.what());
    }

    void throughNvrtc_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("cases");
        QTest::newRow("layernorm_gelu") << u"layernorm_gelu"_qs << 16;
        QTest::newRow("softmax_bf16") << u"softmax_bf16"_qs << 7;
    }
    void throughNvrtc()
    {
#ifndef KL_HAVE_COMPILE
        QSKIP("the compile part is not in this build yet");
#else
        QFETCH(QString, name);
        QFETCH(int, cases);
        const auto p = example(name.toStdString().c_str());
        const auto tunables = p.baseline.defaults();
        const auto job = compileEvaluateJob(
            p, TunedCandidate { p.baseline, tunables }, TunedCandidate { p.baseline, p.baseline.defaults() });
        if (const auto* failed = job.firstCompileFailure())
            QFAIL(("compile failed: " + failed->compiled.summary + "\n" + failed->compiled.log).c_str());
        const auto request = buildEvaluateRequest(p, job, {}, "19");
        QCOMPARE(int(request.cases.size()), cases);
        QVERIFY(request.modules.candidate.cubin.size() > 1000);
        QCOMPARE(request.modules.candidate.cubin.substr(0, 4),
            std::string("\x7f"
                        "ELF"));
        // Every kernel name sent is a symbol of the cubin it will be looked up in.
        for (const auto& c : request.cases)
            for (const auto& [program, module] : { std::pair { &c.programs.reference, &request.modules.reference },
                     std::pair { &c.programs.candidate, &request.modules.candidate } })
                for (const auto& l : program->launches)
                    QVERIFY2(module->cubin.find(l.kernel + '\0') != std::string::npos, l.kernel.c_str());
        parseRequest(toLine(request));
#endif
    }
};

QTEST_GUILESS_MAIN(TestEvaluateRequest)
#include "test_evaluate_request.moc"
