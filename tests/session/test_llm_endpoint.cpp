// The one endpoint rule (core/session/llm_endpoint.h) that the CLI's flags and the GUI's run dialog
// (through the recipe's LlmSettings) both go through: the same categories for the same mistakes.
#include "core/model/error.h"
#include "core/session/llm_endpoint.h"

#include <QTest>

using namespace kl;

namespace {

QString categoryOf(const session::EndpointText& text)
{
    try {
        session::endpointConfig(text, "k");
    } catch (const Error& e) {
        return QString::fromStdString(e.category());
    }
    return {};
}

session::LlmSettings good()
{
    session::LlmSettings llm;
    llm.provider = "anthropic";
    llm.baseUrl = "http://127.0.0.1:8080/v1";
    llm.model = "m";
    llm.timeout = "30";
    llm.connectTimeout = "5";
    llm.attempts = "4";
    return llm;
}

} // namespace

class TestLlmEndpoint : public QObject {
    Q_OBJECT
private slots:
    void recipeSettingsBecomeTheConfig()
    {
        const auto config = session::endpointConfig(session::endpointText(good()), "secret");
        QVERIFY(config.provider == Provider::Anthropic);
        QCOMPARE(QString::fromStdString(config.baseUrl), QStringLiteral("http://127.0.0.1:8080/v1"));
        QCOMPARE(config.timeouts.total.count(), 30000);
        QCOMPARE(config.timeouts.connect.count(), 5000);
        QCOMPARE(config.retry.maxAttempts, 4);
        QCOMPARE(QString::fromStdString(config.apiKey), QStringLiteral("secret"));
    }

    // What the GUI's own smaller check (a prefix test and strtod) let through or named otherwise.
    void recipeMistakesGetTheCliCategories()
    {
        auto with = [](auto change) {
            auto llm = good();
            change(llm);
            return categoryOf(session::endpointText(llm));
        };
        QCOMPARE(with([](auto& l) { l.baseUrl = "http:///v1"; }), QStringLiteral("cli.bad-url")); // no host
        QCOMPARE(with([](auto& l) { l.baseUrl = "HTTP://host/ v1"; }), QStringLiteral("cli.bad-url"));
        QCOMPARE(with([](auto& l) { l.baseUrl = "file:///etc/passwd"; }), QStringLiteral("cli.bad-url"));
        QCOMPARE(with([](auto& l) { l.baseUrl.clear(); }), QStringLiteral("cli.missing-option"));
        QCOMPARE(with([](auto& l) { l.attempts = "2.5"; }), QStringLiteral("cli.bad-number"));
        QCOMPARE(with([](auto& l) { l.timeout = "0"; }), QStringLiteral("cli.bad-number"));
        QCOMPARE(with([](auto& l) { l.timeout = "nan"; }), QStringLiteral("cli.bad-number"));
        QCOMPARE(with([](auto& l) { l.model = "m\r\nX-Injected: 1"; }), QStringLiteral("cli.bad-option"));
        QCOMPARE(with([](auto& l) { l.anthropicVersion = "1\n2"; }), QStringLiteral("cli.bad-option"));
        QCOMPARE(with([](auto& l) { l.provider = "gemini"; }), QStringLiteral("cli.bad-provider"));
    }

    void headersAreChecked()
    {
        auto text = session::endpointText(good());
        text.headers = { "X-Team: kernels" };
        const auto config = session::endpointConfig(text, {});
        QCOMPARE(config.extraHeaders.size(), std::size_t(1));
        text.headers = { "no colon" };
        QCOMPARE(categoryOf(text), QStringLiteral("cli.bad-header"));
        text.headers = { "X: a\nY: b" };
        QCOMPARE(categoryOf(text), QStringLiteral("cli.bad-header"));
    }
};

QTEST_MAIN(TestLlmEndpoint)
#include "test_llm_endpoint.moc"
