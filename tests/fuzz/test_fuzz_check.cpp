// The fuzz suite of issue 12: mutants of the bundled example problems and of their baselines'
// directives, each given to the real `kernelloop-cli check` as a process. Whatever the input, the
// command ends on its own (no signal, no hang) and answers in its exit code: 0 with no error line
// for the unmutated examples, 2 and a "[category]" for every bad input, never "[internal]".
// Bounded: a few dozen processes, eight at a time, in seconds. KL_FUZZ_CLI runs another binary
// (e.g. an older build, to see the suite fail on it).
#include "mutants.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <memory>

namespace fs = std::filesystem;
using kl::fuzz::Expect;
using kl::fuzz::Mutant;

namespace {

constexpr int kParallel = 8;
constexpr int kTimeoutMs = 30000; // far above any check; a FIFO that blocks hits it

QString cliPath()
{
    const QByteArray other = qgetenv("KL_FUZZ_CLI");
    return other.isEmpty() ? QStringLiteral(KL_CLI_PATH) : QString::fromLocal8Bit(other);
}

void write(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

QString readAll(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return QString::fromUtf8(QByteArray::fromStdString(std::string(std::istreambuf_iterator<char>(in), {})));
}

struct Running {
    const Mutant* mutant = nullptr;
    fs::path dir;
    std::unique_ptr<QProcess> process;
    QElapsedTimer clock;
};

// The error line (or the last line) of stderr, cut short: some inputs hold 26,000-character names.
QString gist(const QString& err)
{
    const auto lines = err.trimmed().split(QLatin1Char('\n'));
    QString line = lines.isEmpty() ? QString() : lines.last();
    for (const auto& l : lines)
        if (l.contains(QStringLiteral("error [")))
            line = l;
    return line.size() > 200 ? line.left(200) + QStringLiteral("...") : line;
}

// What is wrong with the answer to `m`, or empty.
QString judge(const Mutant& m, QProcess& p, bool timedOut, const QString& out, const QString& err)
{
    if (timedOut)
        return QStringLiteral("hung (killed after %1 s)").arg(kTimeoutMs / 1000);
    if (p.exitStatus() != QProcess::NormalExit)
        return QStringLiteral("ended by a signal: %1").arg(gist(err));
    const int code = p.exitCode();
    static const QRegularExpression categorised(QStringLiteral(R"(error \[([a-z0-9-]+\.[a-z0-9.-]+)\])"));
    const auto match = categorised.match(err);
    const QString category = match.hasMatch() ? match.captured(1) : QString();
    const bool errorLine = err.contains(QStringLiteral("error ["));
    if (err.contains(QStringLiteral("[internal]")))
        return QStringLiteral("exit %1 with [internal]: %2").arg(code).arg(gist(err));
    const QString expected = QString::fromStdString(m.category);
    switch (m.expect) {
    case Expect::Ok:
        if (code != 0 || errorLine || out.isEmpty())
            return QStringLiteral("expected exit 0 and a report, got exit %1: %2").arg(code).arg(gist(err));
        return {};
    case Expect::BadInput:
    case Expect::Failed: {
        const int want = m.expect == Expect::BadInput ? 2 : 1;
        if (code != want || !category.startsWith(expected))
            return QStringLiteral("expected exit %1 with [%2...], got exit %3: %4")
                .arg(want)
                .arg(expected)
                .arg(code)
                .arg(gist(err));
        return {};
    }
    case Expect::Categorised:
        if (code == 0 && errorLine)
            return QStringLiteral("exit 0 with an error line: %1").arg(gist(err));
        if (code == 2 && category.isEmpty())
            return QStringLiteral("exit 2 without a category: %1").arg(gist(err));
        if (code == 1 && !category.startsWith(QStringLiteral("compile.")))
            return QStringLiteral("exit 1 without a compile category: %1").arg(gist(err));
        if (code != 0 && code != 1 && code != 2)
            return QStringLiteral("exit %1: %2").arg(code).arg(gist(err));
        return {};
    }
    return {};
}

// Runs every mutant, kParallel at a time; returns one line per wrong answer.
QStringList runAll(const std::vector<Mutant>& mutants)
{
    QTemporaryDir root;
    QStringList failures;
    std::vector<std::unique_ptr<Running>> running;
    std::size_t next = 0;
    const auto start = [&](std::size_t index) {
        const Mutant& m = mutants[index];
        auto r = std::make_unique<Running>();
        r->mutant = &m;
        r->dir = fs::path(root.path().toStdString()) / std::to_string(index) / "problem";
        fs::create_directories(r->dir);
        const auto& example = m.problem;
        for (const char* key : { "reference", "baseline" })
            if (example.contains(key) && example[key].is_string()) {
                const std::string name = example[key];
                const auto source = m.exampleDir / name;
                if (name.find('\0') == std::string::npos && fs::exists(source))
                    fs::copy_file(source, r->dir / name, fs::copy_options::overwrite_existing);
            }
        write(r->dir / "problem.json", m.problemText.empty() ? m.problem.dump(2) : m.problemText);
        if (!m.baseline.empty()) {
            const std::string named = example.contains("baseline") && example["baseline"].is_string()
                ? example["baseline"].get<std::string>()
                : std::string();
            const bool plain
                = !named.empty() && named.find('\0') == std::string::npos && named.find('/') == std::string::npos;
            write(r->dir / (plain ? named : std::string("baseline.cu")), m.baseline);
        }
        fs::path target = r->dir / "problem.json";
        if (m.prepare)
            if (auto prepared = m.prepare(r->dir); !prepared.empty())
                target = prepared;
        QStringList arguments { QStringLiteral("check"), QString::fromStdString(target.string()) };
        for (auto a : m.arguments)
            arguments << a.replace(QStringLiteral("@DIR@"), QString::fromStdString(r->dir.string()));
        r->process = std::make_unique<QProcess>();
        r->process->setStandardOutputFile(QString::fromStdString((r->dir.parent_path() / "out.txt").string()));
        r->process->setStandardErrorFile(QString::fromStdString((r->dir.parent_path() / "err.txt").string()));
        r->process->start(cliPath(), arguments);
        r->clock.start();
        running.push_back(std::move(r));
    };
    while (next < mutants.size() || !running.empty()) {
        while (next < mutants.size() && running.size() < std::size_t(kParallel))
            start(next++);
        for (auto it = running.begin(); it != running.end();) {
            auto& r = **it;
            const bool done = r.process->waitForFinished(5) || r.process->state() == QProcess::NotRunning;
            const bool timedOut = !done && r.clock.elapsed() > kTimeoutMs;
            if (!done && !timedOut) {
                ++it;
                continue;
            }
            if (timedOut) {
                r.process->kill();
                r.process->waitForFinished(5000);
            }
            const auto out = readAll(r.dir.parent_path() / "out.txt");
            const auto err = readAll(r.dir.parent_path() / "err.txt");
            auto wrong = judge(*r.mutant, *r.process, timedOut, out, err);
            if (const auto ms = r.clock.elapsed(); wrong.isEmpty() && r.mutant->maxMs > 0 && ms > r.mutant->maxMs)
                wrong = QStringLiteral("answered after %1 ms (at most %2)").arg(ms).arg(r.mutant->maxMs);
            if (!wrong.isEmpty())
                failures << QString::fromStdString(r.mutant->name) + QStringLiteral(": ") + wrong;
            it = running.erase(it);
        }
    }
    return failures;
}

template <typename Generate> std::vector<Mutant> forEachExample(Generate generate)
{
    std::vector<Mutant> all;
    for (const auto& example : kl::fuzz::bundledExamples())
        for (auto& m : generate(example)) {
            m.exampleDir = example.dir;
            all.push_back(std::move(m));
        }
    return all;
}

void verifyAll(const std::vector<Mutant>& mutants)
{
    QVERIFY(!mutants.empty());
    const auto failures = runAll(mutants);
    for (const auto& f : failures)
        qWarning("%s", qPrintable(f));
    QVERIFY2(failures.isEmpty(),
        qPrintable(QStringLiteral("%1 of %2 mutants answered wrongly (listed above)")
                       .arg(failures.size())
                       .arg(mutants.size())));
}

} // namespace

class FuzzCheckTest : public QObject {
    Q_OBJECT

private slots:
    void unmutatedExamplesPass()
    {
        verifyAll(forEachExample([](const kl::fuzz::Example& e) {
            Mutant m;
            m.name = e.name + ": unmutated";
            m.expect = Expect::Ok;
            m.problem = e.problem;
            m.baseline = e.baseline;
            Mutant explicitCandidate = m;
            explicitCandidate.name += " with --candidate";
            explicitCandidate.arguments = { QStringLiteral("--candidate"), QStringLiteral("@DIR@/baseline.cu") };
            return std::vector<Mutant> { m, explicitCandidate };
        }));
    }

    void problemValues() { verifyAll(forEachExample(kl::fuzz::problemMutants)); }
    void directivesAndOptions() { verifyAll(forEachExample(kl::fuzz::directiveMutants)); }
    void filesThatAreNotFiles() { verifyAll(forEachExample(kl::fuzz::fileMutants)); }
    void limitsAndLaunchArguments() { verifyAll(forEachExample(kl::fuzz::limitMutants)); }

    // Random structural mutants: whatever they turn into, the answer is categorised.
    void randomMutants()
    {
        verifyAll(forEachExample([](const kl::fuzz::Example& e) { return kl::fuzz::randomMutants(e, 12, 16); }));
    }
};

QTEST_GUILESS_MAIN(FuzzCheckTest)
#include "test_fuzz_check.moc"
