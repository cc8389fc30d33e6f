#include "app/api_keys.h"

#include "core/llm/api_key.h"
#include "core/model/error.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

#ifdef KL_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

#include <cmath>
#include <cstdlib>

namespace kl::gui {

namespace {

const QString kService = QStringLiteral("KernelLoop");

double number(const std::string& what, const std::string& text, double low, double high)
{
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value < low || value > high)
        throw Error("session.bad-llm", {}, what,
            what + " must be a number from " + std::to_string(int(low)) + " to " + std::to_string(int(high))
                + ", not \"" + text + "\"");
    return value;
}

#ifdef KL_HAVE_KEYCHAIN
// Runs a keychain job to its end (a few ms with a keychain; it gives up after 5 s).
bool finish(QKeychain::Job& job)
{
    QEventLoop loop;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(5000, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
    return job.error() == QKeychain::NoError;
}
#endif

} // namespace

bool ApiKeys::keychainUsable()
{
#ifdef KL_HAVE_KEYCHAIN
    if (qEnvironmentVariableIntValue("KERNELLOOP_NO_KEYCHAIN") == 1)
        return false;
    return !qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS");
#else
    return false;
#endif
}

QString ApiKeys::account(const session::LlmSettings& llm)
{
    return QString::fromStdString(llm.provider) + QLatin1Char(' ') + QString::fromStdString(llm.baseUrl);
}

QString ApiKeys::save(const session::LlmSettings& llm, const QString& key)
{
#ifdef KL_HAVE_KEYCHAIN
    if (!keychainUsable())
        return QCoreApplication::translate(
            "kl::gui::ApiKeys", "No keychain is running: use an environment variable or a 0600 key file");
    QKeychain::WritePasswordJob job(kService);
    job.setAutoDelete(false);
    job.setInsecureFallback(false); // never a plain-text file
    job.setKey(account(llm));
    job.setTextData(key);
    if (!finish(job))
        return job.errorString();
    return {};
#else
    (void)llm;
    (void)key;
    return QCoreApplication::translate(
        "kl::gui::ApiKeys", "Built without qtkeychain: use an environment variable or a 0600 key file");
#endif
}

LoadedKey ApiKeys::load(const session::LlmSettings& llm)
{
    if (!llm.keyEnv.empty() || !llm.keyFile.empty()) {
        const QString from
            = llm.keyEnv.empty() ? QStringLiteral("key file") : QLatin1Char('$') + QString::fromStdString(llm.keyEnv);
        return { loadApiKey({ llm.keyEnv, llm.keyFile }), from };
    }
#ifdef KL_HAVE_KEYCHAIN
    if (keychainUsable()) {
        QKeychain::ReadPasswordJob job(kService);
        job.setAutoDelete(false);
        job.setInsecureFallback(false);
        job.setKey(account(llm));
        if (finish(job)) {
            const std::string key = job.textData().trimmed().toStdString();
            if (key.find_first_of("\r\n") != std::string::npos)
                throw Error("llm.key-bad-characters", {}, {}, "the keychain's key contains a line break");
            return { key, QStringLiteral("keychain") };
        }
    }
#endif
    return { {}, QStringLiteral("none") };
}

EndpointConfig endpointFor(const session::LlmSettings& llm, std::string key)
{
    if (llm.baseUrl.empty() || llm.model.empty())
        throw Error("session.bad-llm", {}, {}, "the LLM proposer needs a base URL and a model");
    if (llm.baseUrl.rfind("http://", 0) != 0 && llm.baseUrl.rfind("https://", 0) != 0)
        throw Error("session.bad-llm", {}, llm.baseUrl, "the base URL must start with http:// or https://");
    EndpointConfig config;
    config.provider = llm.provider == "anthropic" ? Provider::Anthropic : Provider::OpenAi;
    config.baseUrl = llm.baseUrl;
    config.model = llm.model;
    config.anthropicVersion = llm.anthropicVersion;
    const double total = number("timeout", llm.timeout, 1, 86400);
    const double connect = number("connect timeout", llm.connectTimeout, 1, 600);
    config.timeouts.total = std::chrono::milliseconds(std::llround(total * 1000.0));
    config.timeouts.connect = std::chrono::milliseconds(std::llround(connect * 1000.0));
    config.timeouts.stall = std::min(config.timeouts.total, std::chrono::milliseconds(30000));
    config.retry.maxAttempts = int(number("attempts", llm.attempts, 1, 20));
    config.apiKey = std::move(key);
    return config;
}

} // namespace kl::gui
