// kernelloop-cli export-trace / import-trace / export-trajectories / export-t4: results in the field's
// formats (core/field_formats): FlashInfer Trace out and in, kernel trajectories with the engineer's
// decisions, Kernel Tuner's T4.
#include "cli/command.h"
#include "cli/option_values.h"

#include "core/field_formats/export_selection.h"
#include "core/field_formats/flashinfer_check.h"
#include "core/field_formats/flashinfer_import.h"
#include "core/field_formats/flashinfer_trace.h"
#include "core/field_formats/kernel_tuner_t4.h"
#include "core/field_formats/trajectories.h"
#include "core/model/error.h"
#include "core/store/store.h"

#include <cstdlib>
#include <iostream>

namespace kl::cli {

namespace {

store::Store openStore(const std::string& db)
{
    const auto path = storePath(db);
    if (!std::filesystem::exists(path))
        throw Error("store.open-failed", path.string(), {}, "no such store (run tune first, or pass --db)");
    return store::Store::open(path, { .readOnly = true });
}

// The keys to redact in every form: those of the usual variables and of each --key-env, where set. A key
// never reaches the store, but an export redacts again, for one that got there in a way nothing knew.
fieldformats::ExportSecrets secretsFrom(const std::vector<std::string>& keyEnv)
{
    fieldformats::ExportSecrets secrets;
    std::vector<std::string> names { "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KERNELLOOP_API_KEY" };
    names.insert(names.end(), keyEnv.begin(), keyEnv.end());
    for (const auto& name : names)
        if (const char* value = std::getenv(name.c_str()); value && *value)
            secrets.keys.emplace_back(value);
    return secrets;
}

struct SelectionOptions {
    std::string db;
    std::int64_t session = 0;
    std::string campaign;
    std::vector<std::string> keyEnv;
    bool force = false;
};

void addSelection(CLI::App* cmd, SelectionOptions& o)
{
    cmd->add_option("--db", o.db, "the session store");
    auto* session
        = cmd->add_option("--session", o.session, "a session id (default: the newest)")->check(CLI::PositiveNumber);
    cmd->add_option("--campaign", o.campaign, "every session of the campaign NAME")->excludes(session);
    cmd->add_option(
        "--key-env", o.keyEnv, "also redact the key in this variable (OPENAI_API_KEY, ANTHROPIC_API_KEY always)");
    cmd->add_flag("--force", o.force, "write over an existing file, or into a folder that is not empty");
}

std::vector<std::int64_t> sessionsOf(const store::Store& s, const SelectionOptions& o)
{
    return fieldformats::selectedSessions(s, s.path(), { o.session, o.campaign });
}

const CommandRegistration exportTrace([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("export-trace",
        "Write sessions as a FlashInfer Trace dataset: definitions, workloads, solutions, traces (FlashInfer-Bench)");
    auto dir = std::make_shared<std::string>();
    auto o = std::make_shared<SelectionOptions>();
    auto t4 = std::make_shared<bool>(false);
    cmd->add_option("DIR", *dir, "the dataset folder to write")->required();
    addSelection(cmd, *o);
    cmd->add_flag("--t4", *t4, "also each session's tuner data as Kernel Tuner T4 JSON, in DIR/t4/");
    return [=]() {
        const auto s = openStore(o->db);
        const auto sessions = sessionsOf(s, *o);
        const auto secrets = secretsFrom(o->keyEnv);
        const auto summary = fieldformats::exportFlashInferTrace(s, sessions, *dir, { secrets, o->force });
        std::cout << "wrote " << summary.definitions.size() << " definition(s), " << summary.workloads << " workloads, "
                  << summary.solutions << " solutions, " << summary.traces << " traces to " << *dir;
        if (summary.skipped > 0)
            std::cout << " (" << summary.skipped
                      << " iterations judged no kernel: refused, steered, proposer failures)";
        std::cout << "\n";
        if (*t4)
            for (const auto id : sessions) {
                const auto file = std::filesystem::path(*dir) / "t4" / ("session-" + std::to_string(id) + ".json");
                const int n = fieldformats::exportKernelTuner(s, id, file, secrets, true);
                std::cout << "wrote " << n << " T4 results of session " << id << " to " << file.string() << "\n";
            }
        for (const auto& problem : summary.schemaProblems)
            std::cerr << "schema: " << problem << "\n";
        if (!summary.schemaProblems.empty()) {
            std::cerr << "error [trace.schema] " << summary.schemaProblems.size()
                      << " problem(s) against the FlashInfer Trace schema\n";
            return Failure;
        }
        std::cout << "schema check: passed\n";
        return Ok;
    };
});

const CommandRegistration checkTrace([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("check-trace", "Check a FlashInfer Trace dataset folder against the schema");
    auto dir = std::make_shared<std::string>();
    cmd->add_option("DIR", *dir, "the dataset folder")->required();
    return [=]() {
        if (!std::filesystem::is_directory(*dir))
            throw Error("trace.not-a-dataset", *dir, {}, "not a folder");
        const auto problems = fieldformats::checkTraceSet(*dir);
        for (const auto& problem : problems)
            std::cout << problem << "\n";
        std::cout << (problems.empty() ? "schema check: passed\n"
                                       : "schema check: " + std::to_string(problems.size()) + " problem(s)\n");
        return problems.empty() ? Ok : Failure;
    };
});

const CommandRegistration importTrace([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("import-trace",
        "Make a problem folder from a FlashInfer Trace definition and its workloads (its reference too)");
    auto source = std::make_shared<std::string>();
    auto o = std::make_shared<fieldformats::TraceImportOptions>();
    auto output = std::make_shared<std::string>();
    cmd->add_option("DIR", *source, "a FlashInfer Trace dataset folder, or a definition's .json in one")->required();
    cmd->add_option("--definition", o->definition, "which definition, when the dataset holds several");
    cmd->add_option("-o,--output", *output, "the problem folder to write (default: ./<definition name>)");
    cmd->add_flag("--force", o->overwrite, "write into a folder that is not empty");
    return [=]() {
        auto options = *o;
        options.output = *output;
        const auto imported = fieldformats::importFlashInferTrace(*source, options);
        for (const auto& note : imported.notes)
            std::cout << "note: " << note << "\n";
        std::cout << "wrote " << imported.problemFile.string() << " (definition " << imported.definition << ", "
                  << imported.mainSizes << " main and " << imported.fuzzSizes
                  << " fuzz sizes); next: kernelloop-cli check " << imported.problemFile.string() << "\n";
        return Ok;
    };
});

const CommandRegistration exportTrajectories([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("export-trajectories",
        "Write each iteration as a JSON line (prompts, kernel, diff, verdict, timings, findings, the engineer's "
        "decision) and preference pairs");
    auto file = std::make_shared<std::string>();
    auto o = std::make_shared<SelectionOptions>();
    cmd->add_option("FILE", *file, "the .jsonl file to write")->required();
    addSelection(cmd, *o);
    return [=]() {
        const auto s = openStore(o->db);
        const auto summary
            = fieldformats::exportTrajectories(s, sessionsOf(s, *o), *file, secretsFrom(o->keyEnv), o->force);
        std::cout << "wrote " << summary.iterations << " iterations of " << summary.sessions << " session(s) and "
                  << summary.preferencePairs << " preference pairs to " << *file << " (schema "
                  << fieldformats::kTrajectorySchema << " " << fieldformats::kTrajectoryVersion << ")\n";
        return Ok;
    };
});

const CommandRegistration exportT4([](CLI::App& app) -> std::function<int()> {
    auto* cmd = app.add_subcommand("export-t4", "Write a session's evaluations as Kernel Tuner T4 results JSON");
    auto file = std::make_shared<std::string>();
    auto o = std::make_shared<SelectionOptions>();
    cmd->add_option("FILE", *file, "the .json file to write")->required();
    addSelection(cmd, *o);
    return [=]() {
        const auto s = openStore(o->db);
        const auto sessions = sessionsOf(s, *o);
        if (sessions.size() != 1)
            throw Error("cli.one-session", *file, {}, "a T4 file holds one session: pass --session");
        const int n = fieldformats::exportKernelTuner(s, sessions.front(), *file, secretsFrom(o->keyEnv), o->force);
        std::cout << "wrote " << n << " T4 results of session " << sessions.front() << " to " << *file << "\n";
        return Ok;
    };
});

} // namespace

} // namespace kl::cli
