#pragma once
// Where the selected iteration's kernel spends its time, line by line (issue 11): its source with
// the share of PC samples in a heat margin (a tooltip gives the line's warp-state breakdown), the
// hottest lines as a list that moves the editor to the line, and the kernel's whole machine code
// (SASS from a stored nvdisasm listing with each instruction's samples, else PTX: store::codeListingsOf
// the compile JSON) linked both ways: the editor's line highlights its instructions, moving to an
// instruction moves the editor to its line.
#include "core/lines/line_heat.h"
#include "core/lines/ptx_listing.h"
#include "core/lines/sass_listing.h"
#include "core/report/listings_compiled_here.h"
#include "widgets/code_listing_view.h"
#include "widgets/iteration_selection.h"

#include <QFutureWatcher>
#include <QWidget>

#include <functional>
#include <optional>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace kl::gui {

class KernelEditor;

class LineProfilePanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    explicit LineProfilePanel(IterationSelection* selection, QWidget* parent = nullptr);

    // Compiles an iteration's stored source when its session kept no listing (report::compileListingsHere);
    // run off the GUI thread. Without one the pane says why it is empty.
    using ListingCompiler
        = std::function<report::ListingsCompiledHere(const store::CandidateRecord& candidate, const std::string& arch)>;
    void setListingCompiler(ListingCompiler compiler) { m_compiler = std::move(compiler); }
    bool isCompilingListing() const { return m_compiling != nullptr; }

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    KernelEditor* editor() const { return m_editor; }
    QTreeWidget* hotLines() const { return m_hotLines; }
    CodeListingView* listing() const { return m_listing; }
    // The listing pane's title ("SASS of line 11: 184 instructions, 18009 samples") and which listings
    // are stored, with why no SASS.
    QString listingTitle() const;
    QString listingNote() const { return m_listingNote; }
    QString summaryText() const;
    // The margin's text of a 1-based line ("96%", empty when the line has no samples) and its tooltip.
    QString heatText(int line) const;
    QString heatToolTip(int line) const;
    // Highlights the machine code of a 1-based source line in the listing pane (the editor's cursor does this).
    void showListingFor(int line);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void jumpTo(QTreeWidgetItem* item);
    void showSourceLine(int line); // an instruction chosen in the listing
    void paintHeat();
    void fillListing();
    void showFirstLine(); // the hottest line, else the first with code, in both panes
    void compileListingHere(const std::shared_ptr<const store::IterationDetail>& detail);
    void listingCompiled();

    KernelEditor* m_editor;
    QLabel* m_summary;
    QTreeWidget* m_hotLines;
    QLabel* m_listingTitle;
    CodeListingView* m_listing;
    std::shared_ptr<const IterationFocus> m_focus;
    std::optional<lines::PcSampling> m_sampling;
    lines::LineHeat m_heat;
    std::optional<lines::SassListing> m_sass;
    std::optional<lines::PtxListing> m_ptx;
    QString m_listingNote; // store::codeListingsText of the iteration
    bool m_listingCompiledHere = false; // the listing came from compileListingsHere, not the store
    std::shared_ptr<const SessionView> m_session;
    ListingCompiler m_compiler;
    QFutureWatcher<report::ListingsCompiledHere> m_compiled;
    std::shared_ptr<const store::IterationDetail> m_compiling; // whose listing m_compiled brings
    int m_heatMargin = 3;
};

} // namespace kl::gui
