#include "widgets/transcript_panel.h"

#include "core/store/records.h"
#include "widgets/string_conversion.h"

#include <QFontDatabase>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

QString exchangeTitle(const store::ExchangeRecord& record)
{
    const Exchange& e = record.exchange;
    QString title = toQString(record.role) + QStringLiteral(" · ") + toQString(e.provider) + QLatin1Char('/')
        + toQString(e.model) + QStringLiteral(" · ") + toQString(std::string(exchangeCategoryName(e.category)));
    if (e.latencyMs > 0.0)
        title += QStringLiteral(" · ") + QString::number(e.latencyMs / 1000.0, 'f', 1) + QStringLiteral(" s");
    if (e.usage.reported)
        title += QStringLiteral(" · ") + QString::number(e.usage.promptTokens) + QStringLiteral(" + ")
            + QString::number(e.usage.completionTokens) + QStringLiteral(" tokens");
    return title;
}

QString exchangeText(const store::ExchangeRecord& record)
{
    QString text;
    for (const PromptMessage& m : record.exchange.prompt)
        text += QLatin1Char('[') + toQString(m.role) + QStringLiteral("]\n") + toQString(m.content) + QLatin1Char('\n');
    return text + QStringLiteral("[reply]\n") + toQString(store::replyText(record.exchange));
}

} // namespace

TranscriptPanel::TranscriptPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_list(new QListWidget(this))
    , m_text(new QPlainTextEdit(this))
{
    m_text->setReadOnly(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_list);
    split->addWidget(m_text);
    split->setStretchFactor(1, 4);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
    connect(m_list, &QListWidget::currentRowChanged, this, &TranscriptPanel::showExchange);
    follow(selection, this, this);
}

void TranscriptPanel::showSession(const std::shared_ptr<const SessionView>&) { }

void TranscriptPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    const QSignalBlocker block(m_list);
    m_list->clear();
    if (!focus || !focus->detail || focus->detail->exchanges.empty()) {
        m_text->setPlainText(focus ? tr("No LLM exchange at this iteration: its candidate came from the %1.")
                                         .arg(focus->detail && focus->detail->candidate ? toQString(
                                                  std::string(store::proposerName(focus->detail->candidate->proposer)))
                                                                                        : tr("loop"))
                                   : tr("Select an iteration proposed by an LLM to read its prompt and reply."));
        return;
    }
    for (const store::ExchangeRecord& e : focus->detail->exchanges)
        m_list->addItem(exchangeTitle(e));
    m_list->setCurrentRow(0);
    showExchange(0);
}

void TranscriptPanel::showExchange(int row)
{
    if (!m_focus || !m_focus->detail || row < 0 || row >= static_cast<int>(m_focus->detail->exchanges.size()))
        return;
    m_text->setPlainText(exchangeText(m_focus->detail->exchanges[static_cast<std::size_t>(row)]));
}

QString TranscriptPanel::shownText() const { return m_text->toPlainText(); }

} // namespace kl::gui
