#pragma once
// What the review workspace tests share: the two bundled recorded H200 sessions, the application
// set up in test mode (so no real settings are read or written), a shown workspace, and opening a
// store that waits until its figures are drawn.
#include "app/review_workspace.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>

#include <memory>

namespace kl::testing {

inline const QString tunerSession = QStringLiteral(KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-h200.klsession");
inline const QString llmSession
    = QStringLiteral(KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-llm-replay-h200.klsession");

inline void useTestSettings(const QString& applicationName)
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
    QCoreApplication::setApplicationName(applicationName);
}

// Shown at the size the screenshots use; the caller waits for it to be exposed.
inline std::unique_ptr<gui::ReviewWorkspace> shownReviewWorkspace()
{
    auto review = std::make_unique<gui::ReviewWorkspace>();
    review->resize(1500, 950);
    review->show();
    return review;
}

// Opens the store and, when it holds a session, waits for the charts (figures load in the background).
inline void openAndWait(gui::ReviewWorkspace& review, const QString& path)
{
    QSignalSpy figures(&review, &gui::ReviewWorkspace::figuresShown);
    review.openStore(path);
    if (review.hasSession())
        QVERIFY(figures.wait(20000));
}

// The inspector's tab of that title, made current, as its panel type; null when there is none.
template <typename Panel> Panel* inspectorTab(gui::ReviewWorkspace& review, const QString& title)
{
    for (int i = 0; i < review.inspector()->count(); ++i)
        if (review.inspector()->tabText(i) == title) {
            review.inspector()->setCurrentIndex(i);
            return qobject_cast<Panel*>(review.inspector()->widget(i));
        }
    return nullptr;
}

} // namespace kl::testing
