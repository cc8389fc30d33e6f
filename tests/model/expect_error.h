#pragma once
// The model suites' check that input is refused as it should be: `f` throws kl::Error of
// `category` whose text mentions `where` (the message is cut to 300 characters when it is shown).
#include "core/model/error.h"

#include <QString>
#include <QTest>

#include <functional>
#include <string>

namespace kl::test {

inline void expectError(const std::function<void()>& f, const std::string& category, const std::string& where)
{
    try {
        f();
    } catch (const kl::Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QString::fromStdString(category));
        QVERIFY2(std::string(e.what()).find(where) != std::string::npos,
            qPrintable(QStringLiteral("message \"%1\" does not mention \"%2\"")
                           .arg(QString::fromStdString(e.what()).left(300), QString::fromStdString(where))));
        return;
    }
    QFAIL("no kl::Error was thrown");
}

} // namespace kl::test
