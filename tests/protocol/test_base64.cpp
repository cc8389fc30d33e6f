// Base64 for cubins: RFC 4648 vectors, every length around the padding boundaries, binary bytes,
// and every kind of malformed input refused.
#include "core/protocol/base64.h"

#include <QtTest>

#include <random>

using namespace kl::protocol;

class TestBase64 : public QObject {
    Q_OBJECT
private slots:
    void rfcVectors_data()
    {
        QTest::addColumn<QByteArray>("plain");
        QTest::addColumn<QByteArray>("encoded");
        QTest::newRow("empty") << QByteArray() << QByteArray();
        QTest::newRow("f") << QByteArray("f") << QByteArray("Zg==");
        QTest::newRow("fo") << QByteArray("fo") << QByteArray("Zm8=");
        QTest::newRow("foo") << QByteArray("foo") << QByteArray("Zm9v");
        QTest::newRow("foob") << QByteArray("foob") << QByteArray("Zm9vYg==");
        QTest::newRow("fooba") << QByteArray("fooba") << QByteArray("Zm9vYmE=");
        QTest::newRow("foobar") << QByteArray("foobar") << QByteArray("Zm9vYmFy");
        QTest::newRow("high bytes") << QByteArray("\xff\xfe\xfd", 3) << QByteArray("//79");
        QTest::newRow("zeros") << QByteArray(4, '\0') << QByteArray("AAAAAA==");
    }
    void rfcVectors()
    {
        QFETCH(QByteArray, plain);
        QFETCH(QByteArray, encoded);
        const auto e = base64Encode(std::string_view(plain.constData(), static_cast<std::size_t>(plain.size())));
        QCOMPARE(QByteArray::fromStdString(e), encoded);
        const auto d = base64Decode(e);
        QVERIFY(d.has_value());
        QCOMPARE(QByteArray::fromStdString(*d), plain);
        // Qt's own codec agrees.
        QCOMPARE(plain.toBase64(), encoded);
    }

    void randomBinaryRoundTrips()
    {
        std::mt19937 rng(7);
        for (std::size_t length = 0; length < 300; ++length) {
            std::string bytes(length, '\0');
            for (auto& b : bytes)
                b = static_cast<char>(rng() & 0xff);
            const auto encoded = base64Encode(bytes);
            QCOMPARE(encoded.size(), (length + 2) / 3 * 4);
            const auto decoded = base64Decode(encoded);
            QVERIFY(decoded.has_value());
            QVERIFY(*decoded == bytes);
        }
    }

    void malformedIsRefused_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::newRow("length not a multiple of 4") << QByteArray("Zm9vY");
        QTest::newRow("bad character") << QByteArray("Zm9*");
        QTest::newRow("url alphabet") << QByteArray("Zm9-");
        QTest::newRow("whitespace") << QByteArray("Zm9v\nYmFy");
        QTest::newRow("padding in the middle") << QByteArray("Zg==Zm9v");
        QTest::newRow("three padding") << QByteArray("Z===");
        QTest::newRow("data after padding") << QByteArray("Zg=a");
        QTest::newRow("all padding") << QByteArray("====");
    }
    void malformedIsRefused()
    {
        QFETCH(QByteArray, text);
        QVERIFY(!base64Decode(text.toStdString()).has_value());
    }
};

QTEST_GUILESS_MAIN(TestBase64)
#include "test_base64.moc"
