#include "core/field_formats/stored_problem.h"

#include "core/model/error.h"
#include "core/model/hash.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

namespace kl::fieldformats {

SourceNames sourceNames(const std::string& problemJson)
{
    SourceNames names;
    const auto json = nlohmann::json::parse(problemJson, nullptr, false);
    if (!json.is_object())
        return names;
    if (const auto r = json.find("reference"); r != json.end() && r->is_string())
        names.reference = r->get<std::string>();
    if (const auto b = json.find("baseline"); b != json.end() && b->is_string() && b->get<std::string>() != "eager")
        names.baseline = b->get<std::string>();
    return names;
}

namespace {

void writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        throw Error("store.problem-unreadable", path.string(), {}, "cannot write a scratch copy of the problem");
}

// A private folder for the scratch copy: loadProblem reads files, and the record holds texts.
std::filesystem::path scratchFolder(const std::string& hash)
{
    std::random_device random;
    const auto dir = std::filesystem::temp_directory_path()
        / ("kl-problem-" + hash.substr(0, 12) + "-" + std::to_string(random()) + std::to_string(random()));
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
    return dir;
}

} // namespace

Problem storedProblem(const store::ProblemRecord& record)
{
    const auto names = sourceNames(record.json);
    const auto dir = scratchFolder(record.hash.empty() ? contentHash(record.json) : record.hash);
    struct Cleanup {
        std::filesystem::path dir;
        ~Cleanup()
        {
            std::error_code ignored;
            std::filesystem::remove_all(dir, ignored);
        }
    } cleanup { dir };
    writeText(dir / "problem.json", record.json);
    // Only plain names: a stored problem was checked when it was loaded, so its files sit in its folder.
    const auto inside = [](const std::string& name) {
        return !name.empty() && std::filesystem::path(name).is_relative() && name.find("..") == std::string::npos;
    };
    if (inside(names.reference)) {
        std::filesystem::create_directories((dir / names.reference).parent_path());
        writeText(dir / names.reference, record.referenceSource);
    }
    if (inside(names.baseline)) {
        std::filesystem::create_directories((dir / names.baseline).parent_path());
        writeText(dir / names.baseline, record.baselineSource);
    }
    try {
        return loadProblem(dir / "problem.json");
    } catch (const Error& e) {
        throw Error("store.problem-unreadable", record.name, e.where(),
            "the stored problem does not load: [" + e.category() + "] " + e.message());
    }
}

} // namespace kl::fieldformats
