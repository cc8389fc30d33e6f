// The runner's PC samples in the store (schema version 6): written from the typed reply as the text the
// runner sent (byte for byte), read back as the same value, carried by export/import and by the evaluation cache, and
// an older file migrated forward with its results left unsampled.
#include "core/lines/pc_sampling.h"
#include "core/protocol/messages.h"
#include "core/protocol/pc_sampling_json.h"
#include "core/store/code_listings.h"
#include "core/store/compile_columns.h"
#include "core/store/runner_result.h"
#include "core/store/schema.h"
#include "core/store/store.h"
#include "raw_sqlite.h"
#include "store_fixtures.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <fstream>
#include <sstream>

using namespace kl::store;
using kl::Telemetry;
using kl::store::testing::RawDb;
namespace fx = kl::store::fixtures;

namespace {

nlohmann::json sampledReply()
{
    std::ifstream in(std::string(KL_SOURCE_DIR) + "/tests/fixtures/lines/pointer_chase-lines-h200.json");
    std::ostringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str());
}

struct Recorded {
    std::int64_t session = 0;
    std::int64_t resultId = 0;
};

// One session of two iterations: the first sampled (`sampled`), the second not.
Recorded recordSession(Store& store, const ResultRecord& sampled)
{
    SessionRecord record;
    record.problemHash = store.addProblem(fx::problem());
    record.device = "NVIDIA H200 #0";
    record.proposer = "tuner";
    Recorded out;
    out.session = store.createSession(record);
    for (int i = 0; i < 2; ++i) {
        const auto ref = store.beginIteration(out.session, store.addCandidate(out.session, fx::candidate(i)));
        store.recordResult(ref, i == 0 ? sampled : fx::passedResult(i));
        const auto committed = store.finishIteration(ref);
        if (i == 0)
            out.resultId = *committed.resultId;
    }
    store.finishSession(out.session, "finished");
    return out;
}

ResultRecord typedResult(const nlohmann::json& reply)
{
    return resultFromEvaluateResult(reply.get<kl::protocol::EvaluateResult>());
}

kl::lines::PcSampling decoded(const nlohmann::json& value)
{
    const auto sampling = kl::protocol::pcSamplingFromJson(value);
    if (!sampling)
        throw std::runtime_error("no pc_sampling");
    return *sampling;
}

} // namespace

class TestStoreLines : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_files = 0;
    std::string freshPath() { return m_dir.filePath(QStringLiteral("lines-%1.db").arg(++m_files)).toStdString(); }

private slots:
    void theStoredTextIsWhatTheRunnerSent()
    {
        const auto path = freshPath();
        const auto reply = sampledReply();
        const auto typed = typedResult(reply);
        QVERIFY(typed.pcSampling == decoded(reply["pc_sampling"]));
        {
            auto store = Store::open(path);
            recordSession(store, typed);
        }
        RawDb raw(path);
        // Each part's column holds the protocol's JSON of that part inside the whole reply, as it always
        // did: no migration, no second format.
        const nlohmann::json wire = reply.get<kl::protocol::EvaluateResult>();
        for (const char* part : { "pc_sampling", "timing", "verification", "device", "profile" })
            KL_COMPARE_TEXT(raw.rows(std::string("SELECT ") + part + "_json FROM results ORDER BY id LIMIT 1"),
                (wire[part].is_null() ? std::string("NULL") : wire[part].dump()) + "\n");
        // A reply that did not sample stores nothing.
        auto unsampled = reply;
        unsampled.erase("pc_sampling");
        QVERIFY(!typedResult(unsampled).pcSampling);
    }

    // Every result of the bundled H200 sessions reads back as typed parts whose JSON is the stored text
    // itself, byte for byte: the typed record needs no migration of recorded files.
    void bundledSessionsReadBackAsTheirStoredText()
    {
        QDir sessions(QStringLiteral(KL_SOURCE_DIR "/resources/sessions"));
        const auto files = sessions.entryList({ QStringLiteral("*.klsession") }, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 5);
        int parts = 0;
        for (const QString& name : files) {
            const auto path = m_dir.filePath(name);
            QVERIFY(QFile::copy(sessions.filePath(name), path));
            const auto store = Store::open(path.toStdString(), { .readOnly = true });
            RawDb raw(path.toStdString());
            for (const auto& session : store.listSessions())
                for (const auto& row : store.listIterations(session.session.id)) {
                    const auto detail = store.iteration(session.session.id, row.index);
                    if (!detail || !detail->result)
                        continue;
                    QVERIFY2(detail->result->unreadable.empty(),
                        detail->result->unreadable.empty() ? "" : detail->result->unreadable.front().what());
                    const auto columns = storedColumns(*detail->result);
                    for (const char* part : { "verification", "timing", "device", "profile", "pc_sampling" }) {
                        const auto column = std::string(part) + "_json";
                        if (raw.integer(
                                "SELECT COUNT(*) FROM pragma_table_info('results') WHERE name = '" + column + "'")
                            == 0)
                            continue; // a file of a schema before the column
                        const auto text = raw.text(
                            "SELECT " + column + " FROM results WHERE id = " + std::to_string(detail->result->id));
                        KL_COMPARE_TEXT(columns[part].is_null() ? std::string() : columns[part].dump(), text);
                        ++parts;
                    }
                }
        }
        QVERIFY(parts > 500);
    }

    void samplesReadBackAsTheSameValue()
    {
        const auto path = freshPath();
        const auto reply = sampledReply();
        auto store = Store::open(path);
        const auto recorded = recordSession(store, typedResult(reply));
        const auto first = store.iteration(recorded.session, 1);
        QVERIFY(first && first->result);
        QVERIFY(first->result->pcSampling.value() == decoded(reply["pc_sampling"]));
        QCOMPARE(first->result->pcSampling.value().pcs.size(), std::size_t(115));
        // The unsampled iteration reads back null, and its column is SQL NULL (not the text "null").
        QVERIFY(store.iteration(recorded.session, 2)->result->pcSampling.has_value() == false);
        RawDb raw(path);
        KL_COMPARE_TEXT(raw.rows("SELECT pc_sampling_json IS NULL FROM results ORDER BY id"), "0\n1\n");
    }

    void exportAndImportCarryTheSamples()
    {
        const auto reply = sampledReply();
        auto source = Store::open(freshPath());
        const auto recorded = recordSession(source, typedResult(reply));
        const auto file = freshPath();
        source.exportSession(recorded.session, file);
        auto target = Store::open(freshPath());
        const auto imported = target.importSession(file);
        const auto first = target.iteration(imported, 1);
        QVERIFY(first && first->result);
        QVERIFY(first->result->pcSampling.value() == decoded(reply["pc_sampling"]));
        QVERIFY(target.iteration(imported, 2)->result->pcSampling.has_value() == false);
    }

    void aCachedResultAnswersWithItsSamples()
    {
        const auto reply = sampledReply();
        auto store = Store::open(freshPath());
        const auto recorded = recordSession(store, typedResult(reply));
        store.cacheStore("key;lines=1", recorded.resultId);
        const auto cached = store.cacheLookup("key;lines=1");
        QVERIFY(cached);
        const auto again = storedReply(*cached); // what the loop hands on for a cache hit
        QVERIFY(again);
        QVERIFY(again->pcSampling == decoded(reply["pc_sampling"]));
    }

    // The loop's code listings arrive after their iteration was recorded: added to the stored compile
    // record of a finished iteration, or to a pending one's before it is written; the rest kept.
    void listingsJoinTheCompileRecordOfARecordedIteration()
    {
        QTemporaryDir dir;
        auto store = Store::open(dir.filePath(QStringLiteral("l.db")).toStdString());
        auto withCompile = fx::passedResult(0);
        Telemetry statics;
        statics.registers = 32;
        withCompile.compile.statics = statics;
        withCompile.compile.report = { { "arch", "sm_90" } };
        const auto recorded = recordSession(store, withCompile);
        StoredListings ptx;
        ptx.ptx = packedText("// ptx");
        ptx.listingsMs = 12.5;
        store.addListings({ recorded.session, 1 }, ptx);
        const auto first = store.iteration(recorded.session, 1);
        QVERIFY(first && first->result);
        QCOMPARE(codeListingsOf(first->result->compile).ptx, std::string("// ptx"));
        QCOMPARE(*first->result->compile.listings.listingsMs, 12.5);
        QCOMPARE(first->result->compile.statics->registers, 32); // kept
        QCOMPARE(first->result->compile.report.value("arch", ""), std::string("sm_90")); // kept
        StoredListings note;
        note.sassNote = "nvdisasm not found";
        store.addListings({ recorded.session, 2 }, note);
        const auto second = store.iteration(recorded.session, 2)->result->compile;
        QCOMPARE(second.listings.sassNote, std::string("nvdisasm not found"));
        QVERIFY(!second.listings.ptx); // each iteration its own fields
        QVERIFY(store.iteration(recorded.session, 1)->result->compile.listings.sassNote.empty());

        SessionRecord more;
        more.problemHash = store.addProblem(fx::problem());
        more.device = "NVIDIA H200 #0";
        more.proposer = "tuner";
        const auto session = store.createSession(more);
        const auto ref = store.beginIteration(session, store.addCandidate(session, fx::candidate(0)));
        store.recordResult(ref, withCompile);
        StoredListings pending;
        pending.ptx = packedText("// pending");
        store.addListings(ref, pending); // not written yet: joins the row to be
        store.finishIteration(ref);
        QCOMPARE(codeListingsOf(store.iteration(session, 1)->result->compile).ptx, std::string("// pending"));
        QVERIFY_THROWS_EXCEPTION(kl::Error, store.addListings({ session, 9 }, pending));
    }

    void version5FileMigratesWithItsResultsUnsampled()
    {
        const auto path = freshPath();
        std::int64_t session = 0;
        {
            auto store = Store::open(path);
            session = recordSession(store, fx::passedResult(7)).session;
        }
        {
            RawDb raw(path); // as version 5 laid it out
            raw.exec("ALTER TABLE results DROP COLUMN pc_sampling_json");
            raw.exec("PRAGMA user_version = 5");
            QCOMPARE(raw.integer("SELECT COUNT(*) FROM pragma_table_info('results') WHERE name = 'pc_sampling_json'"),
                std::int64_t(0));
        }
        auto store = Store::open(path); // migrates
        {
            RawDb raw(path);
            QCOMPARE(raw.integer("PRAGMA user_version"), std::int64_t(kSchemaVersion));
            QCOMPARE(kSchemaVersion, 8);
            KL_COMPARE_TEXT(raw.rows("SELECT pc_sampling_json FROM results"), "NULL\nNULL\n");
        }
        QVERIFY(store.iteration(session, 1)->result->pcSampling.has_value() == false);
        QVERIFY(store.iteration(session, 1)->result->medianUs); // the old row is intact
        // It goes on as a version-6 file: a sampled result is kept.
        const auto reply = sampledReply();
        const auto more = recordSession(store, typedResult(reply));
        QVERIFY(store.iteration(more.session, 1)->result->pcSampling.value() == decoded(reply["pc_sampling"]));
        QVERIFY(store.checkIntegrity().empty());
    }
};

QTEST_GUILESS_MAIN(TestStoreLines)
#include "test_store_lines.moc"
