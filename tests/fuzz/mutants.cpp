#include "mutants.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>

namespace kl::fuzz {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kLongName(26000, 'n');

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

Mutant problemMutant(const Example& e, std::string name, const std::string& category, std::function<void(json&)> change)
{
    Mutant m;
    m.name = e.name + ": " + name;
    m.category = category;
    m.problem = e.problem;
    change(m.problem);
    m.baseline = e.baseline;
    return m;
}

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

std::string joined(const std::vector<std::string>& list)
{
    std::string text;
    for (const auto& l : list)
        text += l + "\n";
    return text;
}

std::size_t firstDirective(const std::vector<std::string>& source, const std::string& keyword)
{
    for (std::size_t i = 0; i < source.size(); ++i)
        if (source[i].find("// @kl " + keyword) != std::string::npos)
            return i;
    return source.size();
}

// The word after "// @kl KEYWORD " on that line.
std::string wordAfter(const std::string& line, const std::string& keyword)
{
    const auto at = line.find("@kl " + keyword + " ");
    std::istringstream in(line.substr(at + 5 + keyword.size()));
    std::string word;
    in >> word;
    return word;
}

Mutant directiveMutant(const Example& e, std::string name, const std::string& category,
    std::function<void(std::vector<std::string>&)> change)
{
    Mutant m;
    m.name = e.name + ": " + name;
    m.category = category;
    m.problem = e.problem;
    auto source = lines(e.baseline);
    change(source);
    m.baseline = joined(source);
    return m;
}

// Adds a directive line before the first one.
std::function<void(std::vector<std::string>&)> adding(const std::string& directive)
{
    return [directive](std::vector<std::string>& source) {
        source.insert(source.begin() + static_cast<long>(firstDirective(source, "")), "// @kl " + directive);
    };
}

std::string firstTunable(const Example& e)
{
    const auto source = lines(e.baseline);
    const auto at = firstDirective(source, "tunable");
    return at < source.size() ? wordAfter(source[at], "tunable") : std::string("THREADS");
}

} // namespace

std::vector<Example> bundledExamples()
{
    std::vector<Example> examples;
    for (const auto& entry : fs::directory_iterator(fs::path(KL_SOURCE_DIR) / "resources/examples")) {
        if (!fs::exists(entry.path() / "problem.json"))
            continue;
        Example e;
        e.name = entry.path().filename().string();
        e.dir = entry.path();
        e.problem = json::parse(readText(entry.path() / "problem.json"));
        // CUDA C++ baselines only: the directive mutants write C++, and a Triton baseline needs
        // Python and Triton, which a CI machine may lack.
        if (fs::path(e.problem.value("baseline", "")).extension() != ".cu")
            continue;
        e.baseline = readText(entry.path() / e.problem["baseline"].get<std::string>());
        examples.push_back(std::move(e));
    }
    std::sort(examples.begin(), examples.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return examples;
}

std::vector<Mutant> problemMutants(const Example& e)
{
    std::vector<Mutant> out;
    const auto add = [&](std::string name, const std::string& category, std::function<void(json&)> change) {
        out.push_back(problemMutant(e, std::move(name), category, std::move(change)));
    };
    const auto scalar = [](const char* dtype, double value) {
        return [dtype, value](json& j) {
            j["scalars"].push_back({ { "name", "fuzz_s" }, { "dtype", dtype }, { "value", value } });
        };
    };
    const std::string symbol = e.problem["sizes"]["symbols"][0];
    add("long input name", "problem.bad-name", [](json& j) { j["inputs"][0]["name"] = kLongName; });
    add("long output name", "problem.bad-name", [](json& j) { j["outputs"][0]["name"] = kLongName; });
    add("long size symbol", "problem.bad-name", [](json& j) { j["sizes"]["symbols"][0] = kLongName; });
    add("long scalar name", "problem.bad-name", [](json& j) {
        j["scalars"].push_back({ { "name", kLongName }, { "dtype", "f32" }, { "value", 1 } });
    });
    add("i8 scalar 300", "problem.bad-scalar", scalar("i8", 300));
    add("i32 scalar 1e308", "problem.bad-scalar", scalar("i32", 1e308));
    add("i32 scalar 1.5", "problem.bad-scalar", scalar("i32", 1.5));
    add("integers 1.5..1e20", "problem.bad-distribution", [](json& j) {
        j["inputs"][0]["distribution"] = { { "kind", "integers" }, { "low", 1.5 }, { "high", 1e20 } };
    });
    add("duplicate size symbol", "problem.duplicate",
        [](json& j) { j["sizes"]["symbols"].push_back(j["sizes"]["symbols"][0]); });
    add("shape as one string", "expression.syntax", [](json& j) {
        std::string shape;
        for (const auto& d : j["inputs"][0]["shape"])
            shape += (shape.empty() ? "" : ",") + d.get<std::string>();
        j["inputs"][0]["shape"] = { shape };
    });
    add("bytes 1/0", "problem.bad-bytes", [](json& j) { j["bytes"] = "1/0"; });
    add("bytes 0", "problem.bad-bytes", [](json& j) { j["bytes"] = "0"; });
    add("bytes -1", "problem.bad-bytes", [](json& j) { j["bytes"] = -1; });
    add("flops -1", "problem.bad-flops", [](json& j) { j["flops"] = "-1"; });
    add("row_padding -8", "problem.bad-padding", [](json& j) { j["inputs"][0]["row_padding"] = "-8"; });
    add("row_padding 0.5", "problem.bad-padding", [](json& j) { j["inputs"][0]["row_padding"] = 0.5; });
    add("zero dimension", "problem.bad-shape", [](json& j) { j["outputs"][0]["shape"][0] = "0"; });
    add("fuzz size 2^63-1", "problem.bad-size", [symbol](json& j) {
        auto set = j["sizes"]["main"][0];
        set.erase("label");
        set[symbol] = std::int64_t(9223372036854775807);
        j["sizes"]["fuzz"].push_back(set);
    });
    add("assignment as size constraint", "expression.syntax",
        [symbol](json& j) { j["sizes"]["constraints"] = { symbol + " = 1" }; });
    Mutant tooLarge = problemMutant(e, "bytes 1e400", "problem.bad-json", [](json& j) { j["bytes"] = 12345.5; });
    tooLarge.problemText = tooLarge.problem.dump(2);
    tooLarge.problemText.replace(tooLarge.problemText.find("12345.5"), 7, "1e400");
    out.push_back(tooLarge);
    add("NUL in the reference path", "problem.bad-path",
        [](json& j) { j["reference"] = j["reference"].get<std::string>() + std::string("\0.txt", 5); });
    return out;
}

std::vector<Mutant> directiveMutants(const Example& e)
{
    std::vector<Mutant> out;
    const auto add
        = [&](std::string name, const std::string& category, std::function<void(std::vector<std::string>&)> change) {
              out.push_back(directiveMutant(e, std::move(name), category, std::move(change)));
          };
    const auto tunable = firstTunable(e);
    add("long tunable name", "candidate.bad-name", adding("tunable " + kLongName + " = 1 in 1"));
    add("long scratch name", "candidate.bad-name", adding("scratch " + kLongName + " f32 [4]"));
    add("long kernel name", "candidate.bad-name", [](std::vector<std::string>& source) {
        auto& line = source[firstDirective(source, "launch")];
        const auto kernel = wordAfter(line, "launch");
        line.replace(line.find(kernel), kernel.size(), kLongName);
    });
    add("assignment as constraint", "expression.syntax", adding("constraint " + tunable + " = 5"));
    add("range of 100,001 values", "candidate.bad-tunable", adding("tunable FUZZ_R = 0 in 0..100000"));
    add("scratch [0]", "candidate.bad-scratch", adding("scratch fuzz_zero f32 [0]"));
    add("scratch named like a tunable", "candidate.duplicate", adding("scratch " + tunable + " f32 [4]"));
    add("tunable __CUDA_ARCH__", "candidate.reserved-name", adding("tunable __CUDA_ARCH__ = 1 in 1"));
    add("tunable with a leading __", "candidate.reserved-name", adding("tunable __fuzz = 1 in 1"));
    add("tunable named int", "candidate.reserved-name", adding("tunable int = 1 in 1"));
    add("one launch argument too few", "plan.args-mismatch", [](std::vector<std::string>& source) {
        auto& line = source[firstDirective(source, "launch")];
        const auto close = line.rfind(')');
        const auto comma = line.rfind(',', close);
        line.erase(comma, close - comma);
    });
    Mutant smem = directiveMutant(
        e, "300 KiB of dynamic shared memory", "compile.too-many-resources", [](std::vector<std::string>& source) {
            auto& line = source[firstDirective(source, "launch")];
            if (const auto at = line.find("smem=("); at != std::string::npos)
                line.erase(at, line.find(')', at) - at + 1);
            line.insert(line.find("args=("), "smem=(300 * 1024) ");
        });
    smem.expect = Expect::Failed;
    out.push_back(smem);
    // The compiler echoes the source line: its log reaches the regexes with a 400,000-character line.
    Mutant identifier = directiveMutant(e, "400,000-character identifier in the source",
        "compile.undeclared-identifier", [](std::vector<std::string>& source) {
            source.push_back("__device__ int fuzz_long() { return " + std::string(400000, 'q') + "; }");
        });
    identifier.expect = Expect::Failed;
    out.push_back(identifier);
    const auto option = [&](std::string name, const std::string& category, QStringList arguments) {
        Mutant m = directiveMutant(e, std::move(name), category, [](std::vector<std::string>&) {});
        m.arguments = std::move(arguments);
        out.push_back(m);
    };
    option("--arch ''", "cli.bad-option", { QStringLiteral("--arch"), QString() });
    option(
        "--arch sm_99999999999", "device.unknown-arch", { QStringLiteral("--arch"), QStringLiteral("sm_99999999999") });
    option("--candidate ''", "cli.bad-option", { QStringLiteral("--candidate"), QString() });
    option("--set 20 digits", "cli.bad-set",
        { QStringLiteral("--set"), QString::fromStdString(tunable) + QStringLiteral("=99999999999999999999") });
    option("--set long name", "cli.bad-set",
        { QStringLiteral("--set"), QString::fromStdString(kLongName) + QStringLiteral("=1") });
    return out;
}

std::vector<Mutant> limitMutants(const Example& e)
{
    std::vector<Mutant> out;
    const std::string symbol = e.problem["sizes"]["symbols"][0];
    // 100,000 fuzz sets (3.8 MB): refused at once, not checked for minutes.
    Mutant sizes = problemMutant(e, "100,000 fuzz size sets", "problem.too-many-sizes", [](json& j) {
        auto set = j["sizes"]["main"][0];
        set.erase("label");
        j["sizes"]["fuzz"] = json::array();
        for (int i = 0; i < 100000; ++i)
            j["sizes"]["fuzz"].push_back(set);
    });
    sizes.problemText = sizes.problem.dump(); // compact: 3.8 MB, under the 4 MiB a problem file may have
    // The refusal itself is the check (category above). The bound only catches a return of the old
    // behaviour (252 s of checking every size): parsing 3.8 MB is ~0.3 s alone, and under a loaded 2-core
    // CI the answer took 2.1-2.4 s, so 2 s made the test depend on the machine.
    sizes.maxMs = 15000;
    out.push_back(std::move(sizes));
    out.push_back(problemMutant(e, "100 inputs", "problem.too-many-tensors", [](json& j) {
        for (int i = 0; i < 100; ++i) {
            auto input = j["inputs"][0];
            input["name"] = "fuzz_in" + std::to_string(i);
            j["inputs"].push_back(input);
        }
    }));
    out.push_back(problemMutant(e, "100 scalars", "problem.too-many-scalars", [](json& j) {
        for (int i = 0; i < 100; ++i)
            j["scalars"].push_back({ { "name", "fuzz_s" + std::to_string(i) }, { "dtype", "f32" }, { "value", 1 } });
    }));
    out.push_back(problemMutant(e, "8,000-character bytes expression", "expression.too-long", [symbol](json& j) {
        std::string text = symbol;
        while (text.size() < 8000)
            text += " + " + symbol;
        j["bytes"] = text;
    }));

    // The launch arguments: the first size symbol, scalar and tensor the first launch passes.
    const auto launchArg
        = [&](std::string name, const std::string& category, const std::function<bool(const std::string&)>& which,
              const std::function<std::string(const std::string&)>& replacement) {
              const auto source = lines(e.baseline);
              const auto& line = source[firstDirective(source, "launch")];
              const auto open = line.find("args=(") + 6;
              std::istringstream args(line.substr(open, line.find(')', open) - open));
              for (std::string arg; std::getline(args, arg, ',');) {
                  arg.erase(0, arg.find_first_not_of(' '));
                  if (!which(arg))
                      continue;
                  out.push_back(
                      directiveMutant(e, std::move(name), category, [arg, replacement](std::vector<std::string>& s) {
                          auto& l = s[firstDirective(s, "launch")];
                          // The argument as a whole list entry: after "(" or " ", before "," or ")".
                          for (auto at = l.find(arg, l.find("args=(") + 6); at != std::string::npos;
                               at = l.find(arg, at + 1)) {
                              const char before = l[at - 1];
                              const char after = at + arg.size() < l.size() ? l[at + arg.size()] : ')';
                              if ((before == '(' || before == ' ') && (after == ',' || after == ')')) {
                                  l.replace(at, arg.size(), replacement(arg));
                                  return;
                              }
                          }
                      }));
                  return;
              }
          };
    const auto named = [&](const char* list) {
        return [&e, list](const std::string& arg) {
            for (const auto& item : e.problem.value(list, json::array()))
                if (item.value("name", "") == arg)
                    return true;
            return false;
        };
    };
    const auto isSymbol = [&e](const std::string& arg) {
        for (const auto& s : e.problem["sizes"]["symbols"])
            if (s == arg)
                return true;
        return false;
    };
    launchArg("size argument 2^40", "protocol.bad-arg", isSymbol, [](const std::string&) { return "2^40"; });
    launchArg("size argument 1e-5", "protocol.bad-arg", isSymbol, [](const std::string&) { return "1e-5"; });
    launchArg("scalar argument as i32", "protocol.bad-arg", named("scalars"),
        [](const std::string& arg) { return arg + " as i32"; });
    launchArg("tensor argument as f32", "plan.bad-arg", named("inputs"),
        [](const std::string& arg) { return arg + " as f32"; });
    return out;
}

std::vector<Mutant> fileMutants(const Example& e)
{
    std::vector<Mutant> out;
    const auto add = [&](std::string name, const std::string& category, QStringList arguments,
                         std::function<fs::path(const fs::path&)> prepare) {
        Mutant m;
        m.name = e.name + ": " + name;
        m.category = category;
        m.problem = e.problem;
        m.baseline = e.baseline;
        m.arguments = std::move(arguments);
        m.prepare = std::move(prepare);
        out.push_back(std::move(m));
    };
    add("problem is a FIFO", "problem.not-a-file", {}, [](const fs::path& dir) {
        ::mkfifo((dir / "problem.fifo").c_str(), 0600);
        return dir / "problem.fifo";
    });
    add("problem is /dev/zero", "problem.not-a-file", {}, [](const fs::path&) { return fs::path("/dev/zero"); });
    add("problem is a folder", "problem.not-a-file", {}, [](const fs::path& dir) { return dir; });
    add("problem is a symlink loop", "problem.unreadable", {}, [](const fs::path& dir) {
        fs::create_symlink(dir / "loop_b", dir / "loop_a");
        fs::create_symlink(dir / "loop_a", dir / "loop_b");
        return dir / "loop_a";
    });
    add("problem name too long", "problem.unreadable", {},
        [](const fs::path& dir) { return dir / (std::string(300, 'p') + ".json"); });
    add("candidate is a FIFO", "candidate.not-a-file",
        { QStringLiteral("--candidate"), QStringLiteral("@DIR@/c.fifo") }, [](const fs::path& dir) {
            ::mkfifo((dir / "c.fifo").c_str(), 0600);
            return fs::path();
        });
    add("candidate is /dev/zero", "candidate.not-a-file",
        { QStringLiteral("--candidate"), QStringLiteral("/dev/zero") }, nullptr);
    for (const char* key : { "reference", "baseline" }) {
        const std::string file = e.problem[key];
        add(std::string(key) + " symlinked outside the folder", "problem.path-outside", {},
            [file](const fs::path& dir) {
                const auto outside = dir.parent_path() / ("outside_" + file);
                fs::rename(dir / file, outside);
                fs::create_symlink(outside, dir / file);
                return fs::path();
            });
    }
    return out;
}

std::vector<Mutant> randomMutants(const Example& e, std::uint32_t seed, int count)
{
    std::mt19937 random(seed);
    const auto pick = [&random](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
    const json flat = e.problem.flatten();
    std::vector<std::string> pointers;
    for (const auto& [pointer, value] : flat.items())
        pointers.push_back(pointer);
    const std::vector<json> values { nullptr, "", kLongName, -1, 0, 1.5, 1e308, std::int64_t(9223372036854775807), true,
        json::array(), json::object(), "M,N", "1/0", "x = 1" };
    std::vector<Mutant> out;
    for (int i = 0; i < count; ++i) {
        Mutant m;
        m.expect = Expect::Categorised;
        m.baseline = e.baseline;
        if (i % 2 == 0) { // a field of the problem
            m.problem = e.problem;
            const json::json_pointer pointer(pointers[pick(pointers.size())]);
            const std::size_t op = pick(values.size() + 1);
            if (op == values.size()) {
                auto& parent = m.problem[pointer.parent_pointer()];
                if (parent.is_object())
                    parent.erase(pointer.back());
                else
                    parent.erase(static_cast<std::size_t>(std::stoul(pointer.back())));
            } else {
                m.problem[pointer] = values[op];
            }
            m.name = e.name + ": random #" + std::to_string(i) + " " + pointer.to_string();
        } else { // a directive of the baseline
            m.problem = e.problem;
            auto source = lines(e.baseline);
            std::vector<std::size_t> directives;
            for (std::size_t l = 0; l < source.size(); ++l)
                if (source[l].find("// @kl ") != std::string::npos)
                    directives.push_back(l);
            auto& line = source[directives[pick(directives.size())]];
            const auto at = line.find("@kl") + 4 + pick(line.size() - line.find("@kl") - 4);
            static const std::vector<std::string> inserts { "=", ",", "(", ")", "..", " as i64", "99999999999999999999",
                "-1", "0", kLongName, "__CUDA_ARCH__", " zero", "[0]" };
            const std::size_t op = pick(inserts.size() + 2);
            if (op == inserts.size())
                line.erase(at); // truncated
            else if (op == inserts.size() + 1)
                line.erase(at, 1);
            else
                line.insert(at, inserts[op]);
            m.name = e.name + ": random #" + std::to_string(i) + " directive";
            m.baseline = joined(source);
        }
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace kl::fuzz
