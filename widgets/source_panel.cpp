#include "widgets/source_panel.h"

#include "core/model/compiler_flags.h"
#include "widgets/html_text.h"
#include "widgets/kernel_editor.h"
#include "widgets/string_conversion.h"
#include "widgets/verdict_style.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <filesystem>

namespace kl::gui {

namespace {

QString tunablesText(const TunableValues& values)
{
    QStringList parts;
    for (const auto& [name, value] : values)
        parts.append(toQString(name) + QLatin1Char('=') + QString::number(value));
    return parts.join(QStringLiteral(", "));
}

} // namespace

SourcePanel::SourcePanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_editor(new KernelEditor(this))
    , m_header(new QLabel(this))
    , m_openInEditor(new QPushButton(tr("Open in Editor as Candidate"), this))
{
    m_editor->setReadOnly(true);
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_openInEditor->setToolTip(tr("Copy this source and its tunables into the editor, to change and analyse"));
    auto* top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(m_openInEditor, 0, Qt::AlignTop);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addLayout(top);
    layout->addWidget(m_editor, 1);
    connect(m_openInEditor, &QPushButton::clicked, this, [this] {
        if (m_focus && m_focus->detail && m_focus->detail->candidate) {
            const store::CandidateRecord& c = *m_focus->detail->candidate;
            emit openAsCandidate(toQString(c.source), c.tunables, toQString(c.fileName));
        }
    });
    follow(selection, this, this);
}

void SourcePanel::showSession(const std::shared_ptr<const SessionView>&) { }

void SourcePanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    const store::CandidateRecord* candidate
        = focus && focus->detail && focus->detail->candidate ? &*focus->detail->candidate : nullptr;
    m_openInEditor->setEnabled(candidate != nullptr);
    if (!candidate) {
        m_editor->setSource({});
        m_header->setText(focus ? tr("<i>This iteration has no candidate (the proposer failed before one).</i>")
                                : tr("<i>Select an iteration in the history or a chart to see its source.</i>"));
        return;
    }
    m_editor->setSource(toQString(candidate->source));
    const QString proposer = proposerLabel(focus->detail->row);
    // The file's name, not where it was: a baseline is stored with the path it was read from, a
    // temporary folder's for an imported problem ("/tmp/tmp.NiibHLVgZh/triton/.../baseline.py").
    const std::string file = std::filesystem::path(candidate->fileName).filename().string();
    QString text = tr("<b>Iteration %1</b> · <tt>%2</tt> · %3").arg(focus->index()).arg(html(file), proposer);
    if (!candidate->proposerDetail.empty() && candidate->proposerDetail != "baseline")
        text += QStringLiteral(" (") + html(candidate->proposerDetail) + QLatin1Char(')');
    if (!candidate->tunables.empty())
        //: source header; %1 the tunable values, e.g. "THREADS=256, VEC=8"
        text += tr(" · tunables: <tt>%1</tt>").arg(tunablesText(candidate->tunables).toHtmlEscaped());
    if (const std::string flags = compilerFlagsText(candidate->source, candidate->fileName, candidate->tunables);
        !flags.empty())
        //: source header; %1 the NVRTC options its flag tunables chose, e.g. "-use_fast_math -maxrregcount=32"
        text += tr(" · compiler flags: <tt>%1</tt>").arg(html(flags));
    m_header->setText(text);
}

QString SourcePanel::headerText() const { return m_header->text(); }

} // namespace kl::gui
