// An iteration whose session kept no listing (issue 28: source beside SASS/PTX for every iteration):
// its stored source compiled again here with the real NVRTC, with line info, and the reasons when
// that cannot be done (a Triton candidate, a source that does not compile).
#include "core/lines/ptx_listing.h"
#include "core/model/problem.h"
#include "core/report/listings_compiled_here.h"
#include "tests/scoped_env.h"

#include <QtTest/QTest>

using namespace kl;

namespace {

store::CandidateRecord record(const std::string& source, const std::string& fileName = "kernel.cu")
{
    store::CandidateRecord r;
    r.source = source;
    r.fileName = fileName;
    r.tunables = { { "SCALE", 3 } };
    return r;
}

const std::string kKernel = R"(// @kl tunable SCALE = 2 in 2, 3
// @kl launch scale grid=(1) block=(32) args=(x)
extern "C" __global__ void scale(float* x)
{
    x[threadIdx.x] *= SCALE;
}
)";

} // namespace

class TestListingsCompiledHere : public QObject {
    Q_OBJECT

private slots:
    void archFromTheStoredProblem()
    {
        QCOMPARE(problemArchOf(R"({"name": "p", "arch": "sm_100a"})"), std::string("sm_100a"));
        QCOMPARE(problemArchOf(R"({"name": "p"})"), std::string("sm_90"));
        QCOMPARE(problemArchOf("not json"), std::string("sm_90"));
        QCOMPARE(problemArchOf(R"({"arch": "-I/etc"})"), std::string("sm_90"));
    }

    void cudaSourceCompiledWithLineInfo()
    {
        test::ScopedEnv noTool { { "KL_NVDISASM", "off" } };
        const auto here = report::compileListingsHere(record(kKernel), "sm_90");
        QVERIFY2(!here.listings.ptx.empty(), here.note.c_str());
        QVERIFY2(here.note.starts_with("compiled here from the stored source (NVRTC "), here.note.c_str());
        QVERIFY2(here.note.ends_with(", sm_90): the session stored no listing"), here.note.c_str());
        QVERIFY(here.listings.sass.empty());
        QVERIFY(!here.listings.sassNote.empty());
        // The stored tunables, not the defaults: SCALE=3 reaches the PTX as the constant 3.
        QVERIFY(here.listings.ptx.find("0f40400000") != std::string::npos);
        // Line info: the multiply of line 5 is linked to its PTX.
        QVERIFY(!lines::parsePtx(here.listings.ptx).ptxLinesFor(5).empty());
    }

    void reasonsWhenItCannot()
    {
        const auto triton
            = report::compileListingsHere(record("# @kl launch k grid=(1) num_warps=(4) args=()\n", "k.py"), "sm_90");
        QVERIFY(triton.listings.ptx.empty());
        QCOMPARE(triton.note,
            std::string("the session stored no listing, and a Triton candidate is not compiled again here"));
        const auto broken = report::compileListingsHere(
            record("// @kl tunable SCALE = 2 in 2, 3\n// @kl launch k grid=(1) block=(1) args=()\n"
                   "extern \"C\" __global__ void k() { int x = ; }\n"),
            "sm_90");
        QVERIFY(broken.listings.ptx.empty());
        QVERIFY2(broken.note.starts_with("the session stored no listing, and its source does not compile here: syntax"),
            broken.note.c_str());
    }
};

QTEST_GUILESS_MAIN(TestListingsCompiledHere)
#include "test_listings_compiled_here.moc"
