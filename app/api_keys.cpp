#include "app/api_keys.h"

#include "core/llm/api_key.h"
#include "core/model/error.h"
#include "core/session/llm_endpoint.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

#ifdef KL_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

namespace kl::gui {

namespace {

const QString kService = QStringLiteral("KernelLoop");

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
    return session::endpointConfig(session::endpointText(llm), std::move(key));
}

} // namespace kl::gui
