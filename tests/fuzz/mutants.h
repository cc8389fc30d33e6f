#pragma once
// Mutants of a bundled example problem (resources/examples/*) and of its baseline's @kl
// directives, in the classes issue 12's fuzzing found: long names, values outside their dtype,
// expressions that mean nothing at some size set, files that are not files, directives that parse
// as something else. Each says what `kernelloop-cli check` must answer.
#include <nlohmann/json.hpp>

#include <QStringList>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kl::fuzz {

enum class Expect {
    Ok, // exit 0, no error line
    BadInput, // exit 2 with "error [category.name]"
    Failed, // exit 1 with "error [compile.…]": the candidate, not the input, is at fault
    Categorised, // random mutants: 0 without an error line, or 1/2 with a category; never [internal]
};

struct Mutant {
    std::string name;
    std::filesystem::path exampleDir; // where the reference and baseline are copied from
    Expect expect = Expect::BadInput;
    std::string category; // for BadInput/Failed: the category the error line must carry (a prefix)
    nlohmann::json problem; // written as problem.json unless `problemText` is set
    std::string problemText;
    std::string baseline; // the baseline's source, written as baseline.cu
    QStringList arguments; // after "check PROBLEM"
    int maxMs = 0; // when set: the answer must come within this many milliseconds
    // Builds what cannot be JSON (a FIFO, a symlink): gets the mutant's folder, returns the path to
    // give `check` (empty: the folder's problem.json).
    std::function<std::filesystem::path(const std::filesystem::path& dir)> prepare;
};

struct Example {
    std::string name; // "layernorm_gelu"
    std::filesystem::path dir;
    nlohmann::json problem;
    std::string baseline;
};

std::vector<Example> bundledExamples();

// The classes of the issue, each for `example`.
std::vector<Mutant> problemMutants(const Example& example);
std::vector<Mutant> directiveMutants(const Example& example);
std::vector<Mutant> fileMutants(const Example& example);
// Issue 23's classes: more size sets, tensors or expression text than a problem may hold, and launch
// arguments that `evaluate` would refuse (a value its type cannot hold, a type given to a tensor).
std::vector<Mutant> limitMutants(const Example& example);
// `count` random structural mutants of the JSON and of the directives, from `seed`.
std::vector<Mutant> randomMutants(const Example& example, std::uint32_t seed, int count);

} // namespace kl::fuzz
