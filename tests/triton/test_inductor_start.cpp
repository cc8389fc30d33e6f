// torch.compile's kernel as a starting candidate: the helper python/kernelloop/inductor_kernel.py
// converts what Inductor wrote and launched, recorded on the H200 (torch 2.11, Triton 3.6; tests/
// fixtures/inductor, captured by tests/fixtures/inductor/capture.py), into a Triton candidate whose
// block sizes and warps are tunables and whose size arguments are expressions over the problem's
// symbols; here it runs on the recorded captures (no GPU, no Triton needed) and the reply is read
// by the C++ side as `tune --start inductor` reads it. Operators for which Inductor wrote several
// kernels or none are refused with what it did.
#include "core/compile/inductor_kernel.h"
#include "core/compile/python_tool.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>

namespace {

const std::string kFixtures = std::string(KL_SOURCE_DIR) + "/tests/fixtures/inductor/";

nlohmann::json fixture(const std::string& name)
{
    std::ifstream in(kFixtures + name + ".json");
    return nlohmann::json::parse(in);
}

// The helper's reply to a recorded capture (the request with its "record": converted only).
std::string convert(const nlohmann::json& captured)
{
    auto request = captured.at("request");
    request["record"] = captured.at("record");
    const auto helper = kl::pythonHelperPath("inductor_kernel.py", "KL_INDUCTOR_HELPER");
    const auto run = kl::runPythonTool(kl::pythonExecutable(), helper, request.dump(), std::chrono::seconds(60));
    return run.reply;
}

kl::Problem somewhere(const QTemporaryDir& dir)
{
    kl::Problem p;
    p.name = "recorded";
    p.dir = dir.path().toStdString();
    p.file = p.dir / "problem.json";
    return p;
}

} // namespace

class TestInductorStart : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void converted_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("grid");
        QTest::addColumn<QString>("sizeArgument");
        QTest::addColumn<QString>("tunables");
        const auto row = [](const char* name, const char* grid, const char* size, const char* tunables) {
            QTest::newRow(name) << QString::fromLatin1(name) << QString::fromLatin1(grid) << QString::fromLatin1(size)
                                << QString::fromLatin1(tunables);
        };
        // Pointwise: one program per XBLOCK elements over the flattened tensor.
        row("gelu", "cdiv(batch_size * dim, XBLOCK)", "batch_size * dim", "XBLOCK W S");
        row("new_gelu", "cdiv(batch_size * dim, XBLOCK)", "batch_size * dim", "XBLOCK W S");
        // Reductions: XBLOCK rows per program, a loop over the row R0_BLOCK at a time.
        row("softmax", "cdiv(batch_size, XBLOCK)", "dim", "XBLOCK R0_BLOCK W S");
        row("log_softmax", "cdiv(batch_size, XBLOCK)", "dim", "XBLOCK R0_BLOCK W S");
        row("sum_reduction", "cdiv(batch_size * dim2, XBLOCK)", "dim1", "XBLOCK R0_BLOCK W S");
    }

    void converted()
    {
        QFETCH(QString, name);
        QFETCH(QString, grid);
        QFETCH(QString, sizeArgument);
        QFETCH(QString, tunables);
        QTemporaryDir dir;
        const auto captured = fixture(name.toStdString());
        const auto kernel = kl::readInductorReply(convert(captured), somewhere(dir));
        const auto& c = kernel.candidate;
        QCOMPARE(c.language, kl::CandidateLanguage::Triton);
        QCOMPARE(c.launches.size(), std::size_t(1));
        const auto& launch = c.launches.front();
        const auto& recorded = captured.at("record").at("kernels").at(0);
        QCOMPARE(launch.kernel, recorded.at("name").get<std::string>());
        QCOMPARE(QString::fromStdString(launch.grid[0]), grid);
        QCOMPARE(launch.numWarps, std::string("W"));
        // Buffers by the problem's names, sizes as expressions over its symbols (never the literals of
        // the captured size), block sizes as constexprs set from the tunables.
        std::vector<std::string> args;
        for (const auto& a : launch.args)
            args.push_back(a.expression);
        QVERIFY(std::find(args.begin(), args.end(), "x") != args.end());
        QVERIFY(std::find(args.begin(), args.end(), sizeArgument.toStdString()) != args.end());
        for (const auto& t : tunables.split(QLatin1Char(' ')))
            QVERIFY2(c.tunable(t.toStdString()), qPrintable(t));
        // The chosen configuration is each tunable's default.
        const auto chosen = recorded.at("chosen");
        QCOMPARE(c.defaults().at("W"), chosen.at("num_warps").get<std::int64_t>());
        QCOMPARE(c.defaults().at("XBLOCK"), chosen.at("kwargs").at("XBLOCK").get<std::int64_t>());
        // Inductor's autotuning decorator is gone; the kernel is plain @triton.jit.
        QVERIFY(c.source.find("@triton_heuristics") == std::string::npos);
        QVERIFY(c.source.find("@triton.jit") != std::string::npos);
        QVERIFY(kernel.notes.empty());
    }

    // Several kernels, none (an extern library call), a size argument that fits no product of the
    // symbols: each a categorised refusal saying what Inductor did.
    void refusals()
    {
        QTemporaryDir dir;
        auto two = fixture("gelu");
        auto second = two["record"]["kernels"][0];
        second["name"] = "triton_poi_fused_1";
        two["record"]["kernels"].push_back(second);
        two["record"]["code"] = two["record"]["code"].get<std::string>()
            + "\ntriton_poi_fused_1 = async_compile.triton('triton_poi_fused_1', '''\nx\n''', device_str='cuda')\n";
        try {
            kl::readInductorReply(convert(two), somewhere(dir));
            QFAIL("two kernels converted");
        } catch (const kl::Error& e) {
            QCOMPARE(e.category(), std::string("inductor.inductor-several-kernels"));
            QVERIFY(e.message().find("2 Triton kernels") != std::string::npos);
        }
        auto none = fixture("gelu");
        none["record"]["kernels"] = nlohmann::json::array();
        none["record"]["code"] = "buf0 = empty_strided_cuda(...)\nextern_kernels.mm(arg0_1, arg1_1, out=buf0)\n";
        try {
            kl::readInductorReply(convert(none), somewhere(dir));
            QFAIL("an extern call converted");
        } catch (const kl::Error& e) {
            QCOMPARE(e.category(), std::string("inductor.inductor-no-kernel"));
            QVERIFY2(e.message().find("mm") != std::string::npos, e.message().c_str());
        }
        auto odd = fixture("gelu");
        auto& calls = odd["record"]["kernels"][0]["calls"];
        for (auto& a : calls[1][0])
            if (a.value("kind", "") == "int")
                a["value"] = a["value"].get<std::int64_t>() + 7; // no product of the symbols at that size
        try {
            kl::readInductorReply(convert(odd), somewhere(dir));
            QFAIL("a specialised size converted");
        } catch (const kl::Error& e) {
            QCOMPARE(e.category(), std::string("inductor.inductor-specialised"));
        }
    }

    // The request the C++ side sends: both sizes, every tensor's shape at each.
    void requestHasTwoSizes()
    {
        QTemporaryDir dir;
        std::ofstream(dir.filePath(QStringLiteral("reference.py")).toStdString())
            << "def reference(x):\n    return x * 2\n";
        std::ofstream(dir.filePath(QStringLiteral("problem.json")).toStdString()) << R"({"name": "double",
            "sizes": {"symbols": ["M", "N"], "main": [{"M": 64, "N": 128}], "fuzz": [{"M": 1, "N": 128}, {"M": 3, "N": 1}, {"M": 7, "N": 33}, {"M": 5, "N": 9}]},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["M", "N"]}],
            "outputs": [{"name": "y", "dtype": "f32", "shape": ["M", "N"]}],
            "reference": "reference.py", "bytes": "8 * M * N"})";
        const auto problem = kl::loadProblem(dir.filePath(QStringLiteral("problem.json")).toStdString());
        const auto request = nlohmann::json::parse(kl::inductorRequest(problem));
        QCOMPARE(request["sizes"].size(), std::size_t(2));
        // The largest fuzz size with every symbol different and none 0 or 1 (3x1 would be specialised).
        QCOMPARE(request["sizes"][1]["M"].get<int>(), 7);
        QCOMPARE(request["tensors"][0]["shapes"][1].dump(), std::string("[7,33]"));
        QCOMPARE(request["tensors"][1]["role"].get<std::string>(), std::string("output"));
    }
};

QTEST_GUILESS_MAIN(TestInductorStart)
#include "test_inductor_start.moc"
