// Problem and candidate formats: the bundled examples load, and each kind of malformed input
// gives its own category and names the field or line.
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/launch_plan.h"
#include "core/model/problem.h"
#include "tests/model/expect_error.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

using nlohmann::json;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)

using kl::test::expectError;

namespace {

fs::path example(const char* name) { return fs::path(KL_SOURCE_DIR) / "resources/examples" / name / "problem.json"; }

json readJson(const fs::path& p)
{
    std::ifstream in(p);
    return json::parse(in);
}

void write(const fs::path& p, const std::string& text)
{
    std::ofstream out(p, std::ios::binary);
    out << text;
}

const char* kCandidateHead = "extern \"C\" __global__ void k(float* y, int n) {}\n";

} // namespace

class TestModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void examplesLoad()
    {
        const auto p = kl::loadProblem(example("layernorm_gelu"));
        QCOMPARE(QString::fromStdString(p.name), QStringLiteral("layernorm_gelu"));
        QCOMPARE(p.mainSizes.size(), std::size_t(1));
        QCOMPARE(p.mainSizes[0].values.at("M"), std::int64_t(8192));
        QVERIFY(p.fuzzSizes.size() >= 5);
        QCOMPARE(p.inputs.size(), std::size_t(3));
        QCOMPARE(p.baseline.tunables.size(), std::size_t(4)); // THREADS, VEC, CACHE, TANH
        QCOMPARE(p.tolerance(kl::DType::F16).atol, 1e-2);
        QCOMPARE(p.bytes(p.mainSizes[0]), 2.0 * 8192 * 4096 * 2 + 2.0 * 4096 * 2);
        QCOMPARE(p.contentHash.size(), std::size_t(16));
        QCOMPARE(p.contentHash, kl::loadProblem(example("layernorm_gelu")).contentHash);

        const auto s = kl::loadProblem(example("softmax_bf16"));
        QCOMPARE(s.mainSizes.size(), std::size_t(2));
        QCOMPARE(s.baseline.launches.size(), std::size_t(2));
        QCOMPARE(s.baseline.scratch.size(), std::size_t(1));
        QVERIFY(s.contentHash != p.contentHash);
    }

    void launchPlanResolvesArguments()
    {
        const auto p = kl::loadProblem(example("layernorm_gelu"));
        auto tunables = p.baseline.withOverrides({ { "THREADS", 512 }, { "VEC", 8 } });
        const auto plan = kl::planLaunches(p, p.baseline, p.mainSizes[0], tunables);
        QCOMPARE(plan.launches.size(), std::size_t(1));
        const auto& l = plan.launches[0];
        QCOMPARE(l.grid[0], std::int64_t(8192));
        QCOMPARE(l.block[0], std::int64_t(512));
        QCOMPARE(l.args.size(), std::size_t(9));
        QCOMPARE(l.args[0].kind, kl::PlannedArg::Kind::Buffer);
        QCOMPARE(QString::fromStdString(l.args[3].buffer), QStringLiteral("y"));
        QCOMPARE(l.args[6].value, 4096.0); // stride_x, contiguous
        QCOMPARE(l.args[8].type, kl::DType::F32); // eps is the problem's f32 scalar
        QCOMPARE(l.args[8].value, 1e-5);

        const auto padded = kl::planLaunches(p, p.baseline, p.mainSizes[0], tunables, true);
        QCOMPARE(padded.launches[0].args[6].value, 4104.0);
        QCOMPARE(padded.buffer("x")->elements(), std::int64_t(8192) * 4104);
        QCOMPARE(padded.buffer("gamma")->rowStride, std::int64_t(4096)); // 1-D tensors are never padded
    }

    void launchPlanScratchAndGrid2d()
    {
        const auto s = kl::loadProblem(example("softmax_bf16"));
        const auto plan = kl::planLaunches(s, s.baseline, s.mainSizes[1], s.baseline.defaults());
        const auto* stats = plan.buffer("stats");
        QVERIFY(stats);
        QCOMPARE(stats->role, kl::PlannedBuffer::Role::Scratch);
        QCOMPARE(stats->elements(), std::int64_t(2 * 2048));
        QCOMPARE(plan.launches[1].grid[0], std::int64_t(16384 / 256));
        QCOMPARE(plan.launches[1].grid[1], std::int64_t(2048));
    }

    void tunableOverridesAreChecked()
    {
        const auto p = kl::loadProblem(example("layernorm_gelu"));
        expectError([&] { p.baseline.withOverrides({ { "THREADZ", 64 } }); }, "candidate.unknown-tunable", "THREADZ");
        expectError([&] { p.baseline.withOverrides({ { "THREADS", 100 } }); }, "candidate.value-not-allowed", "100");
        // The same rule, dropping what no longer fits (the editor's panel after an edit) instead of refusing.
        const kl::TunableValues kept = p.baseline.applicable({ { "THREADZ", 64 }, { "THREADS", 100 }, { "VEC", 4 } });
        const kl::TunableValues expected { { "CACHE", 0 }, { "TANH", 0 }, { "THREADS", 128 }, { "VEC", 4 } };
        QCOMPARE(kept, expected);
        QCOMPARE(p.baseline.withOverrides({ { "VEC", 4 } }), expected);
    }

    void planErrors_data()
    {
        QTest::addColumn<std::string>("directives");
        QTest::addColumn<std::string>("category");
        QTest::addColumn<std::string>("where");
        QTest::newRow("constraint") << std::string("// @kl tunable T = 64 in 64, 128\n// @kl constraint T > 100\n"
                                                   "// @kl launch k grid=(1) block=(T) args=(y, M)\n")
                                    << std::string("plan.constraint") << std::string("line 3");
        QTest::newRow("zero grid at a small size")
            << std::string("// @kl launch k grid=(floor(M / 256)) block=(256) args=(y, M)\n")
            << std::string("plan.bad-launch") << std::string("grid dimension 0 = 0");
        QTest::newRow("too many threads") << std::string("// @kl launch k grid=(M) block=(32, 64) args=(y, M)\n")
                                          << std::string("plan.bad-launch") << std::string("2048 threads");
        QTest::newRow("unknown argument") << std::string("// @kl launch k grid=(M) block=(32) args=(y, z)\n")
                                          << std::string("plan.unknown-name") << std::string("\"z\"");
    }

    void planErrors()
    {
        QFETCH(std::string, directives);
        QFETCH(std::string, category);
        QFETCH(std::string, where);
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        write(root / "k.cu", std::string(kCandidateHead) + "// @kl launch k grid=(1) block=(32) args=(y, M)\n");
        write(root / "p.json", R"({"name":"p","sizes":{"symbols":["M"],"main":[{"M":100}]},"inputs":[],
            "outputs":[{"name":"y","dtype":"f32","shape":["M"]}],"reference":"k.cu","baseline":"k.cu","bytes":"4*M"})");
        const auto p = kl::loadProblem(root / "p.json");
        const auto c = kl::parseCandidate(std::string(kCandidateHead) + directives, "c.cu");
        expectError([&] { kl::planLaunches(p, c, p.mainSizes[0], c.defaults()); }, category, where);
    }

    void expressions()
    {
        const kl::Symbols s { { "M", 1000 }, { "B", 256 } };
        QCOMPARE(kl::evaluateInteger("cdiv(M, B)", s), std::int64_t(4));
        QCOMPARE(kl::evaluateInteger("M % B", s), std::int64_t(1000 % 256));
        QCOMPARE(kl::evaluateInteger("roundup(M, B)", s), std::int64_t(1024));
        QCOMPARE(kl::evaluate("M <= 1000 && B == 256", s), 1.0);
        expectError([&] { kl::evaluate("M * K", s, "f.cu", "line 3"); }, "expression.unknown-symbol", "line 3");
        expectError([&] { kl::evaluateInteger("M / 3", s, "f.cu", "line 4"); }, "expression.not-integer", "333.3");
        expectError([&] { kl::evaluate("M * (B", s); }, "expression.syntax", "M * (B");
        expectError([&] { kl::evaluate("1 / 0", s); }, "expression.not-finite", "1 / 0");
        QCOMPARE(kl::usedSymbols("cdiv(M, THREADS) * VEC").size(), std::size_t(3));
    }

    void candidateDirectives()
    {
        const auto c = kl::parseCandidate(std::string(kCandidateHead)
            + "  // @kl tunable T = 128 in 32..256 pow2\n"
              "// @kl tunable U = 3 in 1..7 step 2\n"
              "// @kl tunable V = 2 in 4, 2, 2, 1\n"
              "// @kl scratch tmp f32 [n * 2] zero\n"
              "// @kl launch k grid=(cdiv(n, T), 1) block=(T) smem=(T * 4) args=(y, n as i64, 2.5 as f32)\n");
        QCOMPARE(c.tunables.size(), std::size_t(3));
        QCOMPARE(c.tunables[0].values, (std::vector<std::int64_t> { 32, 64, 128, 256 }));
        QCOMPARE(c.tunables[1].values, (std::vector<std::int64_t> { 1, 3, 5, 7 }));
        QCOMPARE(c.tunables[2].values, (std::vector<std::int64_t> { 1, 2, 4 }));
        QCOMPARE(c.tunables[0].line, 2);
        QVERIFY(c.scratch[0].zeroed);
        QCOMPARE(c.launches[0].grid[0], std::string("cdiv(n, T)"));
        QCOMPARE(c.launches[0].grid[1], std::string("1"));
        QCOMPARE(c.launches[0].sharedBytes, std::string("T * 4"));
        QCOMPARE(c.launches[0].args[1].type, kl::DType::I64);
        QVERIFY(c.launches[0].args[1].typeGiven);
        QCOMPARE(c.launches[0].args[2].type, kl::DType::F32);
    }

    void malformedCandidates_data()
    {
        QTest::addColumn<std::string>("source");
        QTest::addColumn<std::string>("category");
        QTest::addColumn<std::string>("where");
        const std::string launch = "// @kl launch k grid=(1) block=(32) args=(y, n)\n";
        QTest::newRow("no launch") << std::string(kCandidateHead) << std::string("candidate.no-launch")
                                   << std::string("c.cu");
        QTest::newRow("unknown directive")
            << "//@kl tunabel T = 1 in 1\n" + launch << std::string("candidate.bad-directive") << std::string("line 1");
        QTest::newRow("default outside set") << "\n// @kl tunable T = 3 in 1, 2\n" + launch
                                             << std::string("candidate.bad-tunable") << std::string("line 2");
        QTest::newRow("empty range") << "// @kl tunable T = 8 in 9..3\n" + launch
                                     << std::string("candidate.bad-tunable") << std::string("empty range");
        QTest::newRow("tunable without values")
            << "// @kl tunable T = 8\n" + launch << std::string("candidate.bad-tunable") << std::string("line 1");
        QTest::newRow("duplicate tunable") << "// @kl tunable T = 1 in 1\n// @kl tunable T = 1 in 1\n" + launch
                                           << std::string("candidate.duplicate") << std::string("line 2");
        QTest::newRow("launch without args") << std::string("// @kl launch k grid=(1) block=(32)\n")
                                             << std::string("candidate.bad-launch") << std::string("args=");
        QTest::newRow("unbalanced") << std::string("// @kl launch k grid=(cdiv(n, 2) block=(32) args=(y)\n")
                                    << std::string("candidate.bad-launch") << std::string("unbalanced");
        QTest::newRow("unknown launch key") << std::string("// @kl launch k grid=(1) block=(1) args=(y) stream=(2)\n")
                                            << std::string("candidate.bad-launch") << std::string("stream");
        QTest::newRow("scratch dtype") << "// @kl scratch s float [n]\n" + launch
                                       << std::string("candidate.bad-scratch") << std::string("float");
        QTest::newRow("constraint syntax")
            << "// @kl constraint T * * 2\n" + launch << std::string("expression.syntax") << std::string("line 1");
        QTest::newRow("argument type") << std::string("// @kl launch k grid=(1) block=(1) args=(n as f17)\n")
                                       << std::string("candidate.bad-launch") << std::string("f17");
        QTest::newRow("NUL byte") << std::string("a\0b", 3) + launch << std::string("candidate.binary")
                                  << std::string("NUL");
        QTest::newRow("too large") << std::string(kl::kMaxCandidateSourceBytes + 1, ' ')
                                   << std::string("candidate.too-large") << std::string("limit");
    }

    void malformedCandidates()
    {
        QFETCH(std::string, source);
        QFETCH(std::string, category);
        QFETCH(std::string, where);
        expectError([&] { kl::parseCandidate(source, "c.cu"); }, category, where);
    }

    void malformedProblems_data()
    {
        using Mutation = std::function<void(json&)>;
        QTest::addColumn<int>("index");
        QTest::addColumn<std::string>("category");
        QTest::addColumn<std::string>("where");
        m_mutations.clear();
        auto add = [&](const char* name, Mutation m, const char* category, const char* where) {
            m_mutations.push_back(std::move(m));
            QTest::newRow(name) << int(m_mutations.size() - 1) << std::string(category) << std::string(where);
        };
        add(
            "missing name", [](json& j) { j.erase("name"); }, "problem.missing-field", "name");
        add(
            "misspelt field", [](json& j) { j["tolerance"] = j["tolerances"]; }, "problem.unknown-field", "tolerance");
        add(
            "bad dtype", [](json& j) { j["inputs"][1]["dtype"] = "f17"; }, "problem.bad-dtype", "inputs[1].dtype");
        add(
            "shape symbol", [](json& j) { j["inputs"][0]["shape"][1] = "K"; }, "problem.unknown-symbol",
            "inputs[0].shape[1]");
        add(
            "shape not a list", [](json& j) { j["outputs"][0]["shape"] = "M, N"; }, "problem.wrong-type",
            "outputs[0].shape");
        add(
            "size set incomplete", [](json& j) { j["sizes"]["main"][0].erase("N"); }, "problem.missing-size",
            "sizes.main[0]");
        add(
            "zero size", [](json& j) { j["sizes"]["fuzz"][2]["M"] = 0; }, "problem.bad-size", "sizes.fuzz[2].M");
        add(
            "size of undeclared symbol", [](json& j) { j["sizes"]["fuzz"][0]["K"] = 3; }, "problem.unknown-symbol",
            "sizes.fuzz[0].K");
        add(
            "duplicate tensor", [](json& j) { j["outputs"][0]["name"] = "x"; }, "problem.duplicate", "outputs[0].name");
        add(
            "bytes syntax", [](json& j) { j["bytes"] = "2 * * M"; }, "expression.syntax", "bytes");
        add(
            "reference outside folder", [](json& j) { j["reference"] = "../softmax_bf16/reference.cu"; },
            "problem.path-outside", "reference");
        add(
            "absolute source", [](json& j) { j["baseline"] = "/etc/passwd"; }, "problem.path-outside", "baseline");
        add(
            "missing source", [](json& j) { j["baseline"] = "nope.cu"; }, "problem.missing-source", "baseline");
        add(
            "distribution", [](json& j) { j["inputs"][0]["distribution"]["kind"] = "gaussian"; },
            "problem.bad-distribution", "inputs[0].distribution.kind");
        add(
            "negative std", [](json& j) { j["inputs"][0]["distribution"]["std"] = -1; }, "problem.bad-distribution",
            "inputs[0].distribution.std");
        add(
            "arch", [](json& j) { j["arch"] = "hopper"; }, "problem.bad-arch", "arch");
        add(
            "negative tolerance", [](json& j) { j["tolerances"]["f16"]["atol"] = -1; }, "problem.bad-tolerance",
            "tolerances.f16");
        add(
            "size constraint", [](json& j) { j["sizes"]["constraints"] = { "N % 2 == 0" }; }, "problem.size-constraint",
            "sizes.fuzz[2]");
        add(
            "padding on a vector", [](json& j) { j["inputs"][1]["row_padding"] = "4"; }, "problem.bad-padding",
            "inputs[1].row_padding");
        add(
            "no outputs", [](json& j) { j["outputs"] = json::array(); }, "problem.empty", "outputs");
        add(
            "scalar value", [](json& j) { j["scalars"][0]["value"] = "small"; }, "problem.wrong-type",
            "scalars[0].value");
    }

    void malformedProblems()
    {
        QFETCH(int, index);
        QFETCH(std::string, category);
        QFETCH(std::string, where);
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path src = example("layernorm_gelu").parent_path();
        fs::copy_file(src / "reference.cu", root / "reference.cu");
        fs::copy_file(src / "baseline.cu", root / "baseline.cu");
        auto j = readJson(src / "problem.json");
        m_mutations[std::size_t(index)](j);
        write(root / "problem.json", j.dump(2));
        expectError([&] { kl::loadProblem(root / "problem.json"); }, category, where);
        // The file is always named, so the engineer knows which one to open.
        expectError([&] { kl::loadProblem(root / "problem.json"); }, category, "problem.json");
    }

    void invalidJsonNamesTheByte()
    {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "p.json";
        write(path, "{\"name\": \"x\", \"sizes\": {");
        expectError([&] { kl::loadProblem(path); }, "problem.bad-json", "byte");
        expectError([&] { kl::loadProblem(fs::path(dir.path().toStdString()) / "missing.json"); }, "problem.unreadable",
            "no such file");
    }

    void badCandidateInProblemNamesItsLine()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path src = example("layernorm_gelu").parent_path();
        fs::copy_file(src / "problem.json", root / "problem.json");
        fs::copy_file(src / "reference.cu", root / "reference.cu");
        write(root / "baseline.cu", "\n\n// @kl launch k grid=(M) block=(T args=(x)\n");
        expectError([&] { kl::loadProblem(root / "problem.json"); }, "candidate.bad-launch", "baseline.cu: line 3");
    }

private:
    std::vector<std::function<void(json&)>> m_mutations;
};

QTEST_GUILESS_MAIN(TestModel)
#include "test_model.moc"
