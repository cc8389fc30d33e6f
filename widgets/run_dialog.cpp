#include "widgets/run_dialog.h"

#include "core/model/error.h"
#include "widgets/string_conversion.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

QComboBox* combo(QWidget* parent, const QStringList& items)
{
    auto* c = new QComboBox(parent);
    c->addItems(items);
    return c;
}

QSpinBox* spin(QWidget* parent, int low, int high, int value, const QString& zero = {})
{
    auto* s = new QSpinBox(parent);
    s->setRange(low, high);
    s->setValue(value);
    if (!zero.isEmpty())
        s->setSpecialValueText(zero);
    return s;
}

// A placeholder cannot wrap: the field is at least as wide as its hint, so the dialog's default
// size shows every hint whole instead of squeezing them to a few letters.
void fitPlaceholder(QLineEdit* edit)
{
    const int frame = edit->style()->pixelMetric(QStyle::PM_DefaultFrameWidth, nullptr, edit);
    const int width = edit->fontMetrics().horizontalAdvance(edit->placeholderText()) + 2 * frame + 12;
    edit->setMinimumWidth(width);
    // An editable combo box sizes itself, not by its line edit's minimum: its arrow comes on top.
    if (auto* box = qobject_cast<QComboBox*>(edit->parentWidget()))
        box->setMinimumWidth(
            width + box->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, box) + 2 * frame + 8);
}

} // namespace

RunDialog::RunDialog(QWidget* parent)
    : QDialog(parent)
    , m_problem(new QLineEdit(this))
    , m_proposer(combo(this, { QStringLiteral("tuner"), QStringLiteral("llm"), QStringLiteral("llm+tuner") }))
    , m_strategy(combo(this,
          { QStringLiteral("auto"), QStringLiteral("exhaustive"), QStringLiteral("random"),
              QStringLiteral("evolutionary") }))
    , m_start(combo(this, { QString(), QStringLiteral("inductor") }))
    , m_language(combo(this, { QString(), QStringLiteral("triton"), QStringLiteral("cuda") }))
    , m_budget(spin(this, 1, 10000, 20))
    //: run dialog: 0 seconds means no wall-time limit
    , m_wallSeconds(spin(this, 0, 7 * 86400, 0, tr("no limit")))
    , m_target(new QDoubleSpinBox(this))
    , m_patience(spin(this, 0, 1000, 2, tr("never")))
    , m_candidates(spin(this, 1, 64, 1))
    // Every set the CLI takes: "lines" (PC sampling per source line) and "deep" (stalls + lines) too;
    // without them "From a line" dropped --metrics lines without a word.
    , m_metrics(combo(this,
          { QStringLiteral("none"), QStringLiteral("default"), QStringLiteral("sol"), QStringLiteral("stalls"),
              QStringLiteral("lines"), QStringLiteral("deep") }))
    , m_mode(combo(this, { QStringLiteral("auto"), QStringLiteral("review") }))
    , m_label(new QLineEdit(this))
    , m_db(new QLineEdit(this))
    , m_runner(new QLineEdit(this))
    , m_device(spin(this, 0, 63, 0))
    , m_endpoints(new QPlainTextEdit(this))
    , m_runnersFile(new QLineEdit(this))
    , m_remoteRunner(new QLineEdit(this))
    , m_llm(new QGroupBox(tr("LLM"), this))
    , m_provider(combo(this, { QStringLiteral("openai"), QStringLiteral("anthropic") }))
    , m_baseUrl(new QLineEdit(this))
    , m_model(new QLineEdit(this))
    , m_roles(combo(this, { QStringLiteral("planner-coder"), QStringLiteral("single") }))
    , m_temperature(new QDoubleSpinBox(this))
    , m_tokenBudget(spin(this, 0, 1'000'000'000, 0, tr("no limit")))
    , m_keyEnv(new QLineEdit(this))
    , m_keyFile(new QLineEdit(this))
    , m_apiKey(new QLineEdit(this))
    , m_saveKey(new QCheckBox(tr("Keep in the keychain"), this))
    , m_command(new QLineEdit(this))
    , m_paste(new QLineEdit(this))
    , m_pasteError(new QLabel(this))
{
    //: window title of the dialog that starts a tuning session
    setWindowTitle(tr("New Session"));
    m_metrics->setCurrentText(QStringLiteral("default"));
    m_metrics->setObjectName(QStringLiteral("metrics"));
    //: run dialog: tooltip of the Metric set field
    m_metrics->setToolTip(tr("CUPTI per candidate: none; default (throughput, occupancy, caches); sol (speed of light, "
                             "tensor pipes); stalls (warp stall reasons); lines (PC sampling per source line: the "
                             "Lines tab); deep (stalls and lines)"));
    // A problem with no kernel yet (a PyTorch reference only) starts from torch.compile's kernel, a file,
    // or (empty) the model's first kernel; the tuner alone then takes torch.compile's.
    m_start->setEditable(true);
    m_start->setObjectName(QStringLiteral("start"));
    //: run dialog: placeholder of the Start field (a problem with no kernel yet)
    m_start->lineEdit()->setPlaceholderText(tr("the problem's kernel; none: the model's, else inductor"));
    fitPlaceholder(m_start->lineEdit());
    //: run dialog: tooltip of the Start field
    m_start->setToolTip(tr("Where a problem with no kernel yet starts: empty (a model writes the first kernel; "
                           "the tuner alone starts from torch.compile's), inductor (torch.compile's Triton kernel, "
                           "its block sizes and warps as tunables) or a kernel file. PyTorch eager is the baseline."));
    m_language->setObjectName(QStringLiteral("language"));
    //: run dialog: the first kernel's language; empty means the problem's own
    m_language->setItemText(0, tr("the problem's"));
    m_target->setRange(0.0, 1000.0);
    m_target->setDecimals(2);
    m_target->setSpecialValueText(tr("none"));
    m_temperature->setRange(-1.0, 2.0);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(-1.0);
    m_temperature->setSpecialValueText(tr("the server's"));
    // A placeholder cannot wrap and the default path is longer than the field: the field says little,
    // the line under it says where an empty field leads, wrapped to the form's width.
    //: run dialog: placeholder of the Store field when it is empty
    m_db->setPlaceholderText(tr("the default store"));
    // The local runner is an executable or a command line that starts one (a wrapper, ssh to a GPU box):
    // either way --device N follows it.
    m_runner->setObjectName(QStringLiteral("runner"));
    // Short enough to show whole in the field; the tooltip says the rest.
    m_runner->setPlaceholderText(tr("a program or a command line; default: kernelloop-runner"));
    //: run dialog: tooltip of the Runner field
    m_runner->setToolTip(tr("The runner's executable (/opt/kl/kernelloop-runner) or a command line that starts it "
                            "(ssh gpuhost kernelloop-runner, env CUDA_LAUNCH_BLOCKING=1 ./kernelloop-runner). "
                            "--device <GPU index> is appended to either. Empty: the kernelloop-runner beside this "
                            "program."));
    // Slurm arguments hold spaces and commas: one endpoint a line, as in a runners file.
    m_endpoints->setObjectName(QStringLiteral("runnerEndpoints"));
    m_endpoints->setPlaceholderText(tr("one a line: local:0, local:all, ssh:me@gpu-box:1, slurm:-p gpu --time=60, "
                                       "cmd:ssh gpuhost kernelloop-runner\nempty: local:<GPU index>"));
    m_endpoints->setTabChangesFocus(true);
    m_endpoints->setFixedHeight(m_endpoints->fontMetrics().lineSpacing() * 4 + 12);
    m_runnersFile->setObjectName(QStringLiteral("runnersFile"));
    m_runnersFile->setPlaceholderText(tr("a file of endpoints, one a line, # comments"));
    m_remoteRunner->setObjectName(QStringLiteral("remoteRunner"));
    m_baseUrl->setPlaceholderText(QStringLiteral("http://localhost:8000/v1"));
    m_keyEnv->setPlaceholderText(QStringLiteral("OPENAI_API_KEY"));
    m_keyFile->setPlaceholderText(tr("a file of mode 0600"));
    m_apiKey->setEchoMode(QLineEdit::Password);
    // Short enough to show whole beside the checkbox; the tooltip says the rest.
    m_apiKey->setPlaceholderText(tr("kept in the keychain only"));
    //: run dialog: tooltip of the API key field
    m_apiKey->setToolTip(tr("Saved in the keychain when \"Keep in the keychain\" is ticked; the recipe and the "
                            "command line never hold the key, only where it comes from."));
    m_command->setReadOnly(true);
    m_paste->setPlaceholderText(tr("kernelloop-cli tune problem.json --budget 10 …"));
    m_pasteError->setWordWrap(true);
    m_pasteError->setStyleSheet(QStringLiteral("color: #b00020;"));
    m_pasteError->hide();

    for (QLineEdit* e : { m_db, m_runner, m_runnersFile, m_baseUrl, m_keyEnv, m_keyFile, m_apiKey })
        fitPlaceholder(e);

    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Problem"), m_problem->text(),
            //: run dialog: file filter; a PyTorch/KernelBench .py file is imported when the session starts
            tr("Problems (*.json);;PyTorch / KernelBench files (*.py)"));
        if (!file.isEmpty())
            m_problem->setText(file);
    });
    auto* problemRow = new QHBoxLayout;
    problemRow->addWidget(m_problem, 1);
    problemRow->addWidget(browse);

    // Grouped as the engineer decides: what to make faster, who proposes, how long, where it runs, and
    // the model (the LLM group, enabled only for an LLM proposer).
    //: run dialog: group of the problem, its starting kernel and where the session is stored
    auto* problemGroup = new QGroupBox(tr("Problem"), this);
    problemGroup->setObjectName(QStringLiteral("problemGroup"));
    auto* problem = new QFormLayout(problemGroup);
    problem->addRow(tr("Problem"), problemRow);
    //: run dialog: where a problem with no kernel yet starts
    problem->addRow(tr("Start"), m_start);
    //: run dialog: the language of the first kernel
    problem->addRow(tr("Language"), m_language);
    problem->addRow(tr("Label"), m_label);
    //: run dialog: under the Store field, where an empty field leads
    // Two lines of its own, not wrapped: a wrapping label's height-for-width does not reach the dialog's
    // first size through the group box, and its last line was cut.
    auto* storeHint
        = new QLabel(tr("Empty: $KERNELLOOP_DB when set,\nelse ~/.local/share/kernelloop/kernelloop.db"), this);
    storeHint->setObjectName(QStringLiteral("storeHint"));
    storeHint->setForegroundRole(QPalette::PlaceholderText);
    auto* storeColumn = new QVBoxLayout;
    storeColumn->setSpacing(2);
    storeColumn->addWidget(m_db);
    storeColumn->addWidget(storeHint);
    problem->addRow(tr("Store"), storeColumn);

    //: run dialog: group of who proposes candidates and how they are measured
    auto* proposerGroup = new QGroupBox(tr("Proposer"), this);
    proposerGroup->setObjectName(QStringLiteral("proposerGroup"));
    auto* proposer = new QFormLayout(proposerGroup);
    proposer->addRow(tr("Proposer"), m_proposer);
    proposer->addRow(tr("Strategy"), m_strategy);
    proposer->addRow(tr("Mode"), m_mode);
    //: run dialog: k candidates evaluated per round
    proposer->addRow(tr("Candidates per round"), m_candidates);
    //: run dialog: CUPTI metric set; lines = PC sampling per source line, deep = stall counters and lines
    proposer->addRow(tr("Metric set"), m_metrics);

    //: run dialog: group of when the session stops
    auto* budgetGroup = new QGroupBox(tr("Budget"), this);
    budgetGroup->setObjectName(QStringLiteral("budgetGroup"));
    auto* budget = new QFormLayout(budgetGroup);
    //: run dialog: rounds after the baseline
    budget->addRow(tr("Rounds"), m_budget);
    budget->addRow(tr("Wall time (s)"), m_wallSeconds);
    budget->addRow(tr("Target speedup"), m_target);
    budget->addRow(tr("Patience (rounds)"), m_patience);

    //: run dialog: group of where candidates run (a GPU here, over ssh, Slurm jobs)
    auto* runnerGroup = new QGroupBox(tr("Runner"), this);
    runnerGroup->setObjectName(QStringLiteral("runnerGroup"));
    auto* runner = new QFormLayout(runnerGroup);
    runner->addRow(tr("Runner"), m_runner);
    runner->addRow(tr("GPU index"), m_device);
    //: run dialog: the runner pool's endpoints (GPUs here, over ssh, or Slurm jobs)
    runner->addRow(tr("Runner endpoints"), m_endpoints);
    runner->addRow(tr("Runners file"), m_runnersFile);
    //: run dialog: kernelloop-runner's path on ssh hosts and Slurm nodes
    runner->addRow(tr("Remote runner"), m_remoteRunner);

    auto* llm = new QFormLayout(m_llm);
    llm->addRow(tr("Provider"), m_provider);
    llm->addRow(tr("Base URL"), m_baseUrl);
    llm->addRow(tr("Model"), m_model);
    llm->addRow(tr("Roles"), m_roles);
    llm->addRow(tr("Temperature"), m_temperature);
    llm->addRow(tr("Token budget"), m_tokenBudget);
    llm->addRow(tr("Key variable"), m_keyEnv);
    llm->addRow(tr("Key file"), m_keyFile);
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(m_apiKey, 1);
    keyRow->addWidget(m_saveKey);
    llm->addRow(tr("API key"), keyRow);

    auto* copy = new QPushButton(tr("Copy"), this);
    connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(m_command->text()); });
    auto* commandRow = new QHBoxLayout;
    commandRow->addWidget(m_command, 1);
    commandRow->addWidget(copy);
    //: run dialog: fill the form from a pasted command line
    auto* use = new QPushButton(tr("Use"), this);
    connect(use, &QPushButton::clicked, this, [this] { useCommandLine(m_paste->text()); });
    auto* pasteRow = new QHBoxLayout;
    pasteRow->addWidget(m_paste, 1);
    pasteRow->addWidget(use);
    auto* lines = new QFormLayout;
    //: run dialog: the kernelloop-cli command that runs the same session
    lines->addRow(tr("Command line"), commandRow);
    lines->addRow(tr("From a line"), pasteRow);
    lines->addRow(QString(), m_pasteError);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    //: run dialog: the OK button starts the session
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* left = new QVBoxLayout;
    left->addWidget(problemGroup);
    left->addWidget(proposerGroup);
    left->addWidget(budgetGroup);
    left->addStretch(1);
    auto* right = new QVBoxLayout;
    right->addWidget(runnerGroup);
    right->addWidget(m_llm);
    right->addStretch(1);
    auto* columns = new QHBoxLayout;
    columns->addLayout(left, 1);
    columns->addLayout(right, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(columns);
    layout->addLayout(lines);
    layout->addWidget(buttons);

    for (QLineEdit* e :
        { m_problem, m_label, m_db, m_runner, m_runnersFile, m_remoteRunner, m_baseUrl, m_model, m_keyEnv, m_keyFile })
        connect(e, &QLineEdit::textChanged, this, &RunDialog::refreshCommandLine);
    connect(m_endpoints, &QPlainTextEdit::textChanged, this, &RunDialog::refreshCommandLine);
    for (QComboBox* c : { m_proposer, m_strategy, m_start, m_language, m_metrics, m_mode, m_provider, m_roles })
        connect(c, &QComboBox::currentTextChanged, this, &RunDialog::refreshCommandLine);
    for (QSpinBox* s : { m_budget, m_wallSeconds, m_patience, m_candidates, m_device, m_tokenBudget })
        connect(s, &QSpinBox::valueChanged, this, &RunDialog::refreshCommandLine);
    for (QDoubleSpinBox* s : { m_target, m_temperature })
        connect(s, &QDoubleSpinBox::valueChanged, this, &RunDialog::refreshCommandLine);
    setRecipe({});
}

session::SessionRecipe RunDialog::recipe() const
{
    session::SessionRecipe r = m_rest;
    r.problem = toStdString(m_problem->text());
    r.proposer
        = session::parseProposerChoice(toStdString(m_proposer->currentText())).value_or(session::ProposerChoice::Tuner);
    r.strategy = toStdString(m_strategy->currentText());
    r.start = toStdString(m_start->currentText().trimmed());
    r.language = m_language->currentIndex() == 0 ? std::string() : toStdString(m_language->currentText());
    r.budget = m_budget->value();
    r.wallSeconds = m_wallSeconds->value();
    r.targetSpeedup = m_target->value();
    r.patience = m_patience->value();
    r.candidatesPerRound = m_candidates->value();
    r.metrics = toStdString(m_metrics->currentText());
    r.mode = m_mode->currentText() == QLatin1String("review") ? LoopMode::Review : LoopMode::Auto;
    r.label = toStdString(m_label->text());
    r.db = toStdString(m_db->text());
    r.runner = toStdString(m_runner->text().trimmed());
    r.device = m_device->value();
    r.runners.clear();
    for (const auto& line : m_endpoints->toPlainText().split(QLatin1Char('\n'))) {
        const auto endpoint = line.trimmed();
        if (!endpoint.isEmpty() && !endpoint.startsWith(QLatin1Char('#')))
            r.runners.push_back(toStdString(endpoint));
    }
    r.runnersFile = toStdString(m_runnersFile->text());
    r.remoteRunner = m_remoteRunner->text().trimmed().isEmpty() ? std::string("kernelloop-runner")
                                                                : toStdString(m_remoteRunner->text().trimmed());
    r.llm.provider = toStdString(m_provider->currentText());
    r.llm.baseUrl = toStdString(m_baseUrl->text());
    r.llm.model = toStdString(m_model->text());
    r.llm.roles = toStdString(m_roles->currentText());
    r.llm.temperature = m_temperature->value() < 0.0 ? -1.0 : m_temperature->value();
    r.llm.tokenBudget = m_tokenBudget->value();
    r.llm.keyEnv = toStdString(m_keyEnv->text());
    r.llm.keyFile = toStdString(m_keyFile->text());
    return r;
}

void RunDialog::setRecipe(const session::SessionRecipe& r)
{
    m_rest = r;
    m_problem->setText(toQString(r.problem));
    m_proposer->setCurrentText(QString::fromLatin1(session::proposerChoiceName(r.proposer)));
    m_strategy->setCurrentText(toQString(r.strategy));
    m_start->setCurrentText(toQString(r.start));
    m_language->setCurrentIndex(r.language == "triton" ? 1 : r.language == "cuda" ? 2 : 0);
    m_budget->setValue(r.budget);
    m_wallSeconds->setValue(int(r.wallSeconds));
    m_target->setValue(r.targetSpeedup);
    m_patience->setValue(r.patience);
    m_candidates->setValue(r.candidatesPerRound);
    if (m_metrics->findText(toQString(r.metrics)) < 0) // a set this dialog does not list: kept, not dropped
        m_metrics->addItem(toQString(r.metrics));
    m_metrics->setCurrentText(toQString(r.metrics));
    m_mode->setCurrentText(r.mode == LoopMode::Review ? QStringLiteral("review") : QStringLiteral("auto"));
    m_label->setText(toQString(r.label));
    m_db->setText(toQString(r.db));
    m_runner->setText(toQString(r.runner));
    m_device->setValue(r.device);
    QStringList endpoints;
    for (const auto& e : r.runners)
        endpoints << toQString(e);
    m_endpoints->setPlainText(endpoints.join(QLatin1Char('\n')));
    m_runnersFile->setText(toQString(r.runnersFile));
    m_remoteRunner->setText(toQString(r.remoteRunner));
    m_provider->setCurrentText(toQString(r.llm.provider));
    m_baseUrl->setText(toQString(r.llm.baseUrl));
    m_model->setText(toQString(r.llm.model));
    m_roles->setCurrentText(toQString(r.llm.roles));
    m_temperature->setValue(r.llm.temperature < 0.0 ? -1.0 : r.llm.temperature);
    m_tokenBudget->setValue(int(std::min<std::int64_t>(r.llm.tokenBudget, 1'000'000'000)));
    m_keyEnv->setText(toQString(r.llm.keyEnv));
    m_keyFile->setText(toQString(r.llm.keyFile));
    refreshCommandLine();
}

QString RunDialog::commandLine() const { return m_command->text(); }

QString RunDialog::useCommandLine(const QString& line)
{
    try {
        setRecipe(session::parseCommandLine(toStdString(line)));
        m_pasteError->hide();
        return {};
    } catch (const Error& e) {
        const QString text
            = QStringLiteral("[") + toQString(e.category()) + QStringLiteral("] ") + toQString(e.message());
        m_pasteError->setText(text);
        m_pasteError->show();
        return text;
    }
}

QString RunDialog::typedApiKey() const { return m_apiKey->text(); }

bool RunDialog::saveKeyInKeychain() const { return m_saveKey->isChecked() && m_saveKey->isEnabled(); }

void RunDialog::setKeychainAvailable(bool available, const QString& why)
{
    m_saveKey->setEnabled(available);
    m_saveKey->setChecked(available);
    m_apiKey->setEnabled(available);
    if (!available) { // a placeholder cannot wrap: the short form in the field, the reason in its tooltip
        //: run dialog: placeholder of the disabled API key field where no keychain runs
        m_apiKey->setPlaceholderText(tr("no keychain here"));
        m_apiKey->setToolTip(why);
    }
}

void RunDialog::refreshCommandLine()
{
    const auto r = recipe();
    m_llm->setEnabled(r.proposer != session::ProposerChoice::Tuner);
    m_command->setText(toQString(session::commandLine(r)));
    m_command->setCursorPosition(0);
}

} // namespace kl::gui
