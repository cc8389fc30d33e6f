// The editor as a document, offscreen, on a copy of the example problem: Save and Save As write the
// text and clear the title's modified marker; Save on the problem's baseline asks first; Reload, Open,
// Open Iteration in Editor and Quit ask before they drop edits (Save / Discard / Cancel, through the
// injected prompt and through the real message box answered by a timer); Find/Replace and Go to Line.
#include "app/main_window.h"
#include "widgets/find_bar.h"
#include "widgets/kernel_editor.h"

#include <QAbstractButton>
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QScreen>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace kl;
using namespace kl::gui;

namespace {

const QString exampleDir = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu");

QString readAll(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// Answers the next modal dialog from inside its own event loop.
template <typename Answer> void answerNextDialog(Answer answer)
{
    QTimer::singleShot(0, qApp, [answer] {
        QWidget* modal = QApplication::activeModalWidget();
        QVERIFY(modal);
        answer(modal);
    });
}

// Answers the first modal dialog of type T to open (polled: it may open after another closes).
template <typename T, typename Answer> void answerDialogOfType(Answer answer, int triesLeft = 100)
{
    QTimer::singleShot(30, qApp, [answer, triesLeft] {
        if (auto* dialog = qobject_cast<T*>(QApplication::activeModalWidget()))
            answer(dialog);
        else if (triesLeft > 0)
            answerDialogOfType<T>(answer, triesLeft - 1);
    });
}

} // namespace

class TestGuiEditor : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_editor"));
    }

    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        for (const QString& name : QDir(exampleDir).entryList(QDir::Files))
            QVERIFY(QFile::copy(exampleDir + QLatin1Char('/') + name, m_dir->filePath(name)));
        m_problem = m_dir->filePath(QStringLiteral("problem.json"));
        m_baseline = m_dir->filePath(QStringLiteral("baseline.cu"));
        m_window = std::make_unique<MainWindow>();
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QVERIFY(m_window->openProblem(m_problem));
        m_window->setUnsavedEditsPrompt([this](const QString& action) {
            m_asked.append(action);
            return m_answer;
        });
        // The copy's baseline may be overwritten (saveOnTheBaselineAsksFirst asks the real question).
        m_window->setBaselineSavePrompt([](const QString&) { return MainWindow::BaselineSave::Overwrite; });
        m_asked.clear();
    }

    void cleanup()
    {
        m_window.reset();
        m_dir.reset();
    }

    void firstWindowIsBigEnoughToRead()
    {
        // No saved geometry in test mode: the default size, not the widgets' minimum.
        MainWindow fresh;
        const QSize room = fresh.screen()->availableGeometry().size();
        QCOMPARE(fresh.width(), std::min(1600, room.width())); // 547 before: the report's values clipped
        // Less room for a title bar above it (the window's own allowance, 40 px on a 768-px laptop).
        QVERIFY2(fresh.height() >= std::min(1000, room.height() - 40),
            qPrintable(QStringLiteral("%1 on a %2 px screen").arg(fresh.height()).arg(room.height())));
    }

    void saveWritesTheFileAndClearsTheMarker()
    {
        QVERIFY(m_window->windowTitle().contains(QStringLiteral("[*]")));
        QCOMPARE(m_window->candidatePath(), m_baseline);
        QVERIFY(!m_window->isWindowModified());
        const QString edited = m_window->editor()->source() + QStringLiteral("\n// edited\n");
        m_window->editor()->setText(edited);
        QVERIFY(m_window->isWindowModified());
        QVERIFY(m_window->saveCandidate());
        QVERIFY(!m_window->isWindowModified());
        QCOMPARE(readAll(m_baseline), edited);

        // Save As writes the other file, which Save then writes.
        const QString other = m_dir->filePath(QStringLiteral("other.cu"));
        m_window->editor()->setText(edited + QStringLiteral("// again\n"));
        QVERIFY(m_window->saveCandidateAs(other));
        QCOMPARE(m_window->candidatePath(), other);
        QCOMPARE(readAll(other), edited + QStringLiteral("// again\n"));
        QCOMPARE(readAll(m_baseline), edited);
        QVERIFY(!m_window->isWindowModified());

        // A file that cannot be written keeps the edits, the marker and the old file name.
        m_window->editor()->setText(QStringLiteral("x"));
        QVERIFY(!m_window->saveCandidateAs(m_dir->filePath(QStringLiteral("no/such/folder/k.cu"))));
        QCOMPARE(m_window->candidatePath(), other);
        QVERIFY(m_window->isWindowModified());
        QVERIFY(m_window->statusText().startsWith(QStringLiteral("Cannot save")));
    }

    // Ctrl+S on the problem's own baseline (the bundled one, when the example was opened) overwrote it
    // without a word. It asks: Cancel leaves it as it was, Save as a New File writes another file (which
    // Save then writes), Overwrite writes it and is not asked again for this problem.
    void saveOnTheBaselineAsksFirst()
    {
        m_window->setBaselineSavePrompt({}); // the real question
        const QString original = readAll(m_baseline);
        QVERIFY(!original.isEmpty());
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        m_window->editor()->setFocus();
        m_window->editor()->setText(QStringLiteral("// mine\n") + original);
        QString asked;
        answerNextDialog([&asked](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            QVERIFY(box);
            asked = box->text() + QLatin1Char(' ') + box->informativeText();
            box->button(QMessageBox::Cancel)->click();
        });
        QTest::keyClick(m_window->editor(), Qt::Key_S, Qt::ControlModifier);
        QVERIFY2(asked.startsWith(QStringLiteral("baseline.cu is the problem's baseline kernel")), qPrintable(asked));
        QCOMPARE(readAll(m_baseline), original);
        QVERIFY(m_window->isWindowModified());
        QVERIFY(m_window->statusText().startsWith(QStringLiteral("Not saved")));

        // Save as a New File: the file dialog, then that file is the editor's.
        const QString mine = m_dir->filePath(QStringLiteral("mine.cu"));
        answerNextDialog([](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            QVERIFY(box);
            for (QAbstractButton* button : box->buttons())
                if (button->text().startsWith(QStringLiteral("Save as a New File")))
                    button->click();
        });
        answerDialogOfType<QFileDialog>([mine](QFileDialog* dialog) {
            QVERIFY(!dialog->selectedFiles().value(0).endsWith(QStringLiteral("/baseline.cu"))); // not offered
            // Typed into the name field: selectFile() leaves the field alone once it has the focus,
            // which the dialog gives it on its own time.
            auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
            QVERIFY(name);
            name->setText(mine);
            static_cast<QDialog*>(dialog)->accept(); // QFileDialog::accept, public through QDialog
        });
        QVERIFY(m_window->saveCandidate()); // File ▸ Save, as Ctrl+S above
        QCOMPARE(m_window->candidatePath(), mine);
        QCOMPARE(readAll(mine), QStringLiteral("// mine\n") + original);
        QCOMPARE(readAll(m_baseline), original);

        // Overwrite, once asked; the next Save on it does not ask again.
        QVERIFY(m_window->openProblem(m_problem));
        m_window->editor()->setText(QStringLiteral("// over\n") + original);
        answerNextDialog([](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            QVERIFY(box);
            for (QAbstractButton* button : box->buttons())
                if (button->text() == QStringLiteral("Overwrite the Baseline"))
                    button->click();
        });
        QVERIFY(m_window->saveCandidate());
        QCOMPARE(readAll(m_baseline), QStringLiteral("// over\n") + original);
        int askedAgain = 0;
        m_window->setBaselineSavePrompt([&askedAgain](const QString&) {
            ++askedAgain;
            return MainWindow::BaselineSave::Cancel;
        });
        m_window->editor()->setText(QStringLiteral("// over again\n") + original);
        QVERIFY(m_window->saveCandidate());
        QCOMPARE(askedAgain, 0);
        QVERIFY(readAll(m_baseline).startsWith(QStringLiteral("// over again")));
    }

    void reloadAsksBeforeDroppingEdits()
    {
        const QString original = readAll(m_baseline);
        m_window->editor()->setText(QStringLiteral("// mine\n") + original);

        m_answer = MainWindow::UnsavedEdits::Cancel;
        QVERIFY(!m_window->openProblem(m_problem));
        QCOMPARE(m_asked, QStringList { QStringLiteral("Reloading the problem") });
        QVERIFY(m_window->editor()->source().startsWith(QStringLiteral("// mine")));

        m_answer = MainWindow::UnsavedEdits::Discard;
        QVERIFY(m_window->openProblem(m_problem));
        QCOMPARE(m_window->editor()->source(), original);
        QCOMPARE(readAll(m_baseline), original);
        QVERIFY(!m_window->isWindowModified());

        m_window->editor()->setText(QStringLiteral("// saved on reload\n") + original);
        m_answer = MainWindow::UnsavedEdits::Save;
        QVERIFY(m_window->openProblem(m_problem));
        QVERIFY(readAll(m_baseline).startsWith(QStringLiteral("// saved on reload")));
        QVERIFY(m_window->editor()->source().startsWith(QStringLiteral("// saved on reload")));

        // Nothing to lose: no question.
        m_asked.clear();
        QVERIFY(m_window->openProblem(m_problem));
        QVERIFY(m_asked.isEmpty());
    }

    void openingAnIterationAsksToo()
    {
        m_window->editor()->setText(QStringLiteral("// mine\n"));
        m_answer = MainWindow::UnsavedEdits::Cancel;
        m_window->openCandidate(QStringLiteral("// from the store\n"), {});
        QCOMPARE(m_window->editor()->source(), QStringLiteral("// mine\n"));
        QCOMPARE(m_asked.size(), 1);
        m_answer = MainWindow::UnsavedEdits::Discard;
        m_window->openCandidate(QStringLiteral("// from the store\n"), {});
        QCOMPARE(m_window->editor()->source(), QStringLiteral("// from the store\n"));
        QVERIFY(m_window->candidatePath().isEmpty()); // a new candidate: Save asks where
    }

    void quitAsksWithTheMessageBox()
    {
        m_window->setUnsavedEditsPrompt({}); // the real question
        m_window->editor()->setText(QStringLiteral("// unsaved\n"));
        QString informative;
        answerNextDialog([&informative](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            QVERIFY(box);
            informative = box->informativeText();
            QVERIFY(box->button(QMessageBox::Save) && box->button(QMessageBox::Discard));
            box->button(QMessageBox::Cancel)->click();
        });
        QVERIFY(!m_window->close());
        QVERIFY(m_window->isVisible());
        QVERIFY2(informative.startsWith(QStringLiteral("Quitting")), qPrintable(informative));

        answerNextDialog(
            [](QWidget* modal) { qobject_cast<QMessageBox*>(modal)->button(QMessageBox::Discard)->click(); });
        QVERIFY(m_window->close());
        QCOMPARE(readAll(m_baseline).startsWith(QStringLiteral("// unsaved")), false);
    }

    void findAndReplace()
    {
        KernelEditor editor;
        FindBar bar(&editor);
        editor.setSource(QStringLiteral("float foo = 1;\nint Foo = 2;\nfoo += Foo;\n"));
        bar.open(true);
        bar.findEdit()->setText(QStringLiteral("foo"));
        int line = -1, index = -1;
        QVERIFY(bar.findNext());
        editor.getCursorPosition(&line, &index);
        QCOMPARE(line, 0);
        QCOMPARE(editor.selectedText(), QStringLiteral("foo"));
        QVERIFY(bar.findNext()); // case-insensitive: "Foo" on line 2
        QCOMPARE(editor.selectedText(), QStringLiteral("Foo"));
        editor.getCursorPosition(&line, &index);
        QCOMPARE(line, 1);
        QVERIFY(bar.findNext(false)); // back to line 1
        editor.getCursorPosition(&line, &index);
        QCOMPARE(line, 0);

        bar.caseBox()->setChecked(true);
        QVERIFY(bar.findNext());
        editor.getCursorPosition(&line, &index);
        QCOMPARE(line, 2); // "Foo" on line 2 skipped
        QVERIFY(bar.findNext()); // wraps to line 1
        editor.getCursorPosition(&line, &index);
        QCOMPARE(line, 0);

        // Replace one, then all; the replacement containing the text is not found again.
        bar.replaceEdit()->setText(QStringLiteral("foofoo"));
        QVERIFY(bar.replaceCurrent());
        QVERIFY(editor.text().startsWith(QStringLiteral("float foofoo = 1;")));
        bar.caseBox()->setChecked(false);
        editor.setCursorPosition(0, 0);
        QCOMPARE(bar.replaceAll(), 5);
        QCOMPARE(editor.text(), QStringLiteral("float foofoofoofoo = 1;\nint foofoo = 2;\nfoofoo += foofoo;\n"));
        QCOMPARE(bar.message(), QStringLiteral("5 replaced"));
        editor.undo(); // one undo step for Replace All
        QCOMPARE(editor.text(), QStringLiteral("float foofoo = 1;\nint Foo = 2;\nfoo += Foo;\n"));

        bar.findEdit()->setText(QStringLiteral("absent"));
        QVERIFY(!bar.findNext());
        QCOMPARE(bar.message(), QStringLiteral("Not found"));
    }

    void findBarFromTheMenuAndGoToLine()
    {
        QVERIFY(!m_window->findBar()->isVisible());
        QTest::keyClick(m_window->editor(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(m_window->findBar()->isVisible());
        QVERIFY(!m_window->findBar()->replaceEdit()->isVisible());
        QTest::keyClick(m_window->findBar()->findEdit(), Qt::Key_Escape);
        QVERIFY(!m_window->findBar()->isVisible());

        answerNextDialog([](QWidget* modal) {
            auto* dialog = qobject_cast<QInputDialog*>(modal);
            QVERIFY(dialog);
            QVERIFY(dialog->intMaximum() > 12);
            dialog->setIntValue(12);
            dialog->accept();
        });
        m_window->askForLine();
        int line = -1, index = -1;
        m_window->editor()->getCursorPosition(&line, &index);
        QCOMPARE(line, 11);
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<MainWindow> m_window;
    QString m_problem, m_baseline;
    QStringList m_asked;
    MainWindow::UnsavedEdits m_answer = MainWindow::UnsavedEdits::Cancel;
};

QTEST_MAIN(TestGuiEditor)
#include "test_editor.moc"
