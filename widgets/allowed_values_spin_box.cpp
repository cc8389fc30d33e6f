#include "widgets/allowed_values_spin_box.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace kl::gui {

namespace {

int clampToInt(std::int64_t value)
{
    return static_cast<int>(
        std::clamp<std::int64_t>(value, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

} // namespace

AllowedValuesSpinBox::AllowedValuesSpinBox(std::vector<std::int64_t> allowed, QWidget* parent)
    : QSpinBox(parent)
    , m_allowed(std::move(allowed))
{
    std::sort(m_allowed.begin(), m_allowed.end());
    if (m_allowed.empty())
        m_allowed.push_back(0);
    setRange(clampToInt(m_allowed.front()), clampToInt(m_allowed.back()));
    setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
    setKeyboardTracking(false); // typing "1" on the way to "128" must not start an analysis
}

void AllowedValuesSpinBox::stepBy(int steps)
{
    const int index = std::clamp(indexOf(value()) + steps, 0, static_cast<int>(m_allowed.size()) - 1);
    setValue(clampToInt(m_allowed[static_cast<std::size_t>(index)]));
}

QValidator::State AllowedValuesSpinBox::validate(QString& input, int& pos) const
{
    const QValidator::State base = QSpinBox::validate(input, pos);
    if (base != QValidator::Acceptable)
        return base;
    bool ok = false;
    const qlonglong typed = input.toLongLong(&ok);
    if (!ok)
        return QValidator::Intermediate;
    return std::binary_search(m_allowed.begin(), m_allowed.end(), static_cast<std::int64_t>(typed))
        ? QValidator::Acceptable
        : QValidator::Intermediate;
}

void AllowedValuesSpinBox::fixup(QString& input) const
{
    bool ok = false;
    const qlonglong typed = input.toLongLong(&ok);
    const int index = ok ? indexOf(clampToInt(typed)) : indexOf(value());
    input = QString::number(m_allowed[static_cast<std::size_t>(index)]);
}

QAbstractSpinBox::StepEnabled AllowedValuesSpinBox::stepEnabled() const
{
    StepEnabled enabled = StepNone;
    const int index = indexOf(value());
    if (index > 0)
        enabled |= StepDownEnabled;
    if (index + 1 < static_cast<int>(m_allowed.size()))
        enabled |= StepUpEnabled;
    return enabled;
}

int AllowedValuesSpinBox::indexOf(int value) const
{
    int best = 0;
    for (std::size_t i = 1; i < m_allowed.size(); ++i) {
        if (std::llabs(m_allowed[i] - value) < std::llabs(m_allowed[static_cast<std::size_t>(best)] - value))
            best = static_cast<int>(i);
    }
    return best;
}

} // namespace kl::gui
