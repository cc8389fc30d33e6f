#pragma once
// A spin box that only ever holds one of a list of allowed values (a tunable's declared set):
// the arrows step to the neighbouring allowed value and typed text snaps to the nearest one.
#include <QSpinBox>

#include <cstdint>
#include <vector>

namespace kl::gui {

class AllowedValuesSpinBox : public QSpinBox {
    Q_OBJECT
public:
    explicit AllowedValuesSpinBox(std::vector<std::int64_t> allowed, QWidget* parent = nullptr);

    const std::vector<std::int64_t>& allowedValues() const { return m_allowed; }
    void stepBy(int steps) override;
    QValidator::State validate(QString& input, int& pos) const override;
    void fixup(QString& input) const override;

protected:
    StepEnabled stepEnabled() const override;

private:
    int indexOf(int value) const; // index of the nearest allowed value

    std::vector<std::int64_t> m_allowed;
};

} // namespace kl::gui
