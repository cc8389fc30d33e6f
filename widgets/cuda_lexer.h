#pragma once
// C++ highlighting plus what a CUDA engineer expects to see coloured: execution-space and memory
// qualifiers, the built-in index variables, intrinsics, the half/bfloat types, and the "@kl"
// directive marker inside comments.
#include <Qsci/qscilexercpp.h>

namespace kl::gui {

class CudaLexer : public QsciLexerCPP {
    Q_OBJECT
public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override;
    const char* keywords(int set) const override;
    QColor defaultColor(int style) const override;
    QFont defaultFont(int style) const override;

    // The word that marks a directive comment ("// @kl tunable ..."), styled as a task marker.
    static constexpr const char* directiveMarker = "@kl";
};

} // namespace kl::gui
