#pragma once
// One control per tunable the candidate declares, offering its allowed values only. Changing one
// emits valuesChanged with the whole choice, which the window turns into a new analysis.
#include "core/model/candidate.h"

#include <QWidget>

#include <vector>

class QFormLayout;
class QLabel;

namespace kl::gui {

class TunablesPanel : public QWidget {
    Q_OBJECT
public:
    explicit TunablesPanel(QWidget* parent = nullptr);

    // Rebuilds the controls for these declarations, showing `values` (defaults where missing).
    void setTunables(const std::vector<Tunable>& tunables, const TunableValues& values);
    // Shows `values` without emitting valuesChanged; names not declared are ignored.
    void setValues(const TunableValues& values);
    TunableValues values() const;
    const std::vector<Tunable>& tunables() const { return m_tunables; }
    // True when `tunables` declares the same names and allowed values as shown now.
    bool shows(const std::vector<Tunable>& tunables) const;

    // The control for a tunable (a QComboBox or an AllowedValuesSpinBox), for tests and focus.
    QWidget* editorFor(const QString& name) const;

signals:
    void valuesChanged(const kl::TunableValues& values);

private:
    QWidget* makeEditor(const Tunable& tunable);
    std::int64_t valueOf(const QWidget* editor) const;
    void showValue(QWidget* editor, std::int64_t value);
    void onEdited();

    std::vector<Tunable> m_tunables;
    std::vector<QWidget*> m_editors; // parallel to m_tunables
    QFormLayout* m_form;
    QLabel* m_empty;
    bool m_updating = false;
};

} // namespace kl::gui
