// API keys for the CLI: from an environment variable or a private key file, never echoed.
#include "core/llm/api_key.h"
#include "core/model/error.h"

#include <QtTest>

#include <QTemporaryDir>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

using namespace kl;

namespace {

const char* const kKey = "sk-kltest-keyfile-5f4e3d2c1b0a";

std::filesystem::path writeKeyFile(
    const QTemporaryDir& dir, const std::string& name, const std::string& text, mode_t mode)
{
    const auto path = std::filesystem::path(dir.path().toStdString()) / name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
}

// The category of the kl::Error `f` throws, with a check that its text never holds the key.
template <typename F> std::string failure(F&& f)
{
    try {
        f();
    } catch (const Error& e) {
        const std::string all = std::string(e.what()) + e.message() + e.file() + e.where();
        if (all.find(kKey) != std::string::npos)
            return "KEY LEAKED: " + all;
        return e.category();
    }
    return "no error";
}

} // namespace

class TestLlmKeys : public QObject {
    Q_OBJECT

private slots:
    void fromAnEnvironmentVariable()
    {
        ::setenv("KL_TEST_LLM_KEY", "  sk-from-env-123456\n", 1);
        QCOMPARE(loadApiKey({ "KL_TEST_LLM_KEY", {} }), std::string("sk-from-env-123456"));
        ::setenv("KL_TEST_LLM_KEY", "   ", 1);
        QCOMPARE(failure([] { loadApiKey({ "KL_TEST_LLM_KEY", {} }); }), std::string("llm.key-missing"));
        ::unsetenv("KL_TEST_LLM_KEY");
        QCOMPARE(failure([] { loadApiKey({ "KL_TEST_LLM_KEY", {} }); }), std::string("llm.key-missing"));
    }

    void noSourceMeansNoKey() { QCOMPARE(loadApiKey({}), std::string()); }

    void fromAPrivateKeyFile()
    {
        QTemporaryDir dir;
        const auto path = writeKeyFile(dir, "key", std::string(kKey) + "\n", 0600);
        QCOMPARE(loadApiKey({ {}, path }), std::string(kKey));
        const auto readOnly = writeKeyFile(dir, "key-ro", kKey, 0400);
        QCOMPARE(loadApiKey({ {}, readOnly }), std::string(kKey));
    }

    void aKeyFileOthersCanReadIsRefused_data()
    {
        QTest::addColumn<int>("mode");
        QTest::newRow("0644") << 0644;
        QTest::newRow("0640") << 0640;
        QTest::newRow("0604") << 0604;
        QTest::newRow("0660") << 0660;
        QTest::newRow("0666") << 0666;
    }

    void aKeyFileOthersCanReadIsRefused()
    {
        QFETCH(int, mode);
        QTemporaryDir dir;
        const auto path = writeKeyFile(dir, "key", kKey, static_cast<mode_t>(mode));
        QCOMPARE(failure([&] { loadApiKey({ {}, path }); }), std::string("llm.key-file-permissions"));
        try {
            loadApiKey({ {}, path });
        } catch (const Error& e) {
            const std::string message = e.message();
            QVERIFY2(message.find("chmod 600") != std::string::npos, message.c_str());
            QVERIFY2(
                message.find(QStringLiteral("%1").arg(mode, 4, 8, QLatin1Char('0')).toStdString()) != std::string::npos,
                message.c_str());
        }
    }

    void otherKeyFileProblems()
    {
        QTemporaryDir dir;
        const auto empty = writeKeyFile(dir, "empty", "\n  \n", 0600);
        QCOMPARE(failure([&] { loadApiKey({ {}, empty }); }), std::string("llm.key-file-empty"));
        QCOMPARE(failure([&] {
            loadApiKey({ {}, std::filesystem::path(dir.path().toStdString()) / "absent" });
        }),
            std::string("llm.key-file-unreadable"));
        QCOMPARE(failure([&] {
            loadApiKey({ {}, std::filesystem::path(dir.path().toStdString()) });
        }),
            std::string("llm.key-file-unreadable"));
        const auto path = writeKeyFile(dir, "key", kKey, 0600);
        ::setenv("KL_TEST_LLM_KEY", "x", 1);
        QCOMPARE(failure([&] { loadApiKey({ "KL_TEST_LLM_KEY", path }); }), std::string("llm.key-ambiguous"));
        ::unsetenv("KL_TEST_LLM_KEY");
    }
};

QTEST_APPLESS_MAIN(TestLlmKeys)
#include "test_llm_keys.moc"
