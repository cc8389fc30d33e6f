// The typed exchange and summary records against the files the project ships: every bundled session
// is read into typed records and written back through the store's writer, and the column text that
// comes out is the text that went in, byte for byte (the records changed, the files did not).
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <filesystem>
#include <string>

using namespace kl::store;
using kl::store::testing::RawDb;

namespace {

// Every column of a session's exchanges, in the order written, as one text.
std::string exchangeColumns(RawDb& raw, std::int64_t session)
{
    return raw.text("SELECT group_concat(x.role || char(1) || x.provider || char(1) || x.model || char(1) || "
                    "x.request_json || char(1) || x.response || char(1) || ifnull(x.usage_json, 'NULL') || char(1) || "
                    "ifnull(x.latency_ms, 'NULL') || char(1) || x.category || char(1) || x.started_ms, char(2)) "
                    "FROM (SELECT x.* FROM llm_exchanges x JOIN iterations i ON i.id = x.iteration_id "
                    "WHERE i.session_id = "
        + std::to_string(session) + " ORDER BY i.idx, x.id) x");
}

} // namespace

class TestStoreBundledColumns : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void writtenBackByteForByte_data()
    {
        QTest::addColumn<QString>("file");
        const QDir sessions(QStringLiteral(KL_SOURCE_DIR "/resources/sessions"));
        const auto files = sessions.entryList({ QStringLiteral("*.klsession") }, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 10);
        for (const auto& name : files)
            QTest::newRow(qPrintable(name)) << sessions.filePath(name);
    }

    void writtenBackByteForByte()
    {
        QFETCH(QString, file);
        const auto copy = m_dir.filePath(QFileInfo(file).fileName()).toStdString();
        std::filesystem::copy_file(file.toStdString(), copy, std::filesystem::copy_options::overwrite_existing);
        const auto exchanges = RawDb(copy).integer("SELECT COUNT(*) FROM llm_exchanges");
        auto store = Store::open(copy);
        std::int64_t written = 0;
        std::vector<std::pair<std::int64_t, std::int64_t>> pairs; // (bundled, written back)
        for (const auto& row : store.listSessions()) {
            const auto original = store.session(row.session.id);
            QVERIFY(original && original->summary); // every bundled session has one
            auto again = *original;
            again.summary.reset();
            const auto id = store.createSession(again);
            store.recordSessionSummary(id, original->summary);
            for (const auto& iteration : store.listIterations(original->id)) {
                const auto detail = store.iteration(original->id, iteration.index);
                QVERIFY(detail);
                if (detail->exchanges.empty())
                    continue;
                const auto ref = store.beginIteration(id);
                for (const auto& x : detail->exchanges) {
                    QVERIFY(x.unreadable.empty());
                    store.recordExchange(ref, x);
                    ++written;
                }
                store.finishIteration(ref);
            }
            pairs.emplace_back(original->id, id);
        }
        QCOMPARE(written, exchanges);
        RawDb raw(copy);
        for (const auto& [bundled, back] : pairs) {
            const auto summary = "SELECT summary_json FROM sessions WHERE id = ";
            const auto before = raw.text(summary + std::to_string(bundled));
            QVERIFY(!before.empty());
            QCOMPARE(raw.text(summary + std::to_string(back)), before);
            QCOMPARE(exchangeColumns(raw, back), exchangeColumns(raw, bundled));
        }
    }

    // What the typed record holds of a bundled LLM session: the fields the panels read.
    void llmReplayReadsAsFields()
    {
        const auto copy = m_dir.filePath(QStringLiteral("replay.klsession")).toStdString();
        std::filesystem::copy_file(KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-llm-replay-h200.klsession", copy,
            std::filesystem::copy_options::overwrite_existing);
        const auto store = Store::open(copy);
        const auto session = store.listSessions().at(0).session;
        QCOMPARE(session.summary->tokens, std::optional<std::int64_t>(34554));
        QCOMPARE(session.summary->passAtK, std::optional<double>(0.75));
        QCOMPARE(summaryBestIteration(session), std::optional<int>(4));
        std::vector<std::string> roles;
        std::int64_t tokens = 0;
        for (const auto& row : store.listIterations(session.id)) {
            const auto detail = store.iteration(session.id, row.index);
            QVERIFY(detail);
            for (const auto& x : detail->exchanges) {
                roles.push_back(x.role);
                tokens += x.exchange.usage.total();
                QCOMPARE(x.exchange.category, kl::ExchangeCategory::Ok);
                QVERIFY(x.exchange.usage.reported && x.exchange.streamed);
                QCOMPARE(x.exchange.prompt.size(), std::size_t { 2 });
                QCOMPARE(x.exchange.prompt[0].role, std::string("system"));
                QCOMPARE(x.exchange.choices.size(), std::size_t { 1 });
                QCOMPARE(x.exchange.choices[0].finishReason, std::string("stop"));
                QCOMPARE(x.exchange.httpStatus, 200);
                QVERIFY(x.exchange.latencyMs > 0.0 && x.exchange.firstTokenMs > 0.0);
            }
        }
        const std::vector<std::string> expected { "planner", "coder", "planner", "coder", "debugger", "planner",
            "coder" };
        QCOMPARE(roles, expected);
        QCOMPARE(tokens, *session.summary->tokens); // the summary's tokens are the exchanges'
    }
};

QTEST_GUILESS_MAIN(TestStoreBundledColumns)
#include "test_store_bundled_columns.moc"
