// kernelloop-cli model, model-patch and model-check for real, with Debian's CPU PyTorch (/usr/bin/python3),
// on five model files of different kinds written for these tests in KernelBench's format
// (tests/fixtures/models: an MLP, a conv net with batch norm, a transformer block, an LSTM, a norm-heavy
// model). Each: a ranking labelled as an estimate, problem folders that load and that `check` accepts,
// whose references run on their own; a patch made from PyTorch-function winners (the CPU stand-in for
// kernels) applied, the patched model matching the original, and every kernel falling back, counted, when
// the batch differs. A wrong winner is caught; broken model files are refused with their category.
#include "core/model/problem.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>

namespace {

const char* kPython = "/usr/bin/python3";
const QString kRoot = QStringLiteral(KL_SOURCE_DIR);

bool hasTorch()
{
    return std::filesystem::exists(kPython)
        && std::system((std::string(kPython) + " -c 'import torch.fx' 2>/dev/null").c_str()) == 0;
}

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run run(const QString& program, const QStringList& arguments, const QString& python = QString::fromUtf8(kPython))
{
    QProcess process;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("KL_PYTHON"), python);
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    Run r;
    if (!process.waitForFinished(300000) || process.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = process.exitCode();
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

Run cli(const QStringList& arguments, const QString& python = QString::fromUtf8(kPython))
{
    return run(QStringLiteral(KL_CLI_PATH), arguments, python);
}

QByteArray readText(const QString& path)
{
    QFile in(path);
    return in.open(QIODevice::ReadOnly) ? in.readAll() : QByteArray();
}

void writeText(const QString& path, const QByteArray& text)
{
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(text);
}

QString fixture(const QString& name)
{
    return kRoot + QStringLiteral("/tests/fixtures/models/") + name + QStringLiteral(".py");
}

QStringList problemFolders(const QString& dir)
{
    QStringList folders;
    for (const auto& entry : QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (QFile::exists(dir + QLatin1Char('/') + entry + QStringLiteral("/problem.json")))
            folders << dir + QLatin1Char('/') + entry;
    return folders;
}

// Every calls/fallbacks line of model-check: (calls, fallbacks).
QList<QPair<int, int>> counts(const QString& out)
{
    QList<QPair<int, int>> found;
    static const QRegularExpression line(QStringLiteral("(\\d+) calls, (\\d+) fell back to PyTorch"));
    auto it = line.globalMatch(out);
    while (it.hasNext()) {
        const auto m = it.next();
        found.append({ m.captured(1).toInt(), m.captured(2).toInt() });
    }
    return found;
}

} // namespace

class TestModelCapture : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("needs PyTorch with torch.fx at /usr/bin/python3 (Debian's python3-torch)");
    }

    void wholeModel_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("method"); // how the graph must have been captured
        QTest::addColumn<QString>("kind"); // the kind of the costliest operator
        QTest::newRow("mlp") << QStringLiteral("mlp") << QStringLiteral("fx") << QStringLiteral("matmul");
        QTest::newRow("conv net") << QStringLiteral("conv_net") << QStringLiteral("fx") << QStringLiteral("conv");
        QTest::newRow("transformer block")
            << QStringLiteral("transformer_block") << QStringLiteral("fx-leaf-modules") << QString();
        QTest::newRow("lstm") << QStringLiteral("lstm") << QStringLiteral("module-hooks") << QStringLiteral("rnn");
        QTest::newRow("norm heavy") << QStringLiteral("norm_heavy") << QStringLiteral("fx") << QString();
    }

    // model -> ranking and problems -> check -> references on their own -> model-patch -> model-check, and
    // the guards falling back at another batch.
    void wholeModel()
    {
        QFETCH(QString, name);
        QFETCH(QString, method);
        QFETCH(QString, kind);
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QLatin1Char('/') + name;
        const auto captured = cli({ QStringLiteral("model"), fixture(name), QStringLiteral("-o"), dir });
        QVERIFY2(captured.exitCode == 0, qPrintable(captured.out + captured.err));
        QVERIFY(captured.out.contains(QStringLiteral("ranking (estimate, not measured)")));
        QVERIFY(captured.out.contains(QStringLiteral("capture: ") + method + QStringLiteral(" (")));
        QVERIFY(readText(dir + QStringLiteral("/ranking.txt")).contains("estimate, not measured"));

        const auto model = nlohmann::json::parse(readText(dir + QStringLiteral("/model.json")).toStdString());
        QCOMPARE(QString::fromStdString(model["capture"]["method"].get<std::string>()), method);
        QCOMPARE(model["ranking"]["measured"].get<bool>(), false);
        QCOMPARE(QString::fromStdString(model["ranking"]["label"].get<std::string>()),
            QStringLiteral("estimate, not measured"));
        const auto& rows = model["ranking"]["rows"];
        QVERIFY(!rows.empty());
        double shares = 0.0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            shares += rows[i]["share"].get<double>();
            if (i > 0) // the costliest first
                QVERIFY(rows[i - 1]["time_us"].get<double>() >= rows[i]["time_us"].get<double>());
        }
        QVERIFY(std::abs(shares - 1.0) < 1e-6);
        if (!kind.isEmpty())
            QCOMPARE(QString::fromStdString(rows[0]["kind"].get<std::string>()), kind);

        const auto folders = problemFolders(dir);
        QVERIFY(!folders.isEmpty());
        QCOMPARE(int(model["problems"].size()), int(folders.size()));
        double covered = 0.0;
        for (const auto& p : model["problems"])
            covered += p["share"].get<double>();
        QVERIFY2(covered >= 0.5, qPrintable(QString::number(covered))); // the default chooses the hot ones
        for (const auto& folder : folders) {
            const auto problem = kl::loadProblem((folder + QStringLiteral("/problem.json")).toStdString());
            QVERIFY(problem.pythonReference.has_value());
            QCOMPARE(problem.mainSizes.size(), std::size_t(1));
            QVERIFY(problem.bytes(problem.mainSizes.front()) > 0);
            const auto checked = cli({ QStringLiteral("check"), folder + QStringLiteral("/problem.json") });
            QVERIFY2(checked.exitCode == 0, qPrintable(checked.out + checked.err));
            const auto alone = run(QString::fromUtf8(kPython),
                { kRoot + QStringLiteral("/tests/model_capture/run_reference.py"), folder });
            QVERIFY2(alone.exitCode == 0 && alone.out.startsWith(QStringLiteral("ok ")),
                qPrintable(folder + QStringLiteral(": ") + alone.out + alone.err));
            // The CPU stand-in for a winning kernel: the problem's own reference under the name kernel.
            writeText(folder + QStringLiteral("/winner.py"),
                readText(folder + QStringLiteral("/reference.py")) + "\n\nkernel = reference\n");
        }

        const QString patch = tmp.path() + QStringLiteral("/patch.py");
        const auto patched = cli({ QStringLiteral("model-patch"), dir, QStringLiteral("-o"), patch });
        QVERIFY2(patched.exitCode == 0, qPrintable(patched.out + patched.err));
        QVERIFY(patched.out.contains(QStringLiteral("pytorch-function")));
        QVERIFY(readText(patch).contains("torch.library"));

        const auto same = cli({ QStringLiteral("model-check"), fixture(name), QStringLiteral("--patch"), patch,
            QStringLiteral("--repeats"), QStringLiteral("2") });
        QVERIFY2(same.exitCode == 0, qPrintable(same.out + same.err));
        QVERIFY(same.out.contains(QStringLiteral("matches the original")));
        QVERIFY(same.out.contains(QStringLiteral("CPU call time")));
        QVERIFY(same.out.contains(QStringLiteral("not a GPU figure")));
        QVERIFY(same.out.contains(QStringLiteral("torch.library.Library")));
        QVERIFY(!same.out.contains(QStringLiteral("not applied")));
        const auto used = counts(same.out);
        QVERIFY(!used.isEmpty());
        for (const auto& [calls, fallbacks] : used) {
            QVERIFY(calls > 0);
            QCOMPARE(fallbacks, 0); // at the verified shapes every call is the kernel's
        }

        const auto other = cli({ QStringLiteral("model-check"), fixture(name), QStringLiteral("--patch"), patch,
            QStringLiteral("--batch"), QStringLiteral("3"), QStringLiteral("--repeats"), QStringLiteral("1") });
        QVERIFY2(other.exitCode == 0, qPrintable(other.out + other.err));
        QVERIFY(other.out.contains(QStringLiteral("matches the original")));
        QVERIFY(other.out.contains(QStringLiteral("verified for")));
        for (const auto& [calls, fallbacks] : counts(other.out)) {
            QVERIFY(calls > 0);
            QCOMPARE(fallbacks, calls); // another batch: the guard sends every call to PyTorch
        }
    }

    // A fusion candidate with a winner written by hand (Linear + GELU as addmm then gelu), and one that is
    // wrong (the GELU left out): the first matches, the second is caught.
    void handWrittenWinners()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QStringLiteral("/mlp");
        QCOMPARE(
            cli({ QStringLiteral("model"), fixture(QStringLiteral("mlp")), QStringLiteral("-o"), dir }).exitCode, 0);
        const auto model = nlohmann::json::parse(readText(dir + QStringLiteral("/model.json")).toStdString());
        const auto& first = model["problems"][0];
        QVERIFY(first["fused"].get<bool>());
        QCOMPARE(first["inputs"].size(), std::size_t(3));
        const QString folder = dir + QLatin1Char('/') + QString::fromStdString(first["name"].get<std::string>());
        QStringList names;
        for (const auto& i : first["inputs"])
            names << QString::fromStdString(i["name"].get<std::string>());
        const QByteArray signature = names.join(QStringLiteral(", ")).toUtf8();
        const QByteArray x = names[0].toUtf8(), w = names[1].toUtf8(), b = names[2].toUtf8();
        const QString patch = tmp.path() + QStringLiteral("/patch.py");
        const auto check = [&] {
            return cli({ QStringLiteral("model-check"), fixture(QStringLiteral("mlp")), QStringLiteral("--patch"),
                patch, QStringLiteral("--repeats"), QStringLiteral("1") });
        };
        writeText(folder + QStringLiteral("/winner.py"),
            "import torch\nimport torch.nn.functional as F\n\n\ndef kernel(" + signature
                + "):\n    return F.gelu(torch.addmm(" + b + ", " + x + ", " + w + ".t()))\n");
        QCOMPARE(cli({ QStringLiteral("model-patch"), dir, QStringLiteral("-o"), patch }).exitCode, 0);
        const auto good = check();
        QVERIFY2(good.exitCode == 0 && good.out.contains(QStringLiteral("matches the original")), qPrintable(good.out));
        QVERIFY(good.out.contains(QStringLiteral("expected")));

        writeText(folder + QStringLiteral("/winner.py"),
            "import torch\n\n\ndef kernel(" + signature + "):\n    return torch.addmm(" + b + ", " + x + ", " + w
                + ".t())\n");
        QCOMPARE(cli({ QStringLiteral("model-patch"), dir, QStringLiteral("-o"), patch, QStringLiteral("--force") })
                     .exitCode,
            0);
        const auto bad = check();
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.out.contains(QStringLiteral("DOES NOT MATCH")), qPrintable(bad.out));
    }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<QString>("category");
        QTest::newRow("syntax error") << QByteArray("import torch\nclass Model(torch.nn.Module:\n")
                                      << QStringLiteral("model.syntax-error");
        QTest::newRow("raises at import")
            << QByteArray("raise ValueError('no')\n") << QStringLiteral("model.import-failed");
        QTest::newRow("no model") << QByteArray("import torch\ndef get_inputs():\n    return [torch.ones(2)]\n")
                                  << QStringLiteral("model.no-model");
        QTest::newRow("no inputs") << QByteArray(
            "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
            "        return x\n") << QStringLiteral("model.no-inputs");
        QTest::newRow("forward fails") << QByteArray(
            "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x @ x\n"
            "def get_inputs():\n    return [torch.ones(2, 3)]\n")
                                       << QStringLiteral("model.forward-failed");
        QTest::newRow("init fails") << QByteArray(
            "import torch\nclass Model(torch.nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        raise RuntimeError('broken')\n"
            "def get_inputs():\n    return [torch.ones(2)]\n")
                                    << QStringLiteral("model.init-failed");
        QTest::newRow("bad inputs") << QByteArray(
            "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
            "        return x\ndef get_inputs():\n    return [object()]\n")
                                    << QStringLiteral("model.bad-inputs");
    }

    void refusals()
    {
        QFETCH(QByteArray, source);
        QFETCH(QString, category);
        QTemporaryDir tmp;
        const QString file = tmp.path() + QStringLiteral("/broken.py");
        writeText(file, source);
        const auto r
            = cli({ QStringLiteral("model"), file, QStringLiteral("-o"), tmp.path() + QStringLiteral("/out") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("[") + category + QStringLiteral("]")), qPrintable(r.err));
    }

    void refusalsOfTheOtherCommands()
    {
        QTemporaryDir tmp;
        auto r = cli({ QStringLiteral("model"), tmp.path() + QStringLiteral("/none.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("[model.no-file]")));
        r = cli(
            { QStringLiteral("model-patch"), tmp.path(), QStringLiteral("-o"), tmp.path() + QStringLiteral("/p.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("[model.not-a-model-folder]")));
        r = cli({ QStringLiteral("model-check"), fixture(QStringLiteral("mlp")), QStringLiteral("--patch"),
            tmp.path() + QStringLiteral("/p.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("[model.no-patch]")));
        // A captured model whose problems have no winners yet.
        const QString dir = tmp.path() + QStringLiteral("/mlp");
        QCOMPARE(
            cli({ QStringLiteral("model"), fixture(QStringLiteral("mlp")), QStringLiteral("-o"), dir }).exitCode, 0);
        r = cli({ QStringLiteral("model"), fixture(QStringLiteral("mlp")), QStringLiteral("-o"), dir });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("[model.exists]")));
        r = cli({ QStringLiteral("model-patch"), dir, QStringLiteral("-o"), tmp.path() + QStringLiteral("/p.py") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains(QStringLiteral("[model.no-winners]")));
        // A Python that cannot import torch (site-packages off).
        const QString python = tmp.path() + QStringLiteral("/python-without-torch");
        writeText(python, "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
        QFile::setPermissions(python, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        r = cli({ QStringLiteral("model"), fixture(QStringLiteral("mlp")), QStringLiteral("-o"),
                    tmp.path() + QStringLiteral("/x") },
            python);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("[model.missing-package]")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestModelCapture)
#include "test_model_capture.moc"
