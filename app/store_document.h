#pragma once
// A store or a recorded .klsession opened for viewing: a read-only connection that never writes
// the file, the session list, and each session as the immutable SessionView the panels show.
// Figures for the charts are read on a worker thread with its own connection (figuresOf).
#include "core/store/store.h"
#include "widgets/session_view.h"

#include <QString>

#include <memory>

namespace kl::gui {

class StoreDocument {
public:
    // Throws kl::Error ("store.*") when the file is not a KernelLoop store or cannot be read.
    static std::shared_ptr<StoreDocument> open(const QString& path);

    const QString& path() const { return m_path; }
    std::vector<store::SessionRow> sessions() const;
    // The session's rows and parents (no figures yet: see readFigures). Null for an unknown id.
    std::shared_ptr<SessionView> session(std::int64_t sessionId) const;
    std::shared_ptr<const store::IterationDetail> iteration(std::int64_t sessionId, int index) const;
    // Opens a connection of its own: call from any thread.
    static std::vector<figures::IterationFigures> readFigures(const QString& path, std::int64_t sessionId);

    void exportSession(std::int64_t sessionId, const QString& file) const;
    const store::Store& store() const { return m_store; }

private:
    StoreDocument(QString path, store::Store store);

    QString m_path;
    store::Store m_store;
};

// True when the file starts with SQLite's header (a store or a .klsession), false for anything
// else (a problem file is JSON).
bool isStoreFile(const QString& path);

} // namespace kl::gui
