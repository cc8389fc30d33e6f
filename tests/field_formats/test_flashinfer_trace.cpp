// FlashInfer Trace out and in: every bundled session exports to a dataset that passes the schema check
// (written from flashinfer-bench's docs), each evaluation with its real status, and imports back into a
// problem that `kernelloop-cli check` accepts, with and without the "kernelloop" field our export adds.
// The schema check refuses what the docs refuse; import refusals are categorised.
#include "core/field_formats/flashinfer_check.h"
#include "core/field_formats/flashinfer_import.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/field_formats/kernel_tuner_t4.h"
#include "core/model/error.h"
#include "core/store/store.h"
#include "tests/field_formats/field_formats_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using kl::fieldformats::Json;
namespace ff = kl::fieldformats;
namespace fs = std::filesystem;

namespace {

// The first problem, for a failure's message (QVERIFY2 evaluates it whether or not the check fails).
std::string firstOf(const std::vector<std::string>& problems)
{
    return problems.empty() ? std::string() : problems.front();
}

std::vector<Json> jsonLines(const fs::path& file)
{
    std::vector<Json> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(Json::parse(line));
    return lines;
}

std::vector<fs::path> files(const fs::path& dir, const std::string& ext)
{
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ext)
            out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

void writeJson(const fs::path& file, const Json& j)
{
    fs::create_directories(file.parent_path());
    std::ofstream(file) << j.dump(2);
}

// Every definition and workload line without the "kernelloop" field: what another tool would write.
void stripExtension(const fs::path& dir)
{
    for (const auto& f : files(dir / "definitions", ".json")) {
        auto d = Json::parse(kl::test::readText(f.string()));
        d.erase("kernelloop");
        writeJson(f, d);
    }
    for (const auto& f : files(dir / "workloads", ".jsonl")) {
        std::string text;
        for (auto l : jsonLines(f)) {
            l.erase("kernelloop");
            text += l.dump() + "\n";
        }
        std::ofstream(f) << text;
    }
}

std::string categoryOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const kl::Error& e) {
        return e.category();
    }
    return "(none)";
}

// FlashInfer-Bench's own RMSNorm example (docs/flashinfer_trace/definition.mdx, workload.mdx), as another
// tool writes it: a scalar input, a const axis, random inputs.
void writeDocsRmsnorm(const fs::path& dir)
{
    writeJson(dir / "definitions/rmsnorm/rmsnorm_d4096.json", Json::parse(R"({
  "name": "rmsnorm_d4096", "op_type": "rmsnorm", "description": "Root Mean Square Normalization.",
  "tags": ["status:draft"],
  "axes": { "batch_size": { "type": "var" }, "hidden_size": { "type": "const", "value": 4096 } },
  "inputs": { "input": { "shape": ["batch_size", "hidden_size"], "dtype": "float16" },
              "weight": { "shape": ["hidden_size"], "dtype": "float16" },
              "eps": { "shape": null, "dtype": "float32" } },
  "outputs": { "output": { "shape": ["batch_size", "hidden_size"], "dtype": "float16" } },
  "reference": "import torch\n\ndef run(input, weight, eps):\n    variance = input.to(torch.float32).pow(2).mean(-1, keepdim=True)\n    rstd = torch.rsqrt(variance + eps)\n    hidden_states = input * rstd\n    output = (hidden_states * weight).to(weight.dtype)\n    return output"
})"));
    std::string lines;
    for (const int b : { 32, 1, 7 })
        lines += R"({"definition": "rmsnorm_d4096", "workload": {"uuid": "u)" + std::to_string(b)
            + R"(", "axes": {"batch_size": )" + std::to_string(b)
            + R"(}, "inputs": {"input": {"type": "random"}, "weight": {"type": "random"}, "eps": {"type": "scalar", "value": 1e-6}}}, "solution": null, "evaluation": null})"
            + "\n";
    fs::create_directories(dir / "workloads/rmsnorm");
    std::ofstream(dir / "workloads/rmsnorm/rmsnorm_d4096.jsonl") << lines;
}

} // namespace

class TestFlashInferTrace : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Each bundled session: exported, the schema check passes, every evaluation a trace with its real
    // status, and the definition back as a problem `check` accepts.
    void bundledSessionsExportAndImportBack()
    {
        const auto sessions = kl::test::bundledSessions();
        QVERIFY(sessions.size() >= 5);
        int failedTraces = 0;
        for (const auto& file : sessions) {
            QTemporaryDir dir;
            const fs::path root = dir.path().toStdString();
            auto store = kl::store::Store::open(root / "s.db");
            const auto id = store.importSession(file);
            const auto summary = ff::exportFlashInferTrace(store, { id }, root / "trace", {});
            const auto label = file.filename().string();
            QVERIFY2(summary.schemaProblems.empty(), (label + ": " + firstOf(summary.schemaProblems)).c_str());
            QVERIFY2(ff::checkTraceSet(root / "trace").empty(), label.c_str());
            QCOMPARE(summary.definitions.size(), std::size_t(1));
            QVERIFY(summary.solutions > 0 && summary.traces > 0);

            // One trace per evaluated iteration and main size, with the stored verdict.
            const auto rows = store.listIterations(id);
            std::map<int, std::string> categories;
            for (const auto& r : rows)
                if (!r.category.empty())
                    categories[r.index] = r.category;
            int traces = 0;
            for (const auto& f : files(root / "trace/traces", ".jsonl"))
                for (const auto& t : jsonLines(f)) {
                    ++traces;
                    const auto& e = t["evaluation"];
                    const auto category = categories.at(e["kernelloop"]["iteration"].get<int>());
                    QCOMPARE(QString::fromStdString(e["kernelloop"]["category"].get<std::string>()),
                        QString::fromStdString(category));
                    if (category == "passed") {
                        QCOMPARE(QString::fromStdString(e["status"].get<std::string>()), QStringLiteral("PASSED"));
                        QVERIFY(e["performance"]["latency_ms"].get<double>() > 0.0);
                        QVERIFY(e["performance"]["speedup_factor"].get<double>() > 0.0);
                        QCOMPARE(QString::fromStdString(e["environment"]["hardware"].get<std::string>()),
                            QStringLiteral("NVIDIA_H200"));
                    } else {
                        ++failedTraces;
                        QVERIFY2(e["status"] != "PASSED", category.c_str());
                        QVERIFY(e["performance"].is_null());
                    }
                }
            QCOMPARE(traces, summary.traces);

            // Back: with our kernelloop field, the problem as it was; `check` accepts it.
            const auto imported = ff::importFlashInferTrace(root / "trace", { {}, root / "problem", false });
            std::string why;
            QVERIFY2(kl::test::checkAccepted(kl::test::runCli({ QStringLiteral("check"),
                                                 QString::fromStdString(imported.problemFile.string()) }),
                         &why),
                (label + ": " + why).c_str());

            // Without it (as another tool would write it): a PyTorch reference still becomes a problem
            // `check` accepts, with no baseline kernel; a CUDA reference's stub is refused, categorised.
            stripExtension(root / "trace");
            QVERIFY(ff::checkTraceSet(root / "trace").empty());
            const bool pytorch = Json::parse(kl::test::readText(
                                     files(root / "trace/definitions", ".json").front().string()))["tags"][1]
                == "reference:pytorch";
            if (pytorch) {
                const auto bare = ff::importFlashInferTrace(root / "trace", { {}, root / "bare", false });
                const auto run
                    = kl::test::runCli({ QStringLiteral("check"), QString::fromStdString(bare.problemFile.string()) });
                QVERIFY2(run.exitCode == 0, (label + ": " + run.out + run.err).c_str());
                const auto problem = Json::parse(kl::test::readText(bare.problemFile.string()));
                QVERIFY(!problem.contains("baseline"));
                QCOMPARE(std::size_t(bare.mainSizes + bare.fuzzSizes),
                    std::size_t(jsonLines(files(root / "trace/workloads", ".jsonl").front()).size()));
            } else {
                QCOMPARE(QString::fromStdString(categoryOf([&] {
                    ff::importFlashInferTrace(root / "trace", { {}, root / "bare", false });
                })),
                    QStringLiteral("trace.no-reference"));
            }
        }
        QVERIFY2(failedTraces > 0, "the bundled LLM session's unwritten output is exported as a failure");
    }

    // The recorded LLM session's round that left its output unwritten: INCORRECT_NUMERICAL with the
    // errors it measured, and no performance.
    void aFailedVerificationKeepsItsErrors()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        auto store = kl::store::Store::open(root / "s.db");
        const auto id = store.importSession(
            kl::test::sourceDir() + "/resources/sessions/layernorm_gelu-llm-replay-h200.klsession");
        ff::exportFlashInferTrace(store, { id }, root / "trace", {});
        bool seen = false;
        for (const auto& f : files(root / "trace/traces", ".jsonl"))
            for (const auto& t : jsonLines(f))
                if (t["evaluation"]["kernelloop"]["category"] == "unwritten-output") {
                    seen = true;
                    QCOMPARE(QString::fromStdString(t["evaluation"]["status"].get<std::string>()),
                        QStringLiteral("INCORRECT_NUMERICAL"));
                    QVERIFY(t["evaluation"]["correctness"].is_object());
                    QVERIFY(t["evaluation"]["log"].get<std::string>().find("case ") != std::string::npos);
                    // Its kernel is a solution, so the trace names one that exists.
                    QVERIFY(fs::exists(root / "trace/solutions/kernelloop-llm/layernorm_gelu/layernorm_gelu"
                        / (t["solution"].get<std::string>() + ".json")));
                }
        QVERIFY(seen);
    }

    // What the documentation refuses, the check refuses: each planted fault is found and named.
    void theSchemaCheckFindsPlantedFaults()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        auto store = kl::store::Store::open(root / "s.db");
        const auto id = store.importSession(
            kl::test::sourceDir() + "/resources/sessions/layernorm_gelu_triton-tuner-h200.klsession");
        ff::exportFlashInferTrace(store, { id }, root / "trace", {});
        const auto definitionFile = files(root / "trace/definitions", ".json").front();
        const auto definition = Json::parse(kl::test::readText(definitionFile.string()));
        QVERIFY(ff::checkDefinition(definition, "d").empty());

        const auto found = [](const std::vector<std::string>& problems, const std::string& text) {
            return std::any_of(
                problems.begin(), problems.end(), [&](const auto& p) { return p.find(text) != std::string::npos; });
        };
        auto d = definition;
        d["inputs"]["x"]["shape"][0] = "Q";
        QVERIFY(found(ff::checkDefinition(d, "d"), "undefined axis \"Q\""));
        d = definition;
        d["reference"] = "import torch\ndef reference(x): return x\n";
        QVERIFY(found(ff::checkDefinition(d, "d"), "top-level function named run"));
        d = definition;
        d["outputs"]["x"] = d["outputs"]["y"];
        QVERIFY(found(ff::checkDefinition(d, "d"), "must not overlap"));
        d = definition;
        d["inputs"]["x"]["dtype"] = "float64";
        QVERIFY(found(ff::checkDefinition(d, "d"), "dtypes"));
        d = definition;
        d["axes"]["M"] = { { "type", "const" } };
        QVERIFY(found(ff::checkDefinition(d, "d"), "const axis needs a whole value"));

        const auto solutionFile = files(root / "trace/solutions", ".json").front();
        auto s = Json::parse(kl::test::readText(solutionFile.string()));
        QVERIFY(ff::checkSolution(s, "s").empty());
        s["spec"]["entry_point"] = "kernel.py";
        QVERIFY(found(ff::checkSolution(s, "s"), "exactly once"));
        s["spec"]["entry_point"] = "other.py::run";
        QVERIFY(found(ff::checkSolution(s, "s"), "not among the sources"));
        s["sources"][0]["path"] = "../escape.py";
        QVERIFY(found(ff::checkSolution(s, "s"), "traversal"));

        auto trace = jsonLines(files(root / "trace/traces", ".jsonl").front()).front();
        QVERIFY(ff::checkTrace(trace, false, &definition, "t").empty());
        auto t = trace;
        t["evaluation"]["performance"] = nullptr;
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "PASSED needs correctness and performance"));
        t = trace;
        t["evaluation"]["status"] = "COMPILE_ERROR";
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "carries neither"));
        t = trace;
        t["evaluation"]["status"] = "SLOW";
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "must be one of"));
        t = trace;
        t["workload"]["axes"].erase("M");
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "var axis has no value"));
        t = trace;
        t["workload"]["inputs"]["eps"] = { { "type", "random" } };
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "needs type scalar"));
        t = trace;
        t["evaluation"]["correctness"]["max_absolute_error"] = -1.0;
        QVERIFY(found(ff::checkTrace(t, false, &definition, "t"), "at least 0"));
        QVERIFY(found(ff::checkTrace(trace, true, &definition, "t"), "no solution and no evaluation"));

        // The layout: a definition in the wrong folder, a trace naming a solution that is not there.
        fs::rename(definitionFile, root / "trace/definitions" / definitionFile.filename());
        QVERIFY(found(ff::checkTraceSet(root / "trace"), "layout: should be definitions/"));
        fs::rename(root / "trace/definitions" / definitionFile.filename(), definitionFile);
        fs::remove(solutionFile);
        QVERIFY(found(ff::checkTraceSet(root / "trace"), "is not in solutions/"));
    }

    // Another tool's definition (FlashInfer-Bench's own RMSNorm example) becomes a problem `check` accepts:
    // the const axis in every size, the scalar's value from the workloads, bytes from the shapes.
    void theDocumentationsDefinitionImports()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        writeDocsRmsnorm(root / "set");
        QVERIFY2(ff::checkTraceSet(root / "set").empty(), firstOf(ff::checkTraceSet(root / "set")).c_str());
        const auto imported = ff::importFlashInferTrace(root / "set", { {}, root / "rms", false });
        QCOMPARE(imported.mainSizes, 3);
        const auto problem = Json::parse(kl::test::readText(imported.problemFile.string()));
        QCOMPARE(problem["sizes"]["main"][1]["hidden_size"].get<int>(), 4096);
        QCOMPARE(problem["scalars"][0]["name"].get<std::string>(), std::string("eps"));
        QCOMPARE(problem["scalars"][0]["value"].get<double>(), 1e-6);
        QCOMPARE(problem["bytes"].get<std::string>(),
            std::string("2 * batch_size * hidden_size + 2 * hidden_size + 2 * batch_size * hidden_size"));
        const auto reference = kl::test::readText((root / "rms/reference.py").string());
        QVERIFY(reference.find("def reference(**tensors)") != std::string::npos);
        QVERIFY(reference.find("(\"input\", \"weight\", \"eps\", )") != std::string::npos);
        const auto run
            = kl::test::runCli({ QStringLiteral("check"), QString::fromStdString(imported.problemFile.string()) });
        QVERIFY2(run.exitCode == 0, (run.out + run.err).c_str());
        // Through the CLI as a user runs it; an existing folder is not written over.
        const auto again
            = kl::test::runCli({ QStringLiteral("import-trace"), QString::fromStdString((root / "set").string()),
                QStringLiteral("-o"), QString::fromStdString((root / "rms").string()) });
        QCOMPARE(again.exitCode, 2);
        QVERIFY(again.err.find("[trace.output-exists]") != std::string::npos);
    }

    void importRefusalsAreCategorised()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const auto refusal = [&](const fs::path& set, const std::string& definition = {}) {
            static int n = 0;
            return categoryOf([&] {
                ff::importFlashInferTrace(set, { definition, root / ("out" + std::to_string(++n)), false });
            });
        };
        QCOMPARE(QString::fromStdString(refusal(root / "nothing")), QStringLiteral("trace.not-a-dataset"));
        writeDocsRmsnorm(root / "set");
        auto d = Json::parse(kl::test::readText((root / "set/definitions/rmsnorm/rmsnorm_d4096.json").string()));
        QCOMPARE(QString::fromStdString(refusal(root / "set", "gemm")), QStringLiteral("trace.unknown-definition"));

        auto fp8 = d;
        fp8["name"] = "rmsnorm_fp8";
        fp8["inputs"]["input"]["dtype"] = "float8_e4m3fn";
        writeJson(root / "set/definitions/rmsnorm/rmsnorm_fp8.json", fp8);
        QCOMPARE(QString::fromStdString(refusal(root / "set")), QStringLiteral("trace.which-definition"));
        QCOMPARE(QString::fromStdString(refusal(root / "set", "rmsnorm_fp8")), QStringLiteral("trace.no-workload"));
        QCOMPARE(QString::fromStdString(refusal(root / "set/definitions/rmsnorm/rmsnorm_d4096.json")),
            QStringLiteral("(none)"));

        auto noRun = d;
        noRun["reference"] = "import torch\n";
        writeJson(root / "bad/definitions/rmsnorm/rmsnorm_d4096.json", noRun);
        QCOMPARE(QString::fromStdString(refusal(root / "bad")), QStringLiteral("trace.bad-definition"));

        auto scalarOut = d;
        scalarOut["outputs"]["output"]["shape"] = nullptr;
        writeJson(root / "bad/definitions/rmsnorm/rmsnorm_d4096.json", scalarOut);
        fs::create_directories(root / "bad/workloads");
        fs::copy(root / "set/workloads", root / "bad/workloads",
            fs::copy_options::recursive | fs::copy_options::overwrite_existing);
        QCOMPARE(QString::fromStdString(refusal(root / "bad")), QStringLiteral("trace.scalar-output"));

        // A dtype KernelLoop has no tensors of, with its workloads there: refused as such.
        auto lines = kl::test::readText((root / "set/workloads/rmsnorm/rmsnorm_d4096.jsonl").string());
        for (auto at = lines.find("rmsnorm_d4096"); at != std::string::npos; at = lines.find("rmsnorm_d4096", at + 1))
            lines.replace(at, 13, "rmsnorm_fp8__");
        auto fp8b = fp8;
        fp8b["name"] = "rmsnorm_fp8__";
        writeJson(root / "fp8/definitions/rmsnorm/rmsnorm_fp8__.json", fp8b);
        fs::create_directories(root / "fp8/workloads/rmsnorm");
        std::ofstream(root / "fp8/workloads/rmsnorm/rmsnorm_fp8__.jsonl") << lines;
        QCOMPARE(QString::fromStdString(refusal(root / "fp8")), QStringLiteral("trace.unsupported-dtype"));
    }

    // Export's own refusals, and the CLI: a folder with files in it is kept unless --force; the schema
    // check's verdict is said and is the exit status.
    void exportThroughTheCli()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        {
            auto store = kl::store::Store::open(root / "s.db");
            store.importSession(kl::test::sourceDir() + "/resources/sessions/gemm_fp16_triton-tuner-h200.klsession");
        }
        const auto db = QString::fromStdString((root / "s.db").string());
        const auto out = QString::fromStdString((root / "trace").string());
        auto run = kl::test::runCli(
            { QStringLiteral("export-trace"), out, QStringLiteral("--db"), db, QStringLiteral("--t4") });
        QVERIFY2(run.exitCode == 0, (run.out + run.err).c_str());
        QVERIFY(run.out.find("schema check: passed") != std::string::npos);
        const auto t4 = Json::parse(kl::test::readText((root / "trace/t4/session-1.json").string()));
        QVERIFY(ff::checkKernelTunerResults(t4).empty());
        QCOMPARE(t4["schema_version"].get<std::string>(), std::string("1.0.0"));
        QCOMPARE(t4["results"].size(), std::size_t(13));
        QVERIFY(t4["results"][1]["configuration"].contains("BLOCK_M"));
        QCOMPARE(t4["results"][1]["invalidity"].get<std::string>(), std::string("correct"));
        QVERIFY(!t4["results"][1]["times"]["runtimes"].empty());
        auto bad = t4;
        bad["results"][0]["invalidity"] = "slow";
        bad["results"][1].erase("times");
        QCOMPARE(ff::checkKernelTunerResults(bad).size(), std::size_t(2));

        run = kl::test::runCli({ QStringLiteral("export-trace"), out, QStringLiteral("--db"), db });
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.find("[trace.folder-not-empty]") != std::string::npos);
        run = kl::test::runCli({ QStringLiteral("check-trace"), out });
        QCOMPARE(run.exitCode, 0);
        std::ofstream(root / "trace/traces/broken.jsonl") << "{\"definition\": \"nope\"}\n";
        run = kl::test::runCli({ QStringLiteral("check-trace"), out });
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.find("is not in definitions/") != std::string::npos);
        run = kl::test::runCli({ QStringLiteral("export-trace"), out, QStringLiteral("--db"), db,
            QStringLiteral("--campaign"), QStringLiteral("none") });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.find("[store.unknown-campaign]") != std::string::npos, run.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestFlashInferTrace)
#include "test_flashinfer_trace.moc"
