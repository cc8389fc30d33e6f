#pragma once
// The selected iteration's compiled code against the iteration it is compared with (its parent, or the
// one the engineer picks): SASS where both have it, else PTX saying why, side by side with the changed
// rows marked, and above it the instruction mix of both and the change per class (core's
// report::compareCode draws nothing; this only shows it). Compiler Explorer's diff view, per iteration.
#include "core/report/code_comparison.h"
#include "core/report/listings_compiled_here.h"
#include "widgets/iteration_selection.h"

#include <QFutureWatcher>
#include <QWidget>

#include <functional>
#include <map>
#include <vector>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QSpinBox;
class QTableWidget;

namespace kl::gui {

class CodeDiffPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    enum class Code { SassWhereStored, Ptx };

    explicit CodeDiffPanel(IterationSelection* selection, QWidget* parent = nullptr);

    // Compiles an iteration's stored source when its session kept no listing (report::compileListingsHere),
    // off the GUI thread; without one such an iteration has nothing to compare, and the header says so.
    using ListingCompiler
        = std::function<report::ListingsCompiledHere(const store::CandidateRecord& candidate, const std::string& arch)>;
    void setListingCompiler(ListingCompiler compiler) { m_compiler = std::move(compiler); }
    bool isCompiling() const { return m_compiling.isRunning(); }

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    void setCode(Code code);
    const report::CodeComparison& shownComparison() const { return m_comparison; }
    QString headerText() const;
    QTableWidget* mixTable() const { return m_mix; }
    QPlainTextEdit* beforePane() const { return m_before; }
    QPlainTextEdit* afterPane() const { return m_after; }
    QString beforeTitle() const;
    QString afterTitle() const;
    QSpinBox* compareBox() const { return m_compare; }

private:
    void compare();
    store::CodeListings listingsOf(const store::IterationDetail& detail) const;
    void compileHere(std::vector<store::CandidateRecord> candidates);
    void compiledHere();
    void fillMix();
    void fillPanes();

    IterationSelection* m_selection;
    QComboBox* m_codeBox;
    QSpinBox* m_compare;
    QLabel* m_header;
    QTableWidget* m_mix;
    QLabel* m_beforeTitle;
    QLabel* m_afterTitle;
    QPlainTextEdit* m_before;
    QPlainTextEdit* m_after;
    std::shared_ptr<const IterationFocus> m_focus;
    report::CodeComparison m_comparison;
    Code m_code = Code::SassWhereStored;
    std::shared_ptr<const SessionView> m_session;
    ListingCompiler m_compiler;
    using Compiled = std::vector<std::pair<std::int64_t, report::ListingsCompiledHere>>;
    QFutureWatcher<Compiled> m_compiling;
    std::map<std::int64_t, report::ListingsCompiledHere> m_compiledHere; // by candidate id
};

} // namespace kl::gui
