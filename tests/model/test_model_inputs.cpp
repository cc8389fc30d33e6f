// Problem files that are wrong in their values or are not files at all (issue 12, "Fuzzed
// inputs"): each is refused with its category and the field, never a crash, a hang or an exit 0.
#include "core/model/error.h"
#include "core/model/names.h"
#include "core/model/problem.h"
#include "tests/model/expect_error.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/stat.h>

using nlohmann::json;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(std::string)

using kl::test::expectError;

namespace {

const fs::path kExample = fs::path(KL_SOURCE_DIR) / "resources/examples/layernorm_gelu";

void write(const fs::path& p, const std::string& text)
{
    std::ofstream out(p, std::ios::binary);
    out << text;
}

json exampleJson()
{
    std::ifstream in(kExample / "problem.json");
    return json::parse(in);
}

// A copy of the example in `root`, with `text` as its problem.json.
fs::path writeProblem(const fs::path& root, const std::string& text)
{
    for (const char* source : { "reference.cu", "baseline.cu" })
        fs::copy_file(kExample / source, root / source, fs::copy_options::overwrite_existing);
    write(root / "problem.json", text);
    return root / "problem.json";
}

} // namespace

class TestModelInputs : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void badValues_data()
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
        const std::string huge(26000, 'a');
        // Names: a length limit, and no stack overflow in the check.
        add(
            "long tensor name", [huge](json& j) { j["inputs"][1]["name"] = huge; }, "problem.bad-name",
            "inputs[1].name");
        add(
            "long output name", [huge](json& j) { j["outputs"][0]["name"] = huge; }, "problem.bad-name",
            "outputs[0].name");
        add(
            "long scalar name", [huge](json& j) { j["scalars"][0]["name"] = huge; }, "problem.bad-name",
            "scalars[0].name");
        add(
            "long size symbol", [huge](json& j) { j["sizes"]["symbols"][0] = huge; }, "problem.bad-name",
            "sizes.symbols[0]");
        add(
            "129-character name", [](json& j) { j["inputs"][1]["name"] = std::string(129, 'g'); }, "problem.bad-name",
            "at most 128");
        add(
            "duplicate size symbol",
            [](json& j) {
                j["sizes"]["symbols"] = { "M", "N", "M" };
            },
            "problem.duplicate", "sizes.symbols[2]");
        // Scalars within their dtype.
        add(
            "i8 scalar of 300",
            [](json& j) {
                j["scalars"][0]["dtype"] = "i8";
                j["scalars"][0]["value"] = 300;
            },
            "problem.bad-scalar", "scalars[0].value");
        add(
            "i32 scalar of 1e308",
            [](json& j) {
                j["scalars"][0]["dtype"] = "i32";
                j["scalars"][0]["value"] = 1e308;
            },
            "problem.bad-scalar", "does not fit i32");
        add(
            "i32 scalar of 1.5",
            [](json& j) {
                j["scalars"][0]["dtype"] = "i32";
                j["scalars"][0]["value"] = 1.5;
            },
            "problem.bad-scalar", "not a whole number");
        add(
            "f16 scalar of 1e6",
            [](json& j) {
                j["scalars"][0]["dtype"] = "f16";
                j["scalars"][0]["value"] = 1e6;
            },
            "problem.bad-scalar", "f16");
        // Distributions within the tensor's dtype, integers between whole bounds.
        add(
            "integers 1.5 .. 1e20",
            [](json& j) {
                j["inputs"][1]["distribution"] = { { "kind", "integers" }, { "low", 1.5 }, { "high", 1e20 } };
            },
            "problem.bad-distribution", "inputs[1].distribution.low");
        add(
            "integers to 1e20",
            [](json& j) {
                j["inputs"][1]["distribution"] = { { "kind", "integers" }, { "low", 1 }, { "high", 1e20 } };
            },
            "problem.bad-distribution", "inputs[1].distribution.high");
        add(
            "uniform beyond f16",
            [](json& j) {
                j["inputs"][1]["distribution"] = { { "kind", "uniform" }, { "low", 0 }, { "high", 1e9 } };
            },
            "problem.bad-distribution", "f16");
        // Expressions that parse but mean nothing.
        add(
            "shape \"M,N\"", [](json& j) { j["inputs"][0]["shape"] = { "M,N" }; }, "expression.syntax",
            "more than one expression");
        add(
            "bytes 1/0", [](json& j) { j["bytes"] = "1/0"; }, "problem.bad-bytes", "bytes");
        add(
            "bytes 0", [](json& j) { j["bytes"] = "0"; }, "problem.bad-bytes", "above zero");
        add(
            "bytes -1", [](json& j) { j["bytes"] = -1; }, "problem.bad-bytes", "above zero");
        add(
            "bytes negative at a fuzz size", [](json& j) { j["bytes"] = "M - 2"; }, "problem.bad-bytes", "1x4096");
        add(
            "flops -1", [](json& j) { j["flops"] = "-1"; }, "problem.bad-flops", "flops");
        add(
            "row_padding -8", [](json& j) { j["inputs"][0]["row_padding"] = "-8"; }, "problem.bad-padding",
            "inputs[0].row_padding");
        add(
            "row_padding 0.5", [](json& j) { j["inputs"][0]["row_padding"] = 0.5; }, "problem.bad-padding",
            "not a whole number");
        add(
            "zero dimension", [](json& j) { j["outputs"][0]["shape"][1] = "N - N"; }, "problem.bad-shape",
            "outputs[0].shape[1]");
        add(
            "dimension below one at a fuzz size", [](json& j) { j["inputs"][1]["shape"][0] = "M - 1"; },
            "problem.bad-shape", "1x4096");
        add(
            "fuzz size 2^63-1", [](json& j) { j["sizes"]["fuzz"][0]["M"] = std::int64_t(9223372036854775807); },
            "problem.bad-size", "sizes.fuzz[0].M");
        add(
            "fuzz size 2^64-1", [](json& j) { j["sizes"]["fuzz"][0]["M"] = std::uint64_t(18446744073709551615ull); },
            "problem.bad-size", "sizes.fuzz[0].M");
        add(
            "tensor over 64 GiB",
            [](json& j) {
                j["sizes"]["fuzz"][0] = { { "M", 1 << 20 }, { "N", 1 << 20 } };
            },
            "problem.bad-shape", "at most");
        // Paths to the sources.
        add(
            "NUL in the reference path", [](json& j) { j["reference"] = std::string("reference.cu\0.txt", 17); },
            "problem.bad-path", "reference");
    }

    void badValues()
    {
        QFETCH(int, index);
        QFETCH(std::string, category);
        QFETCH(std::string, where);
        QTemporaryDir dir;
        auto j = exampleJson();
        m_mutations[std::size_t(index)](j);
        const auto path = writeProblem(dir.path().toStdString(), j.dump(2));
        expectError([&] { kl::loadProblem(path); }, category, where);
    }

    void numberTooLargeForJson()
    {
        QTemporaryDir dir;
        auto text = exampleJson().dump(2);
        text.replace(text.find("1e-05"), 5, "1e400");
        const auto path = writeProblem(dir.path().toStdString(), text);
        expectError([&] { kl::loadProblem(path); }, "problem.bad-json", "1e400");
    }

    void unmutatedExampleLoads()
    {
        QTemporaryDir dir;
        const auto path = writeProblem(dir.path().toStdString(), exampleJson().dump(2));
        QCOMPARE(kl::loadProblem(path).name, std::string("layernorm_gelu"));
    }

    // Only regular files are read, and at once: a FIFO would block, /dev/zero would fill the memory.
    void notRegularFiles()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const auto fifo = root / "problem.fifo";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const auto start = std::chrono::steady_clock::now();
        expectError([&] { kl::loadProblem(fifo); }, "problem.not-a-file", "FIFO");
        expectError([&] { kl::loadProblem("/dev/zero"); }, "problem.not-a-file", "device");
        expectError([&] { kl::loadProblem(root); }, "problem.not-a-file", "folder");
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    }

    void unreadablePaths()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        expectError([&] { kl::loadProblem(root / std::string(300, 'n')); }, "problem.unreadable", "too long");
        fs::create_symlink(root / "b", root / "a");
        fs::create_symlink(root / "a", root / "b");
        expectError([&] { kl::loadProblem(root / "a"); }, "problem.unreadable", "symlink loop");
        expectError([&] { kl::loadProblem(root / "missing.json"); }, "problem.unreadable", "no such file");
    }

    void sizeCheckedBeforeReading()
    {
        QTemporaryDir dir;
        const auto big = fs::path(dir.path().toStdString()) / "big.json";
        {
            std::ofstream(big) << ' ';
        }
        fs::resize_file(big, 5 * 1024 * 1024); // sparse: no time spent writing it
        expectError([&] { kl::loadProblem(big); }, "problem.too-large", "limit");
    }

    // A reference or baseline that is a symlink out of the problem's folder is outside it.
    void sourceSymlinkOutside_data()
    {
        QTest::addColumn<std::string>("source");
        QTest::newRow("reference") << std::string("reference.cu");
        QTest::newRow("baseline") << std::string("baseline.cu");
    }

    void sourceSymlinkOutside()
    {
        QFETCH(std::string, source);
        QTemporaryDir outside, dir;
        const fs::path root = dir.path().toStdString();
        const auto path = writeProblem(root, exampleJson().dump(2));
        const auto target = fs::path(outside.path().toStdString()) / source;
        fs::copy_file(root / source, target);
        fs::remove(root / source);
        fs::create_symlink(target, root / source);
        expectError([&] { kl::loadProblem(path); }, "problem.path-outside", "outside the problem's folder");
        // A symlink that stays inside is fine.
        fs::remove(root / source);
        fs::copy_file(target, root / ("real_" + source));
        fs::create_symlink("real_" + source, root / source);
        QCOMPARE(kl::loadProblem(path).name, std::string("layernorm_gelu"));
    }

    void namesCheckedWithoutRecursion()
    {
        QVERIFY(kl::isIdentifier("THREADS_2"));
        QVERIFY(!kl::isIdentifier("2THREADS"));
        QVERIFY(!kl::isIdentifier(std::string(1000000, 'a')));
        QVERIFY(kl::isReservedName("__CUDA_ARCH__"));
        QVERIFY(kl::isReservedName("_Tile"));
        QVERIFY(kl::isReservedName("int"));
        QVERIFY(kl::isReservedName("threadIdx"));
        QVERIFY(!kl::isReservedName("THREADS"));
    }

private:
    std::vector<std::function<void(json&)>> m_mutations;
};

QTEST_GUILESS_MAIN(TestModelInputs)
#include "test_model_inputs.moc"
