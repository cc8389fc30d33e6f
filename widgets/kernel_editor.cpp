#include "widgets/kernel_editor.h"

#include "widgets/cuda_lexer.h"
#include "widgets/string_conversion.h"

#include <QFontDatabase>
#include <QRegularExpression>
#include <algorithm>
#include <map>

namespace kl::gui {

namespace {

constexpr int kLineNumberMargin = 0;
constexpr int kMarkerMargin = 1;
constexpr int kFoldMargin = 2;

// Annotation styles live after the lexer's styles (0..127 with inactive variants).
constexpr int kErrorAnnotationStyle = 200;
constexpr int kWarningAnnotationStyle = 201;

const QRegularExpression& directivePattern()
{
    static const QRegularExpression pattern(QStringLiteral("^\\s*//\\s*@kl\\b"));
    return pattern;
}

} // namespace

KernelEditor::KernelEditor(QWidget* parent)
    : QsciScintilla(parent)
    , m_lexer(new CudaLexer(this))
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    setFont(mono);
    setLexer(m_lexer);
    setUtf8(true);
    setTabWidth(4);
    setIndentationsUseTabs(false);
    setAutoIndent(true);
    setBraceMatching(QsciScintilla::SloppyBraceMatch);
    setCaretLineVisible(true);
    setCaretLineBackgroundColor(QColor(0xf2, 0xf6, 0xfc));
    setEdgeMode(QsciScintilla::EdgeLine);
    setEdgeColumn(120);
    setEdgeColor(QColor(0xe8, 0xe8, 0xe8));
    setWrapMode(QsciScintilla::WrapNone);

    setMarginsFont(mono);
    setMarginType(kLineNumberMargin, QsciScintilla::NumberMargin);
    setMarginLineNumbers(kLineNumberMargin, true);
    setMarginWidth(kLineNumberMargin, QStringLiteral("00000"));
    setMarginsForegroundColor(QColor(0x8a, 0x8a, 0x8a));
    setMarginsBackgroundColor(QColor(0xf7, 0xf7, 0xf7));

    setMarginType(kMarkerMargin, QsciScintilla::SymbolMargin);
    setMarginWidth(kMarkerMargin, 14);
    setMarginSensitivity(kMarkerMargin, false);
    m_errorMarker = markerDefine(QsciScintilla::Circle);
    setMarkerBackgroundColor(QColor(0xd0, 0x21, 0x21), m_errorMarker);
    setMarkerForegroundColor(QColor(0x90, 0x10, 0x10), m_errorMarker);
    m_warningMarker = markerDefine(QsciScintilla::Circle);
    setMarkerBackgroundColor(QColor(0xe8, 0xa3, 0x17), m_warningMarker);
    setMarkerForegroundColor(QColor(0xa0, 0x70, 0x00), m_warningMarker);
    setFolding(QsciScintilla::BoxedTreeFoldStyle, kFoldMargin);

    // Directive lines get a tinted box so the launch rule and the tunables stand out from code.
    m_directiveIndicator = indicatorDefine(QsciScintilla::FullBoxIndicator);
    setIndicatorForegroundColor(QColor(0xff, 0xb0, 0x40, 60), m_directiveIndicator);
    setIndicatorOutlineColor(QColor(0xff, 0xb0, 0x40, 0), m_directiveIndicator);
    setIndicatorDrawUnder(true, m_directiveIndicator);

    QFont annotationFont = mono;
    annotationFont.setPointSizeF(mono.pointSizeF() * 0.95);
    m_errorStyle = QsciStyle(kErrorAnnotationStyle, QStringLiteral("error"), QColor(0x8b, 0x00, 0x00),
        QColor(0xfd, 0xe7, 0xe7), annotationFont);
    m_warningStyle = QsciStyle(kWarningAnnotationStyle, QStringLiteral("warning"), QColor(0x6b, 0x4a, 0x00),
        QColor(0xfd, 0xf5, 0xdc), annotationFont);
    setAnnotationDisplay(QsciScintilla::AnnotationBoxed);

    connect(this, &QsciScintilla::textChanged, this, [this] {
        highlightDirectives();
        if (!m_settingSource)
            emit sourceEdited();
    });
}

void KernelEditor::setSource(const QString& source)
{
    m_settingSource = true;
    setText(source);
    m_settingSource = false;
    // Undo must not step back past a freshly loaded source into the previous problem's.
    SendScintilla(SCI_EMPTYUNDOBUFFER);
    clearDiagnostics();
    setModified(false);
    highlightDirectives();
}

QString KernelEditor::source() const { return text(); }

void KernelEditor::setDiagnostics(const std::vector<CompilerDiagnostic>& diagnostics)
{
    clearDiagnostics();
    // Several diagnostics on one line go into one annotation, worst severity first.
    std::map<int, std::pair<bool, QStringList>> byLine;
    for (const CompilerDiagnostic& diagnostic : diagnostics) {
        const int line = diagnostic.line - 1;
        if (diagnostic.line <= 0 || line >= lines())
            continue;
        auto& [isError, messages] = byLine[line];
        const bool error = diagnostic.severity != "warning";
        isError = isError || error;
        //: %1 is "error" or "warning" as the compiler said it, %2 the compiler's message
        messages.append(tr("%1: %2").arg(toQString(diagnostic.severity), toQString(diagnostic.message)));
    }
    for (const auto& [line, entry] : byLine) {
        const auto& [isError, messages] = entry;
        markerAdd(line, isError ? m_errorMarker : m_warningMarker);
        annotate(line, messages.join(QLatin1Char('\n')), isError ? m_errorStyle : m_warningStyle);
    }
    m_diagnosticLines = static_cast<int>(byLine.size());
}

void KernelEditor::clearDiagnostics()
{
    markerDeleteAll(m_errorMarker);
    markerDeleteAll(m_warningMarker);
    clearAnnotations();
    m_diagnosticLines = 0;
}

QList<int> KernelEditor::directiveLines() const
{
    QList<int> result;
    for (int line = 0; line < lines(); ++line) {
        if (directivePattern().match(text(line)).hasMatch())
            result.append(line + 1);
    }
    return result;
}

void KernelEditor::goToLine(int line)
{
    if (line <= 0)
        return;
    // In the middle of the pane, with what comes before and after it: at the bottom edge (where
    // ensureLineVisible leaves a line below the view) it reads as the end of the kernel. Scrolled
    // first, the cursor last: scrolling must not leave the cursor (and what follows it) elsewhere.
    const int onScreen = static_cast<int>(SendScintilla(SCI_LINESONSCREEN));
    const int visible = static_cast<int>(SendScintilla(SCI_VISIBLEFROMDOCLINE, line - 1));
    setFirstVisibleLine(std::max(0, visible - onScreen / 2));
    setCursorPosition(line - 1, 0);
    ensureLineVisible(line - 1);
    setFocus();
}

void KernelEditor::highlightDirectives()
{
    const int lineCount = lines();
    if (lineCount == 0)
        return;
    clearIndicatorRange(0, 0, lineCount - 1, lineLength(lineCount - 1), m_directiveIndicator);
    for (int line = 0; line < lineCount; ++line) {
        const QString lineText = text(line);
        if (directivePattern().match(lineText).hasMatch())
            fillIndicatorRange(line, 0, line, lineLength(line), m_directiveIndicator);
    }
}

} // namespace kl::gui
