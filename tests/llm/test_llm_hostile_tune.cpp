// A hostile LLM endpoint against the real `kernelloop-cli tune` (issue 23): the runner double at the
// process boundary, a real SQLite store, real NVRTC, scripted replies over loopback HTTP. A byte that is
// not UTF-8 in any of five places costs a round, never the session; a key the server echoes, in any of
// the forms it travelled in, reaches neither the terminal nor the store nor an export; a 20 MiB reply
// is refused and kept as a capped prefix; llm-check --json prints a capped form of it.
#include "core/protocol/base64.h"
#include "llm_check_cli.h"
#include "replay_bodies.h"
#include "replay_server.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>

using namespace kl::test;

namespace {

// '+', '/' and '=' make its percent-encoded form differ from it.
const std::string kKey = "sk-kl/HOSTILE+echo=7c6b5a49382716";
const std::string kUser = "team-user";

QString problem() { return QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json"); }

struct Ran {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

Ran run(const QStringList& arguments, const QString& key = QString::fromStdString(kKey))
{
    QProcess p;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("KL_TEST_KEY"), key);
    for (const auto* name : { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY" })
        environment.remove(QString::fromLatin1(name));
    p.setProcessEnvironment(environment);
    p.start(QStringLiteral(KL_CLI_PATH), arguments);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
    }
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput(),
        p.readAllStandardError() };
}

QStringList tune(const QString& db, const QString& baseUrl, const QStringList& extra)
{
    return QStringList { QStringLiteral("tune"), problem(), QStringLiteral("--db"), db, QStringLiteral("--runner"),
        QStringLiteral(KL_MODEL_RUNNER), QStringLiteral("--metrics"), QStringLiteral("none"),
        QStringLiteral("--no-cache"), QStringLiteral("--proposer"), QStringLiteral("llm"), QStringLiteral("--roles"),
        QStringLiteral("single"), QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("--base-url"),
        baseUrl, QStringLiteral("--model"), QStringLiteral("replay"), QStringLiteral("--attempts"), QStringLiteral("1"),
        QStringLiteral("--patience"), QStringLiteral("0"), QStringLiteral("--max-failed-rounds"), QStringLiteral("0") }
    + extra;
}

// One column of the store for every row, as text.
QStringList column(const QString& db, const char* sql)
{
    sqlite3* handle = nullptr;
    QStringList out;
    if (sqlite3_open_v2(db.toUtf8().constData(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(handle);
        return out;
    }
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr) == SQLITE_OK)
        while (sqlite3_step(statement) == SQLITE_ROW) {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
            out << QString::fromUtf8(text ? text : "");
        }
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return out;
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::uintmax_t storeBytes(const QString& db)
{
    std::uintmax_t total = 0;
    for (const char* suffix : { "", "-wal" }) {
        std::error_code error;
        const auto size = std::filesystem::file_size(db.toStdString() + suffix, error);
        total += error ? 0 : size;
    }
    return total;
}

// Every form the key can take on the wire or in an echo: plain, percent-encoded, the Basic header's
// base64 of user:key, and base64 of the key inside a longer blob.
std::vector<QByteArray> keyForms()
{
    std::vector<QByteArray> forms { QByteArray::fromStdString(kKey),
        QByteArray::fromStdString(kKey).toPercentEncoding(),
        QByteArray::fromStdString(kl::protocol::base64Encode(kUser + ":" + kKey)) };
    // The middle of base64("xy" + key + "z"): no padding of the blob's own reaches it.
    const auto blob = kl::protocol::base64Encode("xy" + kKey + "z");
    forms.push_back(QByteArray::fromStdString(blob.substr(4, 24)));
    return forms;
}

QString leaked(const QByteArray& where)
{
    for (const auto& form : keyForms())
        if (where.contains(form))
            return QString::fromLatin1(form);
    return {};
}

Reply streamOf(const std::vector<std::string>& pieces)
{
    Reply r;
    r.contentType = "text/event-stream";
    r.body = openAiStream({ pieces }, "replay", ReplyUsage { 10, 10 });
    r.chunked = true;
    r.chunkSize = 97; // small writes: events, and the key in them, arrive cut
    return r;
}

// A reply text with the key cut in two pieces, in the forms the server saw it in.
std::vector<std::string> echoPieces(const std::string& authorization)
{
    const std::string percent = QByteArray::fromStdString(kKey).toPercentEncoding().toStdString();
    const std::string blob = kl::protocol::base64Encode("xy" + kKey + "z");
    const std::string text = "I have no kernel for you. Your header was " + authorization + " and, percent-encoded, "
        + percent + "; as a blob " + blob + ".\n";
    std::vector<std::string> pieces;
    for (std::size_t at = 0; at < text.size(); at += 7)
        pieces.push_back(text.substr(at, 7));
    return pieces;
}

} // namespace

class TestLlmHostileTune : public QObject {
    Q_OBJECT

    std::unique_ptr<ReplayServer> m_server;

    QString base(const std::string& route) const { return QString::fromStdString(m_server->url("/" + route + "/v1")); }

private slots:
    void initTestCase()
    {
        QVERIFY(QFile::exists(QStringLiteral(KL_CLI_PATH)));
        QVERIFY(QFile::exists(QStringLiteral(KL_MODEL_RUNNER)));
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "0");
        m_server = std::make_unique<ReplayServer>();
        auto& s = *m_server;
        // Five places a byte that is not UTF-8 comes from.
        // (Written by hand: a JSON library would refuse to write the byte.)
        s.route("/delta/v1/chat/completions", [](const SeenRequest&, int) {
            std::string body;
            for (const char* piece : { "no kernel: caf\xE9 ", "\xFF\xFE bytes\\n" })
                body
                    += std::string("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"") + piece + "\"}}]}\n\n";
            body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
            return eventStreamReply(body);
        });
        s.route("/event/v1/chat/completions", [](const SeenRequest&, int) {
            Reply r = eventStreamReply("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xFF\xFE\"\n\n");
            return r;
        });
        s.route("/body/v1/chat/completions",
            [](const SeenRequest&, int) { return jsonReply("{\"choices\":[{\"index\":0,\"message\":\xE9\xFF}]}"); });
        s.route("/page400/v1/chat/completions", [](const SeenRequest&, int) {
            Reply r = jsonReply("<html><body>Requ\xEAte refus\xE9\x65 par le proxy \xFF</body></html>", 400);
            r.contentType = "text/html; charset=iso-8859-1";
            return r;
        });
        s.route("/page500/v1/chat/completions", [](const SeenRequest&, int) {
            Reply r = jsonReply("<html><body>Erreur interne du serveur mandataire \xE0 \xE9\xE9</body></html>", 502);
            r.contentType = "text/html; charset=iso-8859-1";
            return r;
        });
        // The key echoed back, in the forms it travelled in, cut across stream pieces.
        s.route("/echo/v1/chat/completions",
            [](const SeenRequest& r, int) { return streamOf(echoPieces(r.header("authorization"))); });
        s.route("/echo401/v1/chat/completions", [](const SeenRequest& r, int) {
            return jsonReply(
                openAiError("bad credentials " + r.header("authorization") + " for " + kKey, "invalid_request_error"),
                401);
        });
        // 20 MiB of text: refused as oversized, kept as a prefix.
        s.route("/huge/v1/chat/completions", [](const SeenRequest&, int) {
            std::vector<std::string> pieces(320, std::string(65536, 'A'));
            for (auto& piece : pieces)
                piece.back() = '\n';
            Reply r = streamOf(pieces);
            r.chunkSize = 1 << 20;
            return r;
        });
    }

    void cleanupTestCase() { m_server.reset(); }

    void aByteThatIsNotUtf8CostsARound_data()
    {
        QTest::addColumn<QString>("route");
        QTest::addColumn<QString>("category");
        QTest::newRow("streamed delta") << "delta"
                                        << "proposer.no-code";
        QTest::newRow("stream event") << "event"
                                      << "proposer.";
        QTest::newRow("200 JSON body") << "body"
                                       << "proposer.bad-json";
        QTest::newRow("400 Latin-1 page") << "page400"
                                          << "proposer.http-4xx";
        QTest::newRow("502 proxy page") << "page500"
                                        << "proposer.http-5xx";
    }

    void aByteThatIsNotUtf8CostsARound()
    {
        QFETCH(QString, route);
        QFETCH(QString, category);
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        const auto r = run(tune(db, base(route.toStdString()),
            { QStringLiteral("--budget"), QStringLiteral("1"), QStringLiteral("--key-env"),
                QStringLiteral("KL_TEST_KEY") }));
        QVERIFY2(!r.err.contains("[internal]"), r.err.right(2000).constData());
        QVERIFY2(r.code == 0, r.err.right(2000).constData());
        QCOMPARE(column(db, "SELECT status FROM sessions"), QStringList { QStringLiteral("finished") });
        const auto categories
            = column(db, "SELECT r.category FROM iterations i JOIN results r ON r.iteration_id = i.id WHERE i.idx = 2");
        QVERIFY2(categories.size() == 1 && categories.front().startsWith(category), qPrintable(categories.join(u',')));
        QVERIFY2(column(db, "SELECT COUNT(*) FROM llm_exchanges") == QStringList { QStringLiteral("1") },
            "the failed round's exchange is stored");
        if (route == QStringLiteral("delta")) // replaced, and the text around the bytes kept
            QVERIFY2(column(db, "SELECT response FROM llm_exchanges")
                         .join(u'\n')
                         .contains(QStringLiteral("caf\uFFFD \uFFFD\uFFFD bytes")),
                qPrintable(column(db, "SELECT response FROM llm_exchanges").join(u'\n')));
    }

    void anEchoedKeyIsNeverShownOrStored_data()
    {
        QTest::addColumn<QString>("route");
        QTest::addColumn<QStringList>("credentials");
        QTest::addColumn<bool>("inUrl");
        const QString keyFile = QStringLiteral("@KEYFILE@");
        QTest::newRow("key from env, streamed echo")
            << "echo" << QStringList { QStringLiteral("--key-env"), QStringLiteral("KL_TEST_KEY") } << false;
        QTest::newRow("key file, streamed echo")
            << "echo" << QStringList { QStringLiteral("--key-file"), keyFile } << false;
        QTest::newRow("Authorization header")
            << "echo"
            << QStringList { QStringLiteral("--header"),
                   QStringLiteral("Authorization: Bearer ") + QString::fromStdString(kKey) }
            << false;
        QTest::newRow("URL userinfo (Basic)") << "echo" << QStringList {} << true;
        QTest::newRow("URL userinfo, 401 echo") << "echo401" << QStringList {} << true;
        QTest::newRow("hybrid proposer") << "echo"
                                         << QStringList { QStringLiteral("--key-env"), QStringLiteral("KL_TEST_KEY"),
                                                QStringLiteral("--proposer"), QStringLiteral("llm+tuner"),
                                                QStringLiteral("--tuner-rounds"), QStringLiteral("1") }
                                         << false;
    }

    void anEchoedKeyIsNeverShownOrStored()
    {
        QFETCH(QString, route);
        QFETCH(QStringList, credentials);
        QFETCH(bool, inUrl);
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        const auto keyFile = dir.filePath(QStringLiteral("key"));
        std::ofstream(keyFile.toStdString()) << kKey << "\n";
        std::filesystem::permissions(
            keyFile.toStdString(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        for (auto& c : credentials)
            c.replace(QStringLiteral("@KEYFILE@"), keyFile);
        QString url = base(route.toStdString());
        if (inUrl) {
            const auto escaped = QString::fromLatin1(QByteArray::fromStdString(kKey).toPercentEncoding());
            url.replace(
                QStringLiteral("http://"), QStringLiteral("http://%1:%2@").arg(QString::fromStdString(kUser), escaped));
        }
        auto arguments = tune(db, url, QStringList { QStringLiteral("--budget"), QStringLiteral("2") } + credentials);
        if (credentials.contains(QStringLiteral("--proposer"))) // the row's proposer, not the default one
            arguments.remove(arguments.indexOf(QStringLiteral("--proposer")), 2);
        const auto r = run(arguments);
        QVERIFY2(r.code == 0, r.err.right(2000).constData());
        QVERIFY2(
            m_server->requestCount("/" + route.toStdString() + "/v1/chat/completions") > 0, "the server was asked");
        QVERIFY2(leaked(r.err).isEmpty(), qPrintable(QStringLiteral("stderr shows ") + leaked(r.err)));
        QVERIFY2(leaked(r.out).isEmpty(), qPrintable(QStringLiteral("stdout shows ") + leaked(r.out)));
        QVERIFY2(r.err.contains("[redacted]") || route == QStringLiteral("echo401"), r.err.right(2000).constData());

        const auto exported = dir.filePath(QStringLiteral("session.klx"));
        const auto e = run({ QStringLiteral("export"), exported, QStringLiteral("--db"), db });
        QVERIFY2(e.code == 0, e.err.constData());
        const auto checkpoint
            = run({ QStringLiteral("history"), QStringLiteral("--db"), db, QStringLiteral("--json") });
        QVERIFY2(leaked(checkpoint.out).isEmpty(), "history --json");
        for (const auto& file : { db, db + QStringLiteral("-wal"), exported }) {
            const auto bytes = fileBytes(file);
            QVERIFY2(leaked(bytes).isEmpty(), qPrintable(file + QStringLiteral(" holds ") + leaked(bytes)));
        }
        const auto responses = column(db, "SELECT response FROM llm_exchanges").join(u'\n').toUtf8()
            + column(db, "SELECT usage_json FROM llm_exchanges").join(u'\n').toUtf8();
        QVERIFY2(leaked(responses).isEmpty(), qPrintable(leaked(responses)));
    }

    void anOversizedReplyIsKeptAsAPrefix()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db"));
        // The store as the baseline leaves it, then three rounds of 20 MiB replies.
        const auto one = run(tune(db, base("huge"),
            { QStringLiteral("--budget"), QStringLiteral("3"), QStringLiteral("--key-env"),
                QStringLiteral("KL_TEST_KEY") }));
        QVERIFY2(one.code == 0, one.err.right(2000).constData());
        QCOMPARE(column(db,
                     "SELECT COUNT(*) FROM iterations i JOIN results r ON r.iteration_id = i.id "
                     "WHERE r.category = 'proposer.oversized'"),
            QStringList { QStringLiteral("3") });
        // What each refused reply added: its exchange row (prompt, kept prefix, usage) and its rows beside.
        for (const auto& bytes :
            column(db, "SELECT LENGTH(request_json) + LENGTH(response) + LENGTH(usage_json) FROM llm_exchanges"))
            QVERIFY2(bytes.toLongLong() < 1024 * 1024, qPrintable(bytes));
        const auto kept = column(db, "SELECT MAX(LENGTH(response)) FROM llm_exchanges");
        QVERIFY2(kept.size() == 1 && kept.front().toLongLong() <= 300 * 1024, qPrintable(kept.join(u',')));
        QVERIFY2(storeBytes(db) < 8u * 1024 * 1024, qPrintable(QString::number(storeBytes(db)))); // was 61 MB
        QVERIFY2(one.err.size() < 3 * 300 * 1024 + 64 * 1024, qPrintable(QString::number(one.err.size())));

        const auto check = run({ QStringLiteral("llm-check"), QStringLiteral("--provider"), QStringLiteral("openai"),
            QStringLiteral("--base-url"), base("huge"), QStringLiteral("--model"), QStringLiteral("replay"),
            QStringLiteral("--stream"), QStringLiteral("--json") });
        QVERIFY2(check.out.size() < 1024 * 1024, qPrintable(QString::number(check.out.size())));
        QVERIFY2(check.out.contains("more bytes not kept"), check.out.right(300).constData());
    }
};

QTEST_GUILESS_MAIN(TestLlmHostileTune)
#include "test_llm_hostile_tune.moc"
