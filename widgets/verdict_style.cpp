#include "widgets/verdict_style.h"

#include "widgets/string_conversion.h"

#include <QFont>
#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace kl::gui {

Verdict verdictOf(const std::string& status, const std::string& category)
{
    if (status.empty() && category.empty())
        return Verdict::NotEvaluated;
    if (status == "ok" && category == "passed")
        return Verdict::Passed;
    if (category.starts_with("compile."))
        return Verdict::CompileError;
    return Verdict::Failed;
}

QColor verdictColor(Verdict verdict)
{
    switch (verdict) {
    case Verdict::Passed:
        return QColor(0x1b, 0x7a, 0x35);
    case Verdict::Failed:
        return QColor(0xb0, 0x1c, 0x1c);
    case Verdict::CompileError:
        return QColor(0xb8, 0x60, 0x00);
    case Verdict::NotEvaluated:
        break;
    }
    return QColor(0x6b, 0x6b, 0x6b);
}

QColor verdictBackground(Verdict verdict)
{
    switch (verdict) {
    case Verdict::Passed:
        return {};
    case Verdict::Failed:
        return QColor(0xfb, 0xe4, 0xe4);
    case Verdict::CompileError:
        return QColor(0xfd, 0xef, 0xd9);
    case Verdict::NotEvaluated:
        break;
    }
    return QColor(0xee, 0xee, 0xee);
}

QString proposerLabel(const store::IterationRow& row)
{
    const auto label = store::proposedBy(row);
    return label.empty() ? QStringLiteral("-") : toQString(label);
}

QIcon proposerIcon(const QString& label)
{
    // Drawn, not shipped: a coloured disc with the proposer's initial, cached per label.
    static QHash<QString, QIcon> cache;
    if (const auto it = cache.constFind(label); it != cache.constEnd())
        return *it;
    QColor color(0x80, 0x80, 0x80);
    QString letter = QStringLiteral("?");
    if (label == QLatin1String("llm")) {
        color = QColor(0x6a, 0x3d, 0x9a);
        letter = QStringLiteral("L");
    } else if (label == QLatin1String("tuner")) {
        color = QColor(0x1f, 0x6f, 0xb4);
        letter = QStringLiteral("T");
    } else if (label == QLatin1String("human")) {
        color = QColor(0xc2, 0x6a, 0x00);
        letter = QStringLiteral("H");
    } else if (label == QLatin1String("baseline")) {
        color = QColor(0x55, 0x55, 0x55);
        letter = QStringLiteral("B");
    } else if (label == QLatin1String("inductor")) { // torch.compile's kernel a session started from
        color = QColor(0x00, 0x89, 0x7b); // teal: not the red of a failure
        letter = QStringLiteral("I");
    }
    QPixmap pixmap(32, 32);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setBrush(color);
    painter.setPen(Qt::NoPen);
    painter.drawEllipse(2, 2, 28, 28);
    QFont font = painter.font();
    font.setBold(true);
    font.setPixelSize(18);
    painter.setFont(font);
    painter.setPen(Qt::white);
    painter.drawText(pixmap.rect(), Qt::AlignCenter, letter);
    painter.end();
    QIcon icon(pixmap);
    cache.insert(label, icon);
    return icon;
}

} // namespace kl::gui
