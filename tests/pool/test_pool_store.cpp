// Schema v5 for the pool: results.runner_endpoint. A version-4 file (the later columns dropped, its
// version set back) migrates forward on open and gains the column; a result recorded with an endpoint reads
// back with it, one without reads as empty.
#include "core/store/schema.h"
#include "core/store/store.h"

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QtTest/QTest>

using namespace kl::store;

namespace {

void exec(const std::string& file, const std::string& sql)
{
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, message.c_str());
}

long long integer(const std::string& file, const std::string& sql)
{
    sqlite3* db = nullptr;
    sqlite3_open(file.c_str(), &db);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
    const long long v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

} // namespace

class TestPoolStore : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void version4GainsTheEndpointColumn()
    {
        QTemporaryDir dir;
        const auto file = dir.filePath(QStringLiteral("s.db")).toStdString();
        {
            auto store = Store::open(file);
        }
        QCOMPARE(integer(file, "PRAGMA user_version"), static_cast<long long>(kSchemaVersion));
        // Back to version 4: without the columns that v5 (runner_endpoint) and v6 (pc_sampling_json) added.
        exec(file,
            "ALTER TABLE results DROP COLUMN runner_endpoint; ALTER TABLE results DROP COLUMN pc_sampling_json; "
            "PRAGMA user_version = 4;");
        QCOMPARE(
            integer(file, "SELECT COUNT(*) FROM pragma_table_info('results') WHERE name = 'runner_endpoint'"), 0LL);
        {
            auto store = Store::open(file);
        }
        QCOMPARE(integer(file, "PRAGMA user_version"), static_cast<long long>(kSchemaVersion));
        QCOMPARE(
            integer(file, "SELECT COUNT(*) FROM pragma_table_info('results') WHERE name = 'runner_endpoint'"), 1LL);
    }

    void endpointRoundTrip()
    {
        QTemporaryDir dir;
        auto store = Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        ProblemRecord p;
        p.name = "p";
        p.json = "{}";
        SessionRecord s;
        s.problemHash = store.addProblem(p);
        const auto session = store.createSession(s);
        CandidateRecord c;
        c.source = "k";
        const auto candidate = store.addCandidate(session, c);
        for (const auto* endpoint : { "ssh:me@box:1", "" }) {
            const auto ref = store.beginIteration(session, candidate, 1);
            ResultRecord r;
            r.status = "ok";
            r.category = "passed";
            r.endpoint = endpoint;
            store.recordResult(ref, r);
            store.finishIteration(ref, "done");
            const auto back = store.iteration(session, ref.index);
            QVERIFY(back && back->result);
            QCOMPARE(QString::fromStdString(back->result->endpoint), QString::fromUtf8(endpoint));
        }
    }
};

QTEST_GUILESS_MAIN(TestPoolStore)
#include "test_pool_store.moc"
