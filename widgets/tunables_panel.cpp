#include "widgets/tunables_panel.h"

#include "widgets/allowed_values_spin_box.h"
#include "widgets/string_conversion.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

// Up to this many allowed values a drop-down shows them all; beyond, a spin box steps through them.
constexpr std::size_t kMaxComboValues = 16;

QString allowedText(const Tunable& tunable)
{
    QStringList values;
    for (std::int64_t value : tunable.values)
        values.append(QString::number(value));
    return values.join(QStringLiteral(", "));
}

} // namespace

TunablesPanel::TunablesPanel(QWidget* parent)
    : QWidget(parent)
    , m_form(new QFormLayout)
    , m_empty(new QLabel(tr("No candidate yet."), this))
{
    auto* layout = new QVBoxLayout(this);
    m_form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    layout->addLayout(m_form);
    m_empty->setWordWrap(true);
    m_empty->setEnabled(false);
    layout->addWidget(m_empty);
    layout->addStretch(1);
}

void TunablesPanel::setTunables(const std::vector<Tunable>& tunables, const TunableValues& values)
{
    m_updating = true;
    while (m_form->rowCount() > 0)
        m_form->removeRow(0);
    m_editors.clear();
    m_tunables = tunables;
    for (const Tunable& tunable : m_tunables) {
        QWidget* editor = makeEditor(tunable);
        const auto found = values.find(tunable.name);
        showValue(editor, found != values.end() ? found->second : tunable.defaultValue);
        auto* label = new QLabel(toQString(tunable.name), this);
        label->setBuddy(editor);
        label->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        //: tooltip of a tunable; %1 the source line, %2 the allowed values, %3 the default
        const QString tip = tr("Declared on line %1\nAllowed: %2\nDefault: %3")
                                .arg(tunable.line)
                                .arg(allowedText(tunable))
                                .arg(tunable.defaultValue);
        label->setToolTip(tip);
        editor->setToolTip(tip);
        m_form->addRow(label, editor);
        m_editors.push_back(editor);
    }
    m_empty->setText(tr("This candidate declares no tunables."));
    m_empty->setVisible(m_tunables.empty());
    m_updating = false;
}

void TunablesPanel::setValues(const TunableValues& values)
{
    m_updating = true;
    for (std::size_t i = 0; i < m_tunables.size(); ++i) {
        const auto found = values.find(m_tunables[i].name);
        if (found != values.end())
            showValue(m_editors[i], found->second);
    }
    m_updating = false;
}

TunableValues TunablesPanel::values() const
{
    TunableValues result;
    for (std::size_t i = 0; i < m_tunables.size(); ++i)
        result[m_tunables[i].name] = valueOf(m_editors[i]);
    return result;
}

bool TunablesPanel::shows(const std::vector<Tunable>& tunables) const
{
    if (tunables.size() != m_tunables.size())
        return false;
    for (std::size_t i = 0; i < tunables.size(); ++i) {
        if (tunables[i].name != m_tunables[i].name || tunables[i].values != m_tunables[i].values)
            return false;
    }
    return true;
}

QWidget* TunablesPanel::editorFor(const QString& name) const
{
    for (std::size_t i = 0; i < m_tunables.size(); ++i) {
        if (toQString(m_tunables[i].name) == name)
            return m_editors[i];
    }
    return nullptr;
}

QWidget* TunablesPanel::makeEditor(const Tunable& tunable)
{
    if (tunable.values.size() <= kMaxComboValues) {
        auto* combo = new QComboBox(this);
        for (std::int64_t value : tunable.values)
            combo->addItem(QString::number(value), QVariant::fromValue<qlonglong>(value));
        connect(combo, &QComboBox::currentIndexChanged, this, &TunablesPanel::onEdited);
        return combo;
    }
    auto* spin = new AllowedValuesSpinBox(tunable.values, this);
    connect(spin, &QSpinBox::valueChanged, this, &TunablesPanel::onEdited);
    return spin;
}

std::int64_t TunablesPanel::valueOf(const QWidget* editor) const
{
    if (const auto* combo = qobject_cast<const QComboBox*>(editor))
        return combo->currentData().toLongLong();
    if (const auto* spin = qobject_cast<const QSpinBox*>(editor))
        return spin->value();
    return 0;
}

void TunablesPanel::showValue(QWidget* editor, std::int64_t value)
{
    if (auto* combo = qobject_cast<QComboBox*>(editor)) {
        const int index = combo->findData(QVariant::fromValue<qlonglong>(value));
        if (index >= 0)
            combo->setCurrentIndex(index);
    } else if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
        spin->setValue(static_cast<int>(value));
    }
}

void TunablesPanel::onEdited()
{
    if (!m_updating)
        emit valuesChanged(values());
}

} // namespace kl::gui
