#pragma once
// New Session: fills the same session recipe the CLI builds from `tune` flags (problem, proposer,
// strategy, where a problem with no kernel starts and in what language, budgets, k, metrics, mode, label, runner (an
// executable or a command line) and device, the runner pool's endpoints (one a line, a runners file, the remote runner
// path), the LLM's provider, URL, model, roles, temperature and token budget) and shows the equivalent `kernelloop-cli
// tune ...` line, copyable; a pasted line fills the form. The API key field goes to the keychain only: the recipe names
// where a key comes from, never the key.
#include "core/session/session_recipe.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace kl::gui {

class RunDialog : public QDialog {
    Q_OBJECT
public:
    explicit RunDialog(QWidget* parent = nullptr);

    session::SessionRecipe recipe() const;
    void setRecipe(const session::SessionRecipe& recipe);
    QString commandLine() const; // what the command line field shows
    // Fills the form from a `kernelloop-cli tune ...` line; returns the error ("[session.bad-command-line] ...") or
    // empty.
    QString useCommandLine(const QString& line);
    QString typedApiKey() const; // what the key field holds (to store in the keychain), or empty
    bool saveKeyInKeychain() const;
    void setKeychainAvailable(bool available, const QString& why);

private:
    void refreshCommandLine();

    QLineEdit* m_problem;
    QComboBox* m_proposer;
    QComboBox* m_strategy;
    QComboBox* m_start; // editable: empty, "inductor" or a kernel file
    QComboBox* m_language; // empty (the problem's), triton, cuda
    QSpinBox* m_budget;
    QSpinBox* m_wallSeconds;
    QDoubleSpinBox* m_target;
    QSpinBox* m_patience;
    QSpinBox* m_candidates;
    QComboBox* m_metrics;
    QComboBox* m_mode;
    QLineEdit* m_label;
    QLineEdit* m_db;
    QLineEdit* m_runner; // the local runner: an executable or a command line that starts it
    QSpinBox* m_device;
    QPlainTextEdit* m_endpoints; // the pool: one endpoint a line (local:N, local:all, ssh:..., slurm:ARGS, cmd:...)
    QLineEdit* m_runnersFile;
    QLineEdit* m_remoteRunner;
    QGroupBox* m_llm;
    QComboBox* m_provider;
    QLineEdit* m_baseUrl;
    QLineEdit* m_model;
    QComboBox* m_roles;
    QDoubleSpinBox* m_temperature;
    QSpinBox* m_tokenBudget;
    QLineEdit* m_keyEnv;
    QLineEdit* m_keyFile;
    QLineEdit* m_apiKey;
    QCheckBox* m_saveKey;
    QLineEdit* m_command;
    QLineEdit* m_paste;
    QLabel* m_pasteError;
    session::SessionRecipe m_rest; // recipe fields the form does not show, kept as they came
};

} // namespace kl::gui
