#include "widgets/code_diff_panel.h"

#include "core/model/problem.h"
#include "widgets/html_text.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace kl::gui {

namespace {

const QColor kAdded(0xe3, 0xf6, 0xe3);
const QColor kRemoved(0xfb, 0xe4, 0xe4);
const QColor kHunk(0xe8, 0xee, 0xf8);
const QColor kAbsent(0xe6, 0xe6, 0xe6);

QPlainTextEdit* codePane(QWidget* parent)
{
    auto* pane = new QPlainTextEdit(parent);
    pane->setReadOnly(true);
    pane->setLineWrapMode(QPlainTextEdit::NoWrap);
    pane->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return pane;
}

// One row a line; each row's background says what changed on that side.
void setRows(QPlainTextEdit* pane, const QStringList& rows, const QVector<QColor>& backgrounds)
{
    pane->setPlainText(rows.join(QLatin1Char('\n')));
    QTextCursor cursor(pane->document());
    for (int i = 0; i < backgrounds.size(); ++i) {
        if (!backgrounds[i].isValid())
            continue;
        cursor.setPosition(pane->document()->findBlockByNumber(i).position());
        QTextBlockFormat format;
        format.setBackground(backgrounds[i]);
        cursor.mergeBlockFormat(format);
    }
}

QString signedCount(std::int64_t n) { return n > 0 ? QStringLiteral("+%1").arg(n) : QString::number(n); }

} // namespace

CodeDiffPanel::CodeDiffPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_codeBox(new QComboBox(this))
    , m_compare(new QSpinBox(this))
    , m_header(new QLabel(this))
    , m_mix(new QTableWidget(this))
    , m_beforeTitle(new QLabel(this))
    , m_afterTitle(new QLabel(this))
    , m_before(codePane(this))
    , m_after(codePane(this))
{
    //: code diff: compare the SASS where both iterations stored it, else the PTX
    m_codeBox->addItem(tr("SASS where stored"));
    m_codeBox->addItem(tr("PTX"));
    m_codeBox->setToolTip(tr("Which code to compare: the SASS (nvdisasm) where both iterations have it, or the PTX"));
    m_compare->setMinimum(0);
    //: the compare-with box's value 0: compare with the candidate's parent
    m_compare->setSpecialValueText(tr("its parent"));
    m_compare->setPrefix(tr("iteration "));
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::RichText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_mix->setColumnCount(4);
    m_mix->verticalHeader()->hide();
    m_mix->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_mix->setSelectionMode(QAbstractItemView::NoSelection);
    m_mix->setAlternatingRowColors(true);
    m_mix->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6); // more classes in view
    m_mix->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_mix->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_mix->setToolTip(tr("Instructions in the listing by class (counted statically, not executed)"));

    auto* sides = new QSplitter(Qt::Horizontal, this);
    for (auto [title, pane] : { std::pair { m_beforeTitle, m_before }, std::pair { m_afterTitle, m_after } }) {
        title->setStyleSheet(QStringLiteral("font-weight: bold; padding: 2px;"));
        auto* column = new QWidget(sides);
        auto* columnLayout = new QVBoxLayout(column);
        columnLayout->setContentsMargins(0, 0, 0, 0);
        columnLayout->setSpacing(0);
        columnLayout->addWidget(title);
        columnLayout->addWidget(pane, 1);
        sides->addWidget(column);
    }
    connect(
        m_before->verticalScrollBar(), &QScrollBar::valueChanged, m_after->verticalScrollBar(), &QScrollBar::setValue);
    connect(
        m_after->verticalScrollBar(), &QScrollBar::valueChanged, m_before->verticalScrollBar(), &QScrollBar::setValue);

    auto* vertical = new QSplitter(Qt::Vertical, this);
    vertical->addWidget(m_mix);
    vertical->addWidget(sides);
    // The code is what the tab is for: the mix starts at three rows (it scrolls, and the handle gives
    // it more) and the diff takes the rest; half each left a 1366x768 window 9 rows of SASS.
    vertical->setStretchFactor(0, 0);
    vertical->setStretchFactor(1, 1);
    vertical->setCollapsible(1, false);
    const int mixHeight = m_mix->horizontalHeader()->sizeHint().height()
        + 3 * m_mix->verticalHeader()->defaultSectionSize() + 2 * m_mix->frameWidth();
    vertical->setSizes({ mixHeight, 4 * mixHeight });

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Compare code with"), this));
    bar->addWidget(m_compare);
    bar->addStretch(1);
    bar->addWidget(m_codeBox);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addLayout(bar);
    layout->addWidget(m_header);
    layout->addWidget(vertical, 1);

    connect(m_codeBox, &QComboBox::currentIndexChanged, this,
        [this](int index) { setCode(index == 1 ? Code::Ptx : Code::SassWhereStored); });
    connect(m_compare, &QSpinBox::valueChanged, this, [this](int value) { m_selection->compareWith(value); });
    connect(&m_compiling, &QFutureWatcherBase::finished, this, &CodeDiffPanel::compiledHere);
    follow(selection, this, this);
}

void CodeDiffPanel::setCode(Code code)
{
    m_code = code;
    m_codeBox->setCurrentIndex(code == Code::Ptx ? 1 : 0);
    compare();
}

void CodeDiffPanel::showSession(const std::shared_ptr<const SessionView>& session)
{
    if (!session || !m_session || session->session.id != m_session->session.id)
        m_compiledHere.clear(); // candidate ids are the store's: another session, another set
    m_session = session;
    const QSignalBlocker block(m_compare);
    m_compare->setMaximum(session ? static_cast<int>(session->rows.size()) : 0);
    m_compare->setValue(m_selection->comparedWith());
    m_compare->setEnabled(session != nullptr);
}

void CodeDiffPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    {
        const QSignalBlocker block(m_compare);
        m_compare->setValue(m_selection->comparedWith());
    }
    compare();
}

void CodeDiffPanel::compare()
{
    m_comparison = {};
    const auto* after = m_focus ? m_focus->detail.get() : nullptr;
    const auto* before = m_focus ? m_focus->compared.get() : nullptr;
    if (!after) {
        m_header->setText(tr("<i>Select an iteration to compare its compiled code with its parent's.</i>"));
    } else if (!before) {
        m_header->setText(tr("<i>Iteration %1 is the baseline: it has no parent. Choose an iteration to compare "
                             "with above.</i>")
                              .arg(m_focus->index()));
    } else {
        // Iterations whose session kept no listing: their stored source compiled here first.
        std::vector<store::CandidateRecord> missing;
        for (const auto* detail : { before, after }) {
            const auto l = listingsOf(*detail);
            if (l.ptx.empty() && l.sass.empty() && detail->candidate && m_compiler
                && !m_compiledHere.contains(detail->candidate->id))
                missing.push_back(*detail->candidate);
        }
        if (!missing.empty()) {
            m_header->setText(
                tr("<i>No listing stored for iteration %1 or %2: compiling the source here with NVRTC…</i>")
                    .arg(before->row.index)
                    .arg(after->row.index));
            compileHere(std::move(missing));
            fillMix();
            fillPanes();
            return;
        }
        const auto listings = [this](const store::IterationDetail& detail) {
            auto l = listingsOf(detail);
            if (m_code == Code::Ptx && !l.sass.empty()) {
                l.sass.clear();
                l.sassNote = "PTX chosen";
            }
            return l;
        };
        const std::string beforeName = "iteration " + std::to_string(before->row.index);
        const std::string afterName = "iteration " + std::to_string(after->row.index);
        m_comparison = report::compareCode(listings(*before), listings(*after), beforeName, afterName);
        if (!m_comparison.comparable()) {
            m_header->setText(tr("<i>No code to compare: %1.</i>").arg(html(m_comparison.note)));
        } else {
            //: code diff header; %1 SASS or PTX, %2 this iteration, %3 the compared one, %4 added, %5 removed rows
            QString header = (m_focus->comparedIsParent ? tr("<b>%1 of iteration %2</b> against its parent, "
                                                             "iteration %3: +%4 −%5 lines")
                                                        : tr("<b>%1 of iteration %2</b> against iteration %3: +%4 "
                                                             "−%5 lines"))
                                 .arg(toQString(m_comparison.kind))
                                 .arg(after->row.index)
                                 .arg(before->row.index)
                                 .arg(m_comparison.diff.added)
                                 .arg(m_comparison.diff.removed);
            if (!m_comparison.note.empty() && m_code != Code::Ptx)
                header += QStringLiteral("<br>") + html(m_comparison.note);
            m_header->setText(header);
        }
    }
    fillMix();
    fillPanes();
}

store::CodeListings CodeDiffPanel::listingsOf(const store::IterationDetail& detail) const
{
    auto l = detail.result ? store::codeListingsOf(detail.result->compile) : store::CodeListings {};
    if (!l.ptx.empty() || !l.sass.empty() || !detail.candidate)
        return l;
    const auto here = m_compiledHere.find(detail.candidate->id);
    if (here == m_compiledHere.end())
        return l;
    store::CodeListings compiled = here->second.listings;
    // Why there is no SASS, or nothing at all, says that the code was compiled here.
    // ("nvdisasm not found", without the places it looked).
    const std::string why = compiled.sassNote.substr(0, compiled.sassNote.find(" ("));
    compiled.sassNote = here->second.note + (why.empty() ? "" : "; " + why);
    return compiled;
}

void CodeDiffPanel::compileHere(std::vector<store::CandidateRecord> candidates)
{
    const std::string arch = problemArchOf(m_session ? m_session->problemJson : std::string());
    m_compiling.setFuture(QtConcurrent::run([compiler = m_compiler, candidates = std::move(candidates), arch] {
        Compiled out;
        for (const auto& candidate : candidates)
            out.emplace_back(candidate.id, compiler(candidate, arch));
        return out;
    }));
}

void CodeDiffPanel::compiledHere()
{
    if (m_compiling.future().resultCount() == 0)
        return;
    for (auto& [id, compiled] : m_compiling.result())
        m_compiledHere[id] = std::move(compiled);
    compare(); // the newest selection's, with what is compiled now (a stale compile only fills the cache)
}

void CodeDiffPanel::fillMix()
{
    m_mix->clearContents();
    m_mix->setRowCount(0);
    if (!m_comparison.comparable() || !m_focus || !m_focus->compared) {
        m_mix->setHorizontalHeaderLabels({ tr("Instructions"), QString(), QString(), tr("Change") });
        return;
    }
    m_mix->setHorizontalHeaderLabels({ tr("%1 instructions").arg(toQString(m_comparison.kind)),
        tr("Iteration %1").arg(m_focus->compared->row.index), tr("Iteration %1").arg(m_focus->index()), tr("Change") });
    auto rows = lines::mixChanges(m_comparison.beforeMix, m_comparison.afterMix);
    m_mix->setRowCount(static_cast<int>(rows.size()) + 1);
    const auto setRow = [this](int row, const QString& name, std::int64_t before, std::int64_t after, bool bold) {
        const QString cells[] = { name, QString::number(before), QString::number(after), signedCount(after - before) };
        for (int column = 0; column < 4; ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            if (column > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            QFont font = item->font();
            font.setBold(bold || (column == 3 && after != before));
            item->setFont(font);
            if (column == 3 && after != before) // a count, neither good nor bad by itself: one colour
                item->setForeground(QColor(0x1f, 0x3f, 0x8f));
            m_mix->setItem(row, column, item);
        }
    };
    int row = 0;
    for (const auto& change : rows)
        setRow(row++, toQString(std::string(lines::instructionClassName(change.instructionClass))), change.before,
            change.after, false);
    setRow(row, tr("total"), m_comparison.beforeMix.total, m_comparison.afterMix.total, true);
}

void CodeDiffPanel::fillPanes()
{
    m_beforeTitle->clear();
    m_afterTitle->clear();
    if (!m_comparison.comparable() || !m_focus || !m_focus->compared) {
        m_before->clear();
        m_after->clear();
        return;
    }
    const QString kind = toQString(m_comparison.kind);
    //: code diff: the title over the old side; %1 SASS or PTX, %2 which iteration
    m_beforeTitle->setText(tr("− %1 of iteration %2").arg(kind).arg(m_focus->compared->row.index));
    m_afterTitle->setText(tr("+ %1 of iteration %2").arg(kind).arg(m_focus->index()));
    if (m_comparison.diff.same()) {
        m_before->setPlainText(tr("The %1 of both iterations is the same.").arg(kind));
        m_after->clear();
        return;
    }
    using Kind = report::SideBySideRow::Kind;
    QStringList beforeRows, afterRows;
    QVector<QColor> beforeColours, afterColours;
    for (const report::SideBySideRow& row : report::sideBySide(m_comparison.diff)) {
        if (row.kind == Kind::HunkBreak) {
            beforeRows.append(QStringLiteral("⋯"));
            afterRows.append(QStringLiteral("⋯"));
            beforeColours.append(kHunk);
            afterColours.append(kHunk);
            continue;
        }
        beforeRows.append(row.beforeLine ? toQString(row.beforeText) : QString());
        afterRows.append(row.afterLine ? toQString(row.afterText) : QString());
        beforeColours.append(row.kind == Kind::Changed || row.kind == Kind::Removed ? kRemoved
                : row.kind == Kind::Added                                           ? kAbsent
                                                                                    : QColor());
        afterColours.append(row.kind == Kind::Changed || row.kind == Kind::Added ? kAdded
                : row.kind == Kind::Removed                                      ? kAbsent
                                                                                 : QColor());
    }
    setRows(m_before, beforeRows, beforeColours);
    setRows(m_after, afterRows, afterColours);
}

QString CodeDiffPanel::headerText() const { return m_header->text(); }

QString CodeDiffPanel::beforeTitle() const { return m_beforeTitle->text(); }

QString CodeDiffPanel::afterTitle() const { return m_afterTitle->text(); }

} // namespace kl::gui
