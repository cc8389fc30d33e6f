// The editor, the tunables panel and the occupancy chart, offscreen.
#include "core/model/problem.h"
#include "widgets/allowed_values_spin_box.h"
#include "widgets/cuda_lexer.h"
#include "widgets/kernel_editor.h"
#include "widgets/occupancy_chart.h"
#include "widgets/occupancy_panel.h"
#include "widgets/tunables_panel.h"

#include <QComboBox>
#include <QImage>
#include <QSignalSpy>
#include <QTest>

#include <set>

using namespace kl;
using namespace kl::gui;

namespace {

Problem example() { return loadProblem(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json"); }

int styleOfFirst(KernelEditor& editor, const QString& word)
{
    const int offset = editor.text().indexOf(word);
    if (offset < 0)
        return -1;
    // The text is ASCII, so character offsets are byte positions.
    editor.SendScintilla(QsciScintillaBase::SCI_COLOURISE, 0L, -1L);
    return static_cast<int>(
        editor.SendScintilla(QsciScintillaBase::SCI_GETSTYLEAT, static_cast<unsigned long>(offset)));
}

int distinctColours(const QImage& image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3)
            colours.insert(image.pixel(x, y));
    return static_cast<int>(colours.size());
}

} // namespace

class TestGuiWidgets : public QObject {
    Q_OBJECT
private slots:
    void editorHighlightsCuda()
    {
        KernelEditor editor;
        editor.resize(800, 600);
        QSignalSpy edited(&editor, &KernelEditor::sourceEdited);
        const Problem problem = example();
        editor.setSource(QString::fromStdString(problem.baseline.source));
        QCOMPARE(edited.count(), 0);
        QCOMPARE(editor.source(), QString::fromStdString(problem.baseline.source));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("__global__")), int(QsciLexerCPP::Keyword));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("__restrict__")), int(QsciLexerCPP::Keyword));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("threadIdx")), int(QsciLexerCPP::KeywordSet2));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("__shfl_xor_sync")), int(QsciLexerCPP::KeywordSet2));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("__half*")), int(QsciLexerCPP::GlobalClass));
        QCOMPARE(styleOfFirst(editor, QStringLiteral("@kl")), int(QsciLexerCPP::TaskMarker));
        QVERIFY(editor.marginLineNumbers(0));
        QCOMPARE(editor.lexer()->language(), "CUDA");

        QVERIFY(!editor.isUndoAvailable());
        editor.insertAt(QStringLiteral("// edited\n"), 0, 0);
        QCOMPARE(edited.count(), 1);
        QVERIFY(editor.isUndoAvailable());
    }

    void editorFindsDirectiveLines()
    {
        KernelEditor editor;
        editor.setSource(QStringLiteral("#include <cuda_fp16.h>\n// @kl tunable T = 1 in 1, 2\n  //   @kl launch k "
                                        "grid=(1) block=(T) args=()\n// not @kl a directive\nint x;\n"));
        QCOMPARE(editor.directiveLines(), (QList<int> { 2, 3 }));
        // The directive lines carry the indicator, the others do not.
        const int line2 = static_cast<int>(editor.positionFromLineIndex(1, 3));
        const int line4 = static_cast<int>(editor.positionFromLineIndex(3, 3));
        const auto indicatorsAt = [&editor](int position) {
            return editor.SendScintilla(QsciScintillaBase::SCI_INDICATORALLONFOR, static_cast<unsigned long>(position));
        };
        QVERIFY(indicatorsAt(line2) != 0);
        QCOMPARE(indicatorsAt(line4), 0L);
    }

    void editorShowsDiagnosticsAtTheirLines()
    {
        KernelEditor editor;
        editor.setSource(QStringLiteral("a\nb\nc\nd\n"));
        CompilerDiagnostic error;
        error.line = 2;
        error.severity = "error";
        error.message = "expected a \";\"";
        CompilerDiagnostic warning;
        warning.line = 4;
        warning.severity = "warning";
        warning.message = "unused variable";
        CompilerDiagnostic header;
        header.line = 0; // not in the candidate: not shown in the editor
        header.severity = "error";
        header.message = "in a header";
        CompilerDiagnostic past;
        past.line = 99;
        past.severity = "error";
        past.message = "past the end";
        editor.setDiagnostics({ error, warning, header, past });
        QCOMPARE(editor.diagnosticLineCount(), 2);
        QVERIFY(editor.markersAtLine(1) != 0);
        QVERIFY(editor.markersAtLine(3) != 0);
        QCOMPARE(editor.markersAtLine(0), 0u);
        QVERIFY(editor.annotation(1).contains(QStringLiteral("expected a")));
        QVERIFY(editor.annotation(3).contains(QStringLiteral("unused variable")));
        QVERIFY(editor.markersAtLine(1) != editor.markersAtLine(3)); // errors and warnings look different
        editor.clearDiagnostics();
        QCOMPARE(editor.markersAtLine(1), 0u);
        QVERIFY(editor.annotation(1).isEmpty());
    }

    void tunablesPanelOffersAllowedValuesOnly()
    {
        const Problem problem = example();
        TunablesPanel panel;
        QSignalSpy changed(&panel, &TunablesPanel::valuesChanged);
        panel.setTunables(problem.baseline.tunables, problem.baseline.defaults());
        QCOMPARE(changed.count(), 0);
        QCOMPARE(panel.values(), problem.baseline.defaults());
        QVERIFY(panel.shows(problem.baseline.tunables));

        auto* threads = qobject_cast<QComboBox*>(panel.editorFor(QStringLiteral("THREADS")));
        QVERIFY(threads);
        const Tunable* declared = problem.baseline.tunable("THREADS");
        QCOMPARE(threads->count(), static_cast<int>(declared->values.size()));
        for (int i = 0; i < threads->count(); ++i)
            QCOMPARE(threads->itemData(i).toLongLong(), declared->values[static_cast<std::size_t>(i)]);

        threads->setCurrentIndex(threads->findText(QStringLiteral("512")));
        QCOMPARE(changed.count(), 1);
        const auto values = changed.takeFirst().at(0).value<TunableValues>();
        QCOMPARE(values.at("THREADS"), std::int64_t(512));
        QCOMPARE(values.at("VEC"), problem.baseline.defaults().at("VEC"));

        TunableValues wanted = problem.baseline.defaults();
        wanted["VEC"] = 8;
        wanted["NOT_DECLARED"] = 3;
        panel.setValues(wanted);
        QCOMPARE(changed.count(), 0);
        QCOMPARE(panel.values().at("VEC"), std::int64_t(8));
        QCOMPARE(panel.values().count("NOT_DECLARED"), std::size_t(0));
    }

    void tunablesPanelUsesASpinBoxForLongLists()
    {
        Tunable many;
        many.name = "TILE";
        for (std::int64_t v = 1; v <= 64; v *= 2)
            many.values.push_back(v);
        for (std::int64_t v = 96; v <= 1024; v += 32)
            many.values.push_back(v);
        many.defaultValue = 8;
        TunablesPanel panel;
        panel.setTunables({ many }, {});
        auto* spin = qobject_cast<AllowedValuesSpinBox*>(panel.editorFor(QStringLiteral("TILE")));
        QVERIFY(spin);
        QCOMPARE(spin->value(), 8);
        QSignalSpy changed(&panel, &TunablesPanel::valuesChanged);
        spin->stepBy(1);
        QCOMPARE(spin->value(), 16);
        spin->stepBy(3);
        QCOMPARE(spin->value(), 96);
        spin->stepBy(-100);
        QCOMPARE(spin->value(), 1);
        QCOMPARE(changed.count(), 3);
        QString typed = QStringLiteral("100");
        int pos = 3;
        QCOMPARE(spin->validate(typed, pos), QValidator::Intermediate); // not allowed
        typed = QStringLiteral("128");
        QCOMPARE(spin->validate(typed, pos), QValidator::Acceptable);
        typed = QStringLiteral("100");
        spin->fixup(typed);
        QCOMPARE(typed, QStringLiteral("96"));
    }

    void tunablesPanelWithoutTunables()
    {
        TunablesPanel panel;
        panel.setTunables({}, {});
        QVERIFY(panel.values().empty());
        QVERIFY(!panel.editorFor(QStringLiteral("THREADS")));
    }

    void occupancyChartReproducesTheH200Cases()
    {
        OccupancyChart chart;
        chart.resize(600, 320);
        QVERIFY(!chart.hasKernel());
        const DeviceLimits h200 = DeviceLimits::forArch("sm_90");
        // docs/gpu-facts.md, Occupancy: 32 regs × 256 threads → 8 blocks (100%); 72 × 128 → 7 blocks (43.75%).
        chart.setKernel(h200, { QStringLiteral("k"), 256, 32, 0, 1 });
        QVERIFY(chart.hasKernel());
        QCOMPARE(chart.currentPoint(), QPointF(32, 100.0));
        QVERIFY(chart.curvePointCount() > 10);
        chart.setKernel(h200, { QStringLiteral("k"), 128, 72, 0, 1 });
        QCOMPARE(chart.currentPoint(), QPointF(72, 43.75));

        chart.setVariation(OccupancyChart::Variation::BlockSize);
        QCOMPARE(chart.currentPoint().x(), 128.0);
        chart.setVariation(OccupancyChart::Variation::SharedMemory);
        QCOMPARE(chart.currentPoint().x(), 0.0);
        QVERIFY(chart.curvePointCount() > 10);

        // It renders: a real picture, not a blank widget.
        const QImage image = chart.grab().toImage();
        QVERIFY(image.width() >= 600);
        QVERIFY2(distinctColours(image) > 20, "the chart rendered as (nearly) one colour");
        chart.clear();
        QVERIFY(!chart.hasKernel());
        QCOMPARE(chart.curvePointCount(), 0);
    }

    void occupancyPanelSwitchesKernels()
    {
        OccupancyPanel panel;
        const DeviceLimits h200 = DeviceLimits::forArch("sm_90");
        panel.setKernels(h200, { { QStringLiteral("a"), 256, 32, 0, 1 }, { QStringLiteral("b"), 128, 72, 0, 1 } });
        QCOMPARE(panel.kernelChooser()->count(), 2);
        QCOMPARE(panel.chart()->currentPoint(), QPointF(32, 100.0));
        panel.kernelChooser()->setCurrentIndex(1);
        QCOMPARE(panel.chart()->currentPoint(), QPointF(72, 43.75));
        panel.variationChooser()->setCurrentIndex(1);
        QCOMPARE(panel.chart()->variation(), OccupancyChart::Variation::BlockSize);
        panel.clear();
        QVERIFY(!panel.chart()->hasKernel());
    }
};

QTEST_MAIN(TestGuiWidgets)
#include "test_widgets.moc"
