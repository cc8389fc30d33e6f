// Source beside its SASS/PTX for every iteration, two iterations' code compared, and compiler flags
// in the source header (issue 28), in the review workspace on the bundled H200 sessions: the tuner
// session stored no listing (its PTX is compiled here with the real NVRTC); the WMMA GEMM session
// stored the H200's SASS of both iterations.
#include "core/store/store.h"
#include "review_fixture.h"
#include "widgets/code_diff_panel.h"
#include "widgets/kernel_editor.h"
#include "widgets/line_profile_panel.h"
#include "widgets/source_panel.h"

#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>

using namespace kl;
using namespace kl::gui;
using kl::testing::inspectorTab;

namespace {

const QString kGemmSession = QStringLiteral(KL_SOURCE_DIR "/resources/sessions/gemm_fp16-wmma-h200.klsession");

// The mix table's row of a class: its cells, empty when the table has no such row.
QStringList mixRow(const QTableWidget* table, const QString& name)
{
    for (int row = 0; row < table->rowCount(); ++row)
        if (table->item(row, 0) && table->item(row, 0)->text() == name) {
            QStringList cells;
            for (int column = 0; column < table->columnCount(); ++column)
                cells.append(table->item(row, column)->text());
            return cells;
        }
    return {};
}

} // namespace

class TestCodeViews : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { testing::useTestSettings(QStringLiteral("test_code_views")); }

    // A session recorded before listings were stored: the Lines tab compiles the iteration's source
    // here and links its PTX to the source; code NVRTC inlined from CUDA's headers links to no line.
    void anIterationWithoutAStoredListingShowsItsPtx()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::tunerSession);
        auto* panel = inspectorTab<LineProfilePanel>(*review, QStringLiteral("Lines"));
        QVERIFY(panel);
        review->selection()->select(6);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->listing()->rows().isEmpty(), 20000);
        QVERIFY2(panel->listingNote().startsWith(QStringLiteral("compiled here from the stored source (NVRTC ")),
            qPrintable(panel->listingNote()));
        QVERIFY2(panel->listingTitle().contains(QStringLiteral("compiled here: no listing stored")),
            qPrintable(panel->listingTitle()));
        // The kernel's first line of code is shown with its instructions, not line 1's comment.
        QVERIFY2(
            panel->listingTitle().startsWith(QStringLiteral("PTX of line 162: ")), qPrintable(panel->listingTitle()));
        QVERIFY(!panel->listing()->highlightedRows().isEmpty());
        const int sourceLines = panel->editor()->lines();
        for (const CodeRow& row : panel->listing()->rows())
            QVERIFY2(row.sourceLine <= sourceLines, qPrintable(row.text)); // cuda_fp16.hpp's lines are not the kernel's
        // The unsampled iteration's empty hot-lines list gives its room to the code.
        QVERIFY(panel->hotLines()->isHidden());
    }

    // The stored nvdisasm -g listing of the WMMA kernel attributes its HMMA to CUDA's mma.hpp (line 634):
    // those rows link to no line of the candidate rather than to an unrelated one.
    void headerCodeInTheSassLinksToNoCandidateLine()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, kGemmSession);
        auto* panel = inspectorTab<LineProfilePanel>(*review, QStringLiteral("Lines"));
        QVERIFY(panel);
        review->selection()->select(2);
        QTRY_VERIFY(!panel->listing()->rows().isEmpty());
        QVERIFY2(panel->listingTitle().startsWith(QStringLiteral("SASS of line ")), qPrintable(panel->listingTitle()));
        int hmma = 0;
        for (const CodeRow& row : panel->listing()->rows()) {
            QVERIFY2(row.sourceLine <= panel->editor()->lines(), qPrintable(row.text));
            if (row.text.contains(QStringLiteral("HMMA"))) {
                ++hmma;
                QCOMPARE(row.sourceLine, 0);
            }
        }
        QCOMPARE(hmma, 40);
    }

    void theSassOfTwoIterationsComparedWithTheirMix()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, kGemmSession);
        review->selection()->select(2);
        review->compareCode(0); // Review ▸ Compare Code With… 0: its parent
        auto* panel = review->codeDiffPanel();
        QCOMPARE(review->inspector()->currentWidget(), panel);
        QVERIFY2(panel->headerText().startsWith(QStringLiteral("<b>SASS of iteration 2</b> against its parent, "
                                                               "iteration 1: +")),
            qPrintable(panel->headerText()));
        QCOMPARE(panel->shownComparison().kind, std::string("SASS"));
        // The WMMA rewrite brings the tensor cores in: none before, some after.
        const QStringList tensor = mixRow(panel->mixTable(), QStringLiteral("tensor core (HMMA, WGMMA...)"));
        QCOMPARE(tensor.size(), 4);
        QCOMPARE(tensor[1], QStringLiteral("0"));
        QVERIFY2(tensor[2].toInt() > 0 && tensor[3] == QLatin1Char('+') + tensor[2], qPrintable(tensor.join(u' ')));
        QCOMPARE(panel->mixTable()->horizontalHeaderItem(1)->text(), QStringLiteral("Iteration 1"));
        QVERIFY(mixRow(panel->mixTable(), QStringLiteral("total")).size() == 4);
        QCOMPARE(panel->beforeTitle(), QStringLiteral("− SASS of iteration 1"));
        QVERIFY(panel->afterPane()->toPlainText().contains(QStringLiteral("HMMA")));
        QVERIFY(!panel->beforePane()->toPlainText().contains(QStringLiteral("HMMA")));
        // The PTX on request.
        panel->setCode(CodeDiffPanel::Code::Ptx);
        QCOMPARE(panel->shownComparison().kind, std::string("PTX"));
        QVERIFY(panel->afterPane()->toPlainText().contains(QStringLiteral("mma.sync")));
    }

    // No listing stored on either side: both sources compiled here and their PTX compared; a panel
    // that may not compile says why instead of staying empty.
    void iterationsWithoutListingsComparedOnPtxCompiledHere()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::tunerSession);
        CodeDiffPanel bare(review->selection());
        review->selection()->select(6);
        review->compareCode(0);
        QVERIFY2(bare.headerText().contains(QStringLiteral("No code to compare: nothing to compare: iteration 4: no "
                                                           "PTX or SASS stored for this iteration")),
            qPrintable(bare.headerText()));
        auto* panel = review->codeDiffPanel();
        QTRY_COMPARE_WITH_TIMEOUT(panel->shownComparison().kind, std::string("PTX"), 30000);
        QVERIFY2(panel->headerText().startsWith(QStringLiteral("<b>PTX of iteration 6</b> against its parent, "
                                                               "iteration 4")),
            qPrintable(panel->headerText()));
        QVERIFY2(panel->headerText().contains(QStringLiteral("compiled here from the stored source")),
            qPrintable(panel->headerText()));
        QVERIFY(panel->shownComparison().afterMix.count(lines::InstructionClass::GlobalLoad) > 0);
        QVERIFY(mixRow(panel->mixTable(), QStringLiteral("total")).size() == 4);
    }

    // A compiler flag's value is shown as the option NVRTC got, beside the tunables.
    void theSourceHeaderShowsTheCompilerFlags()
    {
        auto detail = std::make_shared<store::IterationDetail>();
        detail->row.index = 1;
        store::CandidateRecord candidate;
        candidate.fileName = "flags.cu";
        candidate.source = "// @kl flag maxrregcount = 0 in 0, 32\n// @kl flag use_fast_math = 0 in 0, 1\n"
                           "// @kl tunable THREADS = 64 in 64, 128\n"
                           "// @kl launch k grid=(1) block=(THREADS) args=()\nextern \"C\" __global__ void k() {}\n";
        candidate.tunables = { { "maxrregcount", 32 }, { "use_fast_math", 1 }, { "THREADS", 128 } };
        detail->candidate = candidate;
        auto view = std::make_shared<SessionView>();
        view->rows = { detail->row };
        view->indexCandidates();
        IterationSelection selection;
        selection.setSession(view, [detail](int) { return std::shared_ptr<const store::IterationDetail>(detail); });
        SourcePanel panel(&selection);
        selection.select(1);
        QVERIFY2(
            panel.headerText().contains(QStringLiteral("compiler flags: <tt>-maxrregcount=32 -use_fast_math</tt>")),
            qPrintable(panel.headerText()));
    }
};

QTEST_MAIN(TestCodeViews)
#include "test_code_views.moc"
