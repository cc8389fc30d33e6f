// Triton candidates: "# @kl" directives, the Triton launch line, the PyTorch reference in a problem,
// the helper's request and its replies (recorded on the H200 with Triton 3.6) read into compile
// results with categorised errors at the candidate's line.
#include "core/compile/python_tool.h"
#include "core/compile/triton_compiler.h"
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/model/launch_plan.h"
#include "core/model/problem.h"
#include "core/runnerclient/evaluate_job.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace fs = std::filesystem;
using namespace kl;

namespace {

const fs::path kRoot = KL_SOURCE_DIR;
const fs::path kExample = kRoot / "resources/examples/layernorm_gelu_triton";
const fs::path kFixtures = kRoot / "tests/fixtures/triton";

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void expectError(const std::function<void()>& f, const std::string& category, const std::string& where)
{
    try {
        f();
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QString::fromStdString(category));
        QVERIFY2(std::string(e.what()).find(where) != std::string::npos, e.what());
        return;
    }
    QFAIL("no kl::Error was thrown");
}

const std::string kKernel = "import triton\n@triton.jit\ndef k(x, y, n, B: tl.constexpr):\n    pass\n";

} // namespace

class TestTritonFormat : public QObject {
    Q_OBJECT
private slots:
    void directivesAfterHash()
    {
        const Candidate c = parseCandidate(kKernel
                + "# @kl tunable B = 256 in 128..1024 pow2\n"
                  "# @kl tunable W = 4 in 1, 2, 4, 8\n"
                  "#@kl launch k grid=(cdiv(M, 2)) num_warps=(W) num_stages=(2) "
                  "args=(x, y, N as i64, B=B * 2, SCALE=0.5)\n",
            "cand.py");
        QCOMPARE(c.language, CandidateLanguage::Triton);
        QCOMPARE(c.tunables.size(), std::size_t(2));
        QCOMPARE(c.tunables[0].values, (std::vector<std::int64_t> { 128, 256, 512, 1024 }));
        const LaunchRule& l = c.launches.at(0);
        QCOMPARE(l.numWarps, std::string("W"));
        QCOMPARE(l.numStages, std::string("2"));
        QCOMPARE(l.args.size(), std::size_t(3)); // the positional ones
        QCOMPARE(l.args[2].type, DType::I64);
        QCOMPARE(l.constexprs.size(), std::size_t(2));
        QCOMPARE(l.constexprs[0].name, std::string("B"));
        QCOMPARE(l.constexprs[0].expression, std::string("B * 2"));
        // "//" is Python's floor division, never a directive in a .py file; "#" is never one in CUDA.
        const Candidate floorDiv = parseCandidate(
            kKernel + "x = 7 // 2  # not a directive\n# @kl launch k grid=(1) args=(x, y, N, B=64)\n", "c.py");
        QCOMPARE(floorDiv.launches.size(), std::size_t(1));
        expectError([] { parseCandidate("# @kl launch k grid=(1) block=(32) args=(y)\n", "k.cu"); },
            "candidate.no-launch", "// @kl launch");
    }

    void launchLineErrors()
    {
        const auto bad = [](const std::string& line, const std::string& category, const std::string& where) {
            expectError([&] { parseCandidate(kKernel + line, "c.py"); }, category, where);
        };
        bad("# @kl launch k grid=(M) block=(128) args=(x)\n", "candidate.bad-launch", "num_warps * 32");
        bad("# @kl launch k grid=(M) smem=(0) args=(x)\n", "candidate.bad-launch", "line 5");
        bad("# @kl launch k args=(x)\n", "candidate.bad-launch", "needs grid=(..) and args=(..)");
        bad("# @kl launch k grid=(M) args=(B=1, x)\n", "candidate.bad-launch", "positional arguments come first");
        bad("# @kl launch k grid=(M) args=(x, B=1, B=2)\n", "candidate.bad-launch", "given twice");
        bad("# @kl launch k grid=(M) warps=(4) args=(x)\n", "candidate.bad-launch", "num_warps, num_stages");
        bad("# @kl launch k grid=(M) args=(x)\n# @kl launch k grid=(M) args=(x)\n", "candidate.bad-launch",
            "one kernel");
        bad("# @kl tunable B = 3 in 1, 2\n# @kl launch k grid=(M) args=(x)\n", "candidate.bad-tunable", "line 5");
    }

    void problemWithPyTorchReference()
    {
        const Problem p = loadProblem(kExample / "problem.json");
        QVERIFY(p.pythonReference);
        QVERIFY(p.pythonReference->source.find("def reference(") != std::string::npos);
        QVERIFY(p.reference.launches.empty());
        QCOMPARE(p.language(), CandidateLanguage::Triton);
        // The block is num_warps * 32; the launch plan passes the declared arguments only.
        const LaunchPlan plan
            = planLaunches(p, p.baseline, p.mainSizes.front(), p.baseline.withOverrides({ { "W", 8 } }));
        QCOMPARE(plan.launches[0].block, (std::array<std::int64_t, 3> { 256, 1, 1 }));
        QCOMPARE(plan.launches[0].grid[0], std::int64_t(8192));
        QCOMPARE(plan.launches[0].args.size(), std::size_t(8));
        // Specialised as Triton's JIT would be at the main size 8192x4096: pointers aligned, N and
        // the row strides (4096) multiples of 16; eps is no integer.
        QCOMPARE(tritonSignature(p, p.baseline),
            (std::vector<std::string> {
                "*fp16:16", "*fp16:16", "*fp16:16", "*fp16:16", "i32:16", "i32:16", "i32:16", "fp32" }));

        // A reference file without reference(...) is refused with its own category.
        const fs::path dir = fs::temp_directory_path() / ("kl-triton-problem-" + std::to_string(::getpid()));
        fs::create_directories(dir);
        for (const char* f : { "problem.json", "baseline.py" })
            fs::copy_file(kExample / f, dir / f, fs::copy_options::overwrite_existing);
        std::ofstream(dir / "reference.py") << "import torch\ndef ref(x):\n    return x\n";
        expectError([&] { loadProblem(dir / "problem.json"); }, "problem.bad-reference", "reference(**tensors");
        fs::remove_all(dir);
    }

    // An integer is marked only where it is a multiple of 16 at EVERY main size: one main size
    // with N = 4100 unmarks N and the strides (the kernel then has no guarded copy for them).
    void specialisesOnlyWhatHoldsAtEveryMainSize()
    {
        Problem p = loadProblem(kExample / "problem.json");
        SizeSet odd = p.mainSizes.front();
        odd.label = "64x4100";
        odd.values["M"] = 64;
        odd.values["N"] = 4100;
        p.mainSizes.push_back(odd);
        QCOMPARE(tritonSignature(p, p.baseline),
            (std::vector<std::string> { "*fp16:16", "*fp16:16", "*fp16:16", "*fp16:16", "i32", "i32", "i32", "fp32" }));
        // An expression argument follows the tunables it is given: BLOCK_N itself, passed as a value.
        Candidate c = p.baseline;
        p.mainSizes.pop_back();
        c.launches[0].args[4].expression = "BLOCK_N / 32";
        const TunableValues at256 = { { "BLOCK_N", 256 } }, at512 = { { "BLOCK_N", 512 } };
        QCOMPARE(tritonSignature(p, c, &at256).at(4), std::string("i32")); // 8
        QCOMPARE(tritonSignature(p, c, &at512).at(4), std::string("i32:16")); // 16
    }

    // The helper's guard in the kernel (python/kernelloop/triton_aot.py wrapper_source), read by a
    // real Python: the marked copy for multiples of 16, the candidate as written otherwise.
    void helperWrapsTheKernelInAGuard()
    {
        if (!fs::exists("/usr/bin/python3"))
            QSKIP("no /usr/bin/python3");
        const fs::path helper = fs::path(KL_SOURCE_DIR) / "python" / "kernelloop";
        const fs::path out = fs::temp_directory_path() / ("kl-triton-wrapper-" + std::to_string(::getpid()) + ".py");
        const std::string command = "/usr/bin/python3 -c \"import sys; sys.path.insert(0, '" + helper.string()
            + "'); import triton_aot as t; src = t.wrapper_source('ln_gelu', ['x_ptr', 'N', 'stride_x', 'eps', "
              "'BLOCK_N'], {'BLOCK_N'}, ['N', 'stride_x']); compile(src, 'w', 'exec'); print(src)\" > "
            + out.string();
        QCOMPARE(std::system(command.c_str()), 0);
        const std::string source = readFile(out);
        fs::remove(out);
        QVERIFY2(source.find("def ln_gelu(x_ptr, N, stride_x, eps, BLOCK_N: tl.constexpr):") != std::string::npos,
            source.c_str());
        QVERIFY2(source.find("if ((N % 16) == 0) & ((stride_x % 16) == 0):") != std::string::npos, source.c_str());
        QVERIFY(source.find("N=(N // 16) * 16, stride_x=(stride_x // 16) * 16, eps=eps, BLOCK_N=BLOCK_N")
            != std::string::npos);
        QVERIFY(source.find("else:\n        _kl_candidate_kernel(x_ptr=x_ptr, N=N, stride_x=stride_x, eps=eps")
            != std::string::npos);
    }

    // The reply says what the kernel was specialised on: the options and summary carry it.
    void specialisationInTheReply()
    {
        const fs::path dir = kFixtures / "ok";
        if (!fs::exists(dir / "reply.json"))
            QSKIP("no recorded reply (scripts/gpu-triton.sh records them on a GPU machine)");
        const Problem p = loadProblem(kExample / "problem.json");
        nlohmann::json reply = nlohmann::json::parse(readFile(dir / "reply.json"));
        reply["specialisation"]
            = { { "divisible", { "N", "stride_x" } }, { "guard", "in-kernel" }, { "dropped", nullptr } };
        CompileResult r = readTritonReply(reply.dump(), readFile(dir / "kernel.cubin"), p.baseline, {});
        QVERIFY2(r.ok, r.summary.c_str());
        QCOMPARE(tritonDivisibleArguments(r), (std::vector<std::string> { "N", "stride_x" }));
        QVERIFY2(r.summary.find("specialised on N,stride_x") != std::string::npos, r.summary.c_str());
        reply["specialisation"] = { { "divisible", nlohmann::json::array() }, { "dropped", "CompilationError: boom" } };
        r = readTritonReply(reply.dump(), readFile(dir / "kernel.cubin"), p.baseline, {});
        QVERIFY(tritonDivisibleArguments(r).empty());
        QVERIFY2(
            r.summary.find("not specialised (the guarded compile failed: CompilationError: boom)") != std::string::npos,
            r.summary.c_str());
    }

    // Recorded on the H200: the same kernel compiled with and without the specialisation. Only the
    // specialised one has 16-byte global loads in its PTX, and its reply names what it assumed.
    void recordedSpecialisationVectorises()
    {
        if (!fs::exists(kFixtures / "ok_specialised" / "reply.json")
            || !fs::exists(kFixtures / "ok_plain" / "reply.json"))
            QSKIP("no recorded replies (scripts/gpu-triton.sh fixtures)");
        const Problem p = loadProblem(kExample / "problem.json");
        const auto read = [&](const char* variant) {
            return readTritonReply(readFile(kFixtures / variant / "reply.json"),
                readFile(kFixtures / variant / "kernel.cubin"), p.baseline, {});
        };
        const CompileResult specialised = read("ok_specialised"), plain = read("ok_plain");
        QVERIFY2(specialised.ok && plain.ok, specialised.summary.c_str());
        QCOMPARE(tritonDivisibleArguments(specialised), (std::vector<std::string> { "N", "stride_x", "stride_y" }));
        QVERIFY(tritonDivisibleArguments(plain).empty());
        QVERIFY(specialised.ptx.find("ld.global.v4.b32") != std::string::npos);
        QVERIFY(plain.ptx.find("ld.global.v4.b32") == std::string::npos);
        QCOMPARE(specialised.kernels.at(0).loweredName, std::string("ln_gelu")); // the wrapper keeps the name
    }

    void numWarpsMustBeAPowerOfTwo()
    {
        const Problem p = loadProblem(kExample / "problem.json");
        Candidate c
            = parseCandidate(readFile(kExample / "baseline.py").replace(0, 0, "# @kl tunable Z = 3 in 3\n"), "odd.py");
        c.launches[0].numWarps = "Z";
        expectError([&] { planLaunches(p, c, p.mainSizes.front(), c.defaults()); }, "plan.bad-launch", "num_warps = 3");
    }

    void helperRequest()
    {
        const Problem p = loadProblem(kExample / "problem.json");
        CompileOptions options;
        options.tunables = { { "BLOCK_N", 2048 }, { "W", 8 }, { "S", 2 } };
        options.tritonSignature = tritonSignature(p, p.baseline);
        const auto request = nlohmann::json::parse(tritonCompileRequest(p.baseline, options));
        QCOMPARE(request.at("kernel").get<std::string>(), std::string("ln_gelu"));
        QCOMPARE(request.at("constexprs").at("BLOCK_N").get<int>(), 2048);
        QCOMPARE(request.at("num_warps").get<int>(), 8);
        QCOMPARE(request.at("num_stages").get<int>(), 2);
        QCOMPARE(request.at("capability").get<int>(), 90);
        QCOMPARE(request.at("signature").size(), std::size_t(8));
        QCOMPARE(request.at("line").get<int>(), p.baseline.launches[0].line);
    }

    void errorCategories_data()
    {
        QTest::addColumn<QString>("exception");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("kind");
        QTest::newRow("syntax") << "SyntaxError"
                                << "invalid syntax. Perhaps you forgot a comma?"
                                << "syntax";
        QTest::newRow("name") << "NameError"
                              << "name 'epsilon' is not defined"
                              << "undeclared-identifier";
        QTest::newRow("wrapped name") << "CompilationError"
                                      << "at 21:27:\n    rstd = epsilon\nNameError('epsilon is not defined')"
                                      << "undeclared-identifier";
        QTest::newRow("type") << "TypeError"
                              << "unsupported operand type(s) for +: 'pointer<fp16>' and 'fp32'"
                              << "type-mismatch";
        QTest::newRow("incompatible") << "CompilationError"
                                      << "incompatible types: pointer<fp16> and fp32"
                                      << "type-mismatch";
        QTest::newRow("resources") << "OutOfResources"
                                   << "out of resource: shared memory, Required: 300000"
                                   << "too-many-resources";
        QTest::newRow("unsupported") << "CompilationError"
                                     << "tl.dot is not supported for fp64 here"
                                     << "unsupported-arch";
        QTest::newRow("missing") << "MissingKernel"
                                 << "the file defines no @triton.jit function"
                                 << "missing-kernel";
        QTest::newRow("no triton") << "NeedsTriton"
                                   << "needs Triton"
                                   << "needs-triton";
        QTest::newRow("power of two") << "CompilationError"
                                      << "at 2:11:\n    cols = tl.arange(0, BLOCK_N)\n           ^\n"
                                         "arange's range must be a power of 2"
                                      << "type-mismatch";
        QTest::newRow("other") << "RuntimeError"
                               << "something"
                               << "other";
        QTest::newRow("triton's type error") << "IncompatibleTypeErrorImpl"
                                             << "invalid operands of type pointer<fp16> and triton.language.float32"
                                             << "type-mismatch";
    }
    void errorCategories()
    {
        QFETCH(QString, exception);
        QFETCH(QString, message);
        QFETCH(QString, kind);
        QCOMPARE(QString::fromLatin1(
                     compileErrorKindName(classifyTritonError(exception.toStdString(), message.toStdString()))),
            kind);
    }

    // Replies the helper gave on the H200 (Triton 3.6.0, scripts/gpu-triton.sh), read back.
    void recordedReplies_data()
    {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("line");
        QTest::newRow("syntax") << "syntax"
                                << "syntax" << 24;
        QTest::newRow("undefined") << "undefined"
                                   << "undeclared-identifier" << 29;
        QTest::newRow("type") << "type"
                              << "type-mismatch" << 39;
        QTest::newRow("missing kernel") << "missing"
                                        << "missing-kernel" << 12; // the launch line
        QTest::newRow("unknown constexpr") << "args"
                                           << "type-mismatch" << 12;
        // Triton's "Shape element 0 must be a power of 2" is only in the recorded traceback (the
        // message quotes the source and stops): a type error of line 20, tl.zeros([BLOCK_N]).
        QTest::newRow("arange not a power of two") << "not_pow2"
                                                   << "type-mismatch" << 20;
        // Recorded 2026-12-03 07:01Z: a lambda in the kernel (Triton's "unsupported AST node type"), and a
        // 256x256 fp16 tile product whose 256 KiB of shared memory the helper refuses as the JIT would.
        QTest::newRow("unsupported construct") << "unsupported"
                                               << "unsupported-arch" << 29;
        QTest::newRow("shared memory over the limit") << "resources"
                                                      << "too-many-resources" << 6;
    }
    void recordedReplies()
    {
        QFETCH(QString, variant);
        QFETCH(QString, kind);
        QFETCH(int, line);
        const fs::path dir = kFixtures / variant.toStdString();
        if (!fs::exists(dir / "reply.json"))
            QSKIP("no recorded reply (scripts/gpu-triton.sh records them on a GPU machine)");
        const Candidate c = parseCandidate(readFile(kExample / "baseline.py"), "candidate.py");
        const CompileResult r = readTritonReply(readFile(dir / "reply.json"), {}, c, {});
        QVERIFY(!r.ok);
        QCOMPARE(QString::fromLatin1(compileErrorKindName(r.kind)), kind);
        if (line > 0)
            QCOMPARE(r.diagnostics.at(0).line, line);
        QVERIFY2(r.summary.find(compileErrorKindName(r.kind)) == 0, r.summary.c_str());
        if (variant == QLatin1String("not_pow2"))
            QVERIFY2(r.summary.find("must be a power of 2 (line 20: total = tl.zeros([BLOCK_N], dtype=tl.float32))")
                    != std::string::npos,
                r.summary.c_str());
    }

    void recordedSuccess()
    {
        const fs::path dir = kFixtures / "ok";
        if (!fs::exists(dir / "reply.json"))
            QSKIP("no recorded reply (scripts/gpu-triton.sh records them on a GPU machine)");
        const Problem p = loadProblem(kExample / "problem.json");
        const CompileResult r
            = readTritonReply(readFile(dir / "reply.json"), readFile(dir / "kernel.cubin"), p.baseline, {});
        QVERIFY2(r.ok, r.summary.c_str());
        QVERIFY(r.cubin.size() > 1000);
        QCOMPARE(r.cubin.substr(1, 3), std::string("ELF"));
        const KernelResources& k = r.kernels.at(0);
        QCOMPARE(k.name, std::string("ln_gelu"));
        QCOMPARE(k.loweredName, std::string("ln_gelu"));
        QVERIFY(k.registers > 0); // from ptxas -v on Triton's PTX
        QVERIFY(k.parametersKnown);
        QCOMPARE(k.parameters.size(), std::size_t(8) + k.implicitParameters.size());
        QCOMPARE(k.implicitParameters.size(), std::size_t(2)); // Triton 3.6: global and profile scratch
        QCOMPARE(k.implicitParameters[0].name, std::string("global_scratch"));

        // The request the runner gets: the PyTorch reference instead of a reference program, the
        // shapes, and Triton's trailing pointers passed as null (an 8-byte zero).
        EvaluateJob job;
        job.reference.compiled.ok = true;
        job.candidate = CompiledCandidate { TunedCandidate { p.baseline, p.baseline.defaults() }, r };
        const protocol::EvaluateRequest request = buildEvaluateRequest(p, job, {}, "job-1");
        QVERIFY(request.pythonReference);
        QCOMPARE(request.pythonReference->scalars.at("eps"), 1e-5);
        const protocol::Case& first = request.cases.front();
        QVERIFY(first.programs.reference.launches.empty());
        QCOMPARE(first.shapes.at("x"), (std::vector<std::int64_t> { 8192, 4096 }));
        const protocol::Launch& launch = first.programs.candidate.launches.at(0);
        QCOMPARE(launch.args.size(), std::size_t(10));
        QCOMPARE(launch.block[0], std::int64_t(32) * p.baseline.defaults().at("W"));
        QCOMPARE(launch.sharedBytes, k.launchSharedBytes);
        QVERIFY(std::holds_alternative<protocol::ScalarArg>(launch.args[8]));
        // And it survives the wire: no reference module, no reference program.
        const auto line = protocol::toLine(request);
        QVERIFY(line.find("\"python_reference\"") != std::string::npos);
        const auto back = std::get<protocol::EvaluateRequest>(protocol::parseRequest(line));
        QVERIFY(back.pythonReference);
        QCOMPARE(back.cases.front().shapes.at("gamma"), (std::vector<std::int64_t> { 4096 }));
    }

    // Without Triton on the machine: a clear needs-triton, from the real helper under a real Python.
    void needsTriton()
    {
        const Problem p = loadProblem(kExample / "problem.json");
        const fs::path python = "/usr/bin/python3";
        if (!fs::exists(python))
            QSKIP("no /usr/bin/python3");
        qputenv("KL_PYTHON", "/usr/bin/python3");
        CompileOptions options;
        options.tritonSignature = tritonSignature(p, p.baseline);
        const CompileResult r = compileCandidate(p.baseline, options);
        qunsetenv("KL_PYTHON");
        if (r.ok)
            QSKIP("this machine has Triton");
        QCOMPARE(QString::fromLatin1(compileErrorKindName(r.kind)), QStringLiteral("needs-triton"));
        QVERIFY2(r.summary.find("needs Triton") != std::string::npos, r.summary.c_str());
        // Where no sandbox can be made, a missing Triton is still said as such, not as a refused sandbox.
        qputenv("KL_PYTHON", "/usr/bin/python3");
        qputenv("KL_BWRAP", "/nonexistent/bwrap");
        const CompileResult unsandboxed = compileCandidate(p.baseline, options);
        qunsetenv("KL_BWRAP");
        qunsetenv("KL_PYTHON");
        QCOMPARE(QString::fromLatin1(compileErrorKindName(unsandboxed.kind)), QStringLiteral("needs-triton"));
        // And a Python that does not exist says so too.
        qputenv("KL_PYTHON", "/nonexistent/python3");
        const CompileResult missing = compileCandidate(p.baseline, options);
        qunsetenv("KL_PYTHON");
        QCOMPARE(missing.kind, CompileErrorKind::NeedsTriton);
        QVERIFY2(missing.summary.find("/nonexistent/python3") != std::string::npos, missing.summary.c_str());
        // A missing helper is a broken installation, not a missing Triton.
        qputenv("KL_TRITON_HELPER", "/nonexistent/triton_aot.py");
        const CompileResult noHelper = compileCandidate(p.baseline, options);
        qunsetenv("KL_TRITON_HELPER");
        QCOMPARE(QString::fromLatin1(compileErrorKindName(noHelper.kind)), QStringLiteral("missing-helper"));
        QVERIFY2(noHelper.summary.find("/nonexistent/triton_aot.py is missing") != std::string::npos,
            noHelper.summary.c_str());
        QVERIFY2(noHelper.summary.find("needs Triton") == std::string::npos, noHelper.summary.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTritonFormat)
#include "test_triton_format.moc"
