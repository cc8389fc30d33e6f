// import-kernelbench on programs it cannot turn into a problem: each is refused with exit 2 and
// its own category (a syntax error, an import that raises or loops forever, a missing package, no Model,
// no get_inputs, random draws in forward, a data-dependent output shape, state drawn in __init__, inputs
// that are no tensors, shapes no global sets), and a Python without PyTorch says so. Bool masks, 0-d
// tensors and outputs no size rule covers import now (test_kernelbench_operators).
#include "kernelbench_cli.h"

#include <QTemporaryDir>
#include <QTest>

using namespace kbtest;

namespace {

// A valid problem with `forward` and the sizes swapped in.
QByteArray problemWith(const QByteArray& forward, const QByteArray& inputs = "torch.randn(batch_size, dim)")
{
    return "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n\n    def forward(self, x, *rest):\n        "
        + forward + "\n\n\nbatch_size = 8\ndim = 64\n\n\ndef get_inputs():\n    return [" + inputs
        + "]\n\n\ndef get_init_inputs():\n    return []\n";
}

} // namespace

class TestKernelBenchRefusals : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch)");
    }

    void refused_data()
    {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("says");
        QTest::newRow("syntax error") << problemWith("return x +* 2") << QStringLiteral("syntax-error")
                                      << QStringLiteral(":10:");
        QTest::newRow("import raises") << QByteArray("import torch\nraise ValueError('broken at import')\n")
                                       << QStringLiteral("import-error") << QStringLiteral("broken at import");
        QTest::newRow("missing package") << QByteArray("import torch\nimport no_such_module_kl\n")
                                         << QStringLiteral("needs-package")
                                         << QStringLiteral("needs the Python package no_such_module_kl");
        QTest::newRow("exits at import") << QByteArray("import sys\nsys.exit(3)\n") << QStringLiteral("import-error")
                                         << QStringLiteral("SystemExit");
        QTest::newRow("no Model") << QByteArray("import torch\n\n\ndef get_inputs():\n    return [torch.randn(4)]\n")
                                  << QStringLiteral("no-model") << QStringLiteral("Model");
        QTest::newRow("Model is no module")
            << QByteArray("class Model:\n    pass\n\n\ndef get_inputs():\n    return []\n")
            << QStringLiteral("no-model") << QStringLiteral("torch.nn.Module");
        QTest::newRow("no get_inputs") << problemWith("return x").replace("def get_inputs", "def make_inputs")
                                       << QStringLiteral("no-get-inputs") << QStringLiteral("get_inputs()");
        QTest::newRow("dropout") << problemWith("return torch.nn.functional.dropout(x, 0.5, training=True)")
                                 << QStringLiteral("random-ops") << QStringLiteral("dropout");
        QTest::newRow("rand_like") << problemWith("return x + torch.rand_like(x)") << QStringLiteral("random-ops")
                                   << QStringLiteral("rand_like");
        QTest::newRow("data-dependent shape")
            << problemWith("return x[x > 0]") << QStringLiteral("data-dependent-shape")
            << QStringLiteral("input values");
        QTest::newRow("not a tensor out")
            << problemWith("return [x.sum().item()]") << QStringLiteral("unsupported-output") << QStringLiteral("list");
        QTest::newRow("string input") << problemWith("return x", "torch.randn(batch_size, dim), 'hello'")
                                      << QStringLiteral("unsupported-input") << QStringLiteral("str");
        QTest::newRow("complex tensor") << problemWith("return x", "torch.randn(batch_size, dim, dtype=torch.cfloat)")
                                        << QStringLiteral("unsupported-dtype") << QStringLiteral("complex64");
        QTest::newRow("literal shapes") << problemWith("return x", "torch.randn(8, 64)")
                                        << QStringLiteral("fixed-shape") << QStringLiteral("globals");
        QByteArray randomInit = problemWith("return x * self.scale");
        randomInit.replace("super().__init__()", "super().__init__()\n        self.scale = torch.randn(dim)");
        QTest::newRow("random state in __init__")
            << randomInit << QStringLiteral("random-init") << QStringLiteral("__init__");
        QTest::newRow("forward raises") << problemWith("return x @ x") << QStringLiteral("forward-failed")
                                        << QStringLiteral("RuntimeError");
    }

    void refused()
    {
        QFETCH(QByteArray, source);
        QFETCH(QString, category);
        QFETCH(QString, says);
        QTemporaryDir tmp;
        const QString file = writeText(tmp.path() + QStringLiteral("/problem.py"), source);
        const QString dir = tmp.path() + QStringLiteral("/out");
        const auto run = importKernelBench(file, dir);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(
            run.err.contains(QStringLiteral("[kernelbench.") + category + QStringLiteral("]")), qPrintable(run.err));
        QVERIFY2(run.err.contains(says), qPrintable(run.err));
        QVERIFY2(!QFile::exists(dir + QStringLiteral("/problem.json")), "a refused import writes no problem");
    }

    // A module that never finishes importing is stopped at --timeout, not waited on.
    void loopsForever()
    {
        QTemporaryDir tmp;
        const QString file = writeText(tmp.path() + QStringLiteral("/spin.py"), "while True:\n    pass\n");
        QElapsedTimer clock;
        clock.start();
        const auto run = importKernelBench(
            file, tmp.path() + QStringLiteral("/out"), { QStringLiteral("--timeout"), QStringLiteral("2") });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("[kernelbench.timeout]")), qPrintable(run.err));
        QVERIFY2(clock.elapsed() < 20000, "the helper was not killed at its time limit");
    }

    void missingFile()
    {
        const auto run = importKernelBench(QStringLiteral("/nonexistent/k.py"), QStringLiteral("/tmp/kl-never"));
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("[kernelbench.no-file]")), qPrintable(run.err));
    }

    // A missing helper is a broken installation, not a missing PyTorch (issue 30: an installed package
    // without python/kernelloop said "needs-pytorch").
    void missingHelper()
    {
        const QString file = QStringLiteral(KL_SOURCE_DIR "/resources/kernelbench/gelu.py");
        QTemporaryDir tmp;
        qputenv("KL_KERNELBENCH_HELPER", "/nonexistent/kernelbench_import.py");
        const auto run = importKernelBench(file, tmp.path() + QStringLiteral("/a"));
        qunsetenv("KL_KERNELBENCH_HELPER");
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("[kernelbench.missing-helper]")), qPrintable(run.err));
        QVERIFY2(
            run.err.contains(QStringLiteral("/nonexistent/kernelbench_import.py is missing")), qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("PyTorch")), qPrintable(run.err));
    }

    // No interpreter at all, and an interpreter whose `import torch` fails: both "needs PyTorch".
    void needsPyTorch()
    {
        const QString file = QStringLiteral(KL_SOURCE_DIR "/resources/kernelbench/gelu.py");
        QTemporaryDir tmp;
        const auto none = runCli(
            { QStringLiteral("import-kernelbench"), file, QStringLiteral("-o"), tmp.path() + QStringLiteral("/a") },
            QStringLiteral("/nonexistent/python3"));
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains(QStringLiteral("[kernelbench.needs-pytorch]")), qPrintable(none.err));
        QDir(tmp.path()).mkdir(QStringLiteral("notorch"));
        writeText(tmp.path() + QStringLiteral("/notorch/torch.py"), "raise ImportError('no torch in this Python')\n");
        const QString python = writeText(tmp.path() + QStringLiteral("/python"),
            "#!/bin/sh\nPYTHONPATH=" + tmp.path().toUtf8() + "/notorch exec " + kPython + " \"$@\"\n");
        QFile::setPermissions(python, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const auto without = runCli(
            { QStringLiteral("import-kernelbench"), file, QStringLiteral("-o"), tmp.path() + QStringLiteral("/b") },
            python);
        QCOMPARE(without.exitCode, 2);
        QVERIFY2(without.err.contains(QStringLiteral("[kernelbench.needs-pytorch]")), qPrintable(without.err));
        QVERIFY2(without.err.contains(QStringLiteral("no torch in this Python")), qPrintable(without.err));
    }
};

QTEST_GUILESS_MAIN(TestKernelBenchRefusals)
#include "test_kernelbench_refusals.moc"
