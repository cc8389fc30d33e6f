// The review workspace's actions and panels beyond reading one session, offscreen: deleting a
// session (on copies: a synthetic store with an imported bundled session, a bundled .klsession),
// the evidence's tolerances and physical-floor check, a diff against an iteration of another session
// of the same problem (in the same store and in another file), and the session browser's columns.
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "core/figures/iteration_figures.h"
#include "core/store/store.h"
#include "review_fixture.h"
#include "synthetic_store.h"
#include "widgets/diff_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/report_view.h"
#include "widgets/session_browser.h"
#include "widgets/session_list_model.h"

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>

using namespace kl;
using namespace kl::gui;

namespace {

using testing::llmSession;
using testing::tunerSession;

void clickInNextMessageBox(QMessageBox::StandardButton button)
{
    QTimer::singleShot(0, qApp, [button] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        QVERIFY(box);
        box->button(button)->click();
    });
}

std::vector<std::int64_t> sessionIds(const QString& file)
{
    store::Store::Options options;
    options.readOnly = true;
    std::vector<std::int64_t> ids;
    for (const auto& row : store::Store::open(file.toStdString(), options).listSessions())
        ids.push_back(row.session.id);
    return ids;
}

} // namespace

class TestGuiReviewActions : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        testing::useTestSettings(QStringLiteral("test_gui_review_actions"));
        QVERIFY(m_dir.isValid());
    }

    void init()
    {
        m_review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(m_review.get()));
    }

    void cleanup() { m_review.reset(); }

    void deletesASessionAfterConfirmation()
    {
        // A store of two sessions: a synthetic one and the bundled tuner session imported.
        const QString file = m_dir.filePath(QStringLiteral("two.db"));
        QFile::remove(file);
        const auto synthetic = testing::writeSyntheticStore(file.toStdString(), 12);
        const std::int64_t imported = store::Store::open(file.toStdString()).importSession(tunerSession.toStdString());
        openAndWait(file);
        SessionBrowser* browser = m_review->sessionBrowser();
        QCOMPARE(browser->model()->rowCount(), 2);
        browser->setCurrentSession(imported);
        QVERIFY(browser->deleteButton()->isEnabled());

        clickInNextMessageBox(QMessageBox::Cancel);
        browser->deleteButton()->click();
        QCOMPARE(browser->model()->rowCount(), 2);
        QCOMPARE(sessionIds(file).size(), std::size_t(2));

        m_review->openSession(imported);
        clickInNextMessageBox(QMessageBox::Yes);
        browser->deleteButton()->click();
        QCOMPARE(browser->model()->rowCount(), 1);
        QCOMPARE(sessionIds(file), std::vector<std::int64_t> { synthetic.sessionId });
        // The deleted session was shown: the remaining one is now.
        QVERIFY(m_review->hasSession());
        QCOMPARE(m_review->selection()->session()->session.id, synthetic.sessionId);

        // A copy of a bundled .klsession: its only session goes, the browser says the store is empty.
        const QString copy = m_dir.filePath(QStringLiteral("copy.klsession"));
        QFile::remove(copy);
        QVERIFY(QFile::copy(llmSession, copy));
        QFile(copy).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        openAndWait(copy);
        QCOMPARE(m_review->deleteSession(1), QString());
        QCOMPARE(browser->model()->rowCount(), 0);
        QVERIFY(!m_review->hasSession());
        QVERIFY(sessionIds(copy).empty());
        // An unknown session is a categorised refusal.
        QVERIFY(m_review->deleteSession(99).contains(QStringLiteral("[store.unknown-session]")));
    }

    void batchedFiguresAreTheOnesReadOneByOne()
    {
        const QString synthetic = m_dir.filePath(QStringLiteral("figures.db"));
        QFile::remove(synthetic);
        testing::writeSyntheticStore(synthetic.toStdString(), 40);
        store::Store::Options options;
        options.readOnly = true;
        int compared = 0, stalls = 0, telemetry = 0;
        for (const QString& file : { tunerSession, llmSession, synthetic }) {
            const store::Store s = store::Store::open(file.toStdString(), options);
            const std::int64_t session = s.listSessions().front().session.id;
            const auto batched = figures::readFigures(s, session);
            const auto rows = s.listIterations(session);
            QCOMPARE(batched.size(), rows.size());
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const auto one = figures::figuresOf(*s.iteration(session, rows[i].index));
                const auto& many = batched[i];
                const QString where = file + QStringLiteral(" iteration ") + QString::number(one.index);
                QVERIFY2(many.index == one.index && many.category == one.category && many.passed == one.passed
                        && many.status == one.status && many.proposer == one.proposer,
                    qPrintable(where));
                QVERIFY2(many.registers == one.registers && many.theoreticalOccupancy == one.theoreticalOccupancy
                        && many.occupancyLimiter == one.occupancyLimiter,
                    qPrintable(where));
                QCOMPARE(many.sizes.size(), one.sizes.size());
                for (std::size_t k = 0; k < one.sizes.size(); ++k) {
                    const auto& a = many.sizes[k];
                    const auto& b = one.sizes[k];
                    QVERIFY2(a.size == b.size && a.medianUs == b.medianUs && a.p20Us == b.p20Us && a.p80Us == b.p80Us
                            && a.gbps == b.gbps && a.pctOfCopy == b.pctOfCopy && a.speedup == b.speedup
                            && a.achievedOccupancy == b.achievedOccupancy && a.stalls == b.stalls,
                        qPrintable(where));
                    QCOMPARE(a.baselineUs.has_value(), b.baselineUs.has_value());
                    if (b.baselineUs)
                        QVERIFY2(std::abs(*a.baselineUs - *b.baselineUs) < 1e-9 * *b.baselineUs, qPrintable(where));
                    stalls += b.stalls.empty() ? 0 : 1;
                }
                telemetry += one.registers ? 1 : 0;
                ++compared;
            }
        }
        QCOMPARE(compared, 41 + 5 + 40);
        QVERIFY(stalls > 0); // the synthetic store's stall profiles took part
        QVERIFY(telemetry > 0);
    }

    void evidenceShowsTheToleranceAndTheFloorCheck()
    {
        openAndWait(tunerSession);
        m_review->selection()->select(6);
        const QString evidence = m_review->evidenceView()->toPlainText();
        // The stored problem's fp16 tolerance, and iteration 6's median against the same-job copy.
        QVERIFY2(evidence.contains(QStringLiteral("y (f16): |actual - expected| <= 0.01 + 0.01 * |expected|")),
            qPrintable(evidence));
        QVERIFY2(evidence.contains(QStringLiteral("Floor check at 8192x4096")), qPrintable(evidence));
        QVERIFY2(evidence.contains(QStringLiteral("above the floor (40.26 us >= 33.34 us")), qPrintable(evidence));
    }

    void diffsAgainstAnIterationOfAnotherSessionOfTheSameProblem()
    {
        // Both bundled sessions of layernorm_gelu in one store, and a synthetic session of another problem.
        const QString file = m_dir.filePath(QStringLiteral("both.db"));
        QFile::remove(file);
        testing::writeSyntheticStore(file.toStdString(), 3);
        std::int64_t tuner = 0, llm = 0;
        {
            store::Store s = store::Store::open(file.toStdString());
            tuner = s.importSession(tunerSession.toStdString());
            llm = s.importSession(llmSession.toStdString());
        }
        openAndWait(file);
        m_review->openSession(tuner);
        m_review->selection()->select(6);
        DiffPanel* diff = m_review->diffPanel();
        // The chooser: this session and the LLM one, not the synthetic session of another problem.
        QComboBox* sessions = diff->sessionBox();
        QCOMPARE(sessions->count(), 2);
        QVERIFY(sessions->isEnabled());
        const int llmEntry = sessions->findData(QVariant::fromValue<qlonglong>(llm));
        QVERIFY(llmEntry > 0);
        QVERIFY2(sessions->itemText(llmEntry).contains(QStringLiteral("H200 LLM loop (replay)")),
            qPrintable(sessions->itemText(llmEntry)));
        // Choosing it lists its iterations in the box (1..5, no "its parent"), then iteration 4.
        emit sessions->activated(llmEntry);
        QCOMPARE(diff->comparedSession(), llm);
        QCOMPARE(diff->compareBox()->minimum(), 1);
        QCOMPARE(diff->compareBox()->maximum(), 5);
        diff->compareBox()->setValue(4);
        QVERIFY(!diff->shownDiff().hunks.empty());
        const QString header = diff->headerText();
        QVERIFY2(header.contains(QStringLiteral("<b>Iteration 6</b> of session %1 (tuner:auto").arg(tuner)),
            qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("against iteration 4 of session %1 (llm:openai/replay").arg(llm)),
            qPrintable(header));
        QVERIFY(!diff->body()->toPlainText().isEmpty());
        // The selection moving keeps the other session's iteration as the baseline report.
        m_review->selection()->select(4);
        QVERIFY2(diff->headerText().contains(QStringLiteral("<b>Iteration 4</b> of session")),
            qPrintable(diff->headerText()));
        QVERIFY(diff->headerText().contains(QStringLiteral("against iteration 4 of session %1").arg(llm)));
        // Back to this session: against the parent again.
        emit sessions->activated(0);
        QCOMPARE(diff->comparedSession(), std::int64_t(0));
        QVERIFY2(diff->headerText().contains(QStringLiteral("against its parent")), qPrintable(diff->headerText()));
    }

private:
    void openAndWait(const QString& path) { testing::openAndWait(*m_review, path); }

    QTemporaryDir m_dir;
    std::unique_ptr<ReviewWorkspace> m_review;
};

QTEST_MAIN(TestGuiReviewActions)
#include "test_review_actions.moc"
