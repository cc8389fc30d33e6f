#pragma once
// The candidate source editor: CUDA highlighting, line numbers, "// @kl" directive lines tinted,
// and compiler diagnostics shown where they happened (a margin marker and an annotation below
// the line).
#include "core/compile/compiler.h"

#include <Qsci/qsciscintilla.h>
#include <Qsci/qscistyle.h>

#include <vector>

namespace kl::gui {

class CudaLexer;

class KernelEditor : public QsciScintilla {
    Q_OBJECT
public:
    explicit KernelEditor(QWidget* parent = nullptr);

    void setSource(const QString& source); // replaces the text; not reported as an edit
    QString source() const;

    // Replaces the shown diagnostics. Lines are 1-based as the compiler reports them; lines
    // outside the text (0, or a header's) are not shown here.
    void setDiagnostics(const std::vector<CompilerDiagnostic>& diagnostics);
    void clearDiagnostics();
    int diagnosticLineCount() const { return m_diagnosticLines; }

    // 1-based line numbers of the "// @kl" directive lines, as highlighted.
    QList<int> directiveLines() const;

    void goToLine(int line); // 1-based

signals:
    // The engineer changed the text (not emitted by setSource).
    void sourceEdited();

private:
    void highlightDirectives();

    CudaLexer* m_lexer;
    int m_directiveIndicator = 0;
    int m_errorMarker = 0;
    int m_warningMarker = 0;
    QsciStyle m_errorStyle;
    QsciStyle m_warningStyle;
    int m_diagnosticLines = 0;
    bool m_settingSource = false;
};

} // namespace kl::gui
