// The instruction mix of a kernel's code (issue 28): SASS opcodes counted by class on the H200's real
// nvdisasm and cuobjdump listings (tests/fixtures/lines), PTX counted on real NVRTC output compiled
// here, and two iterations' code compared: SASS where both have it, else PTX saying why.
#include "core/compile/compiler.h"
#include "core/lines/instruction_mix.h"
#include "core/lines/sass_disassembly.h"
#include "core/lines/sass_listing.h"
#include "core/model/candidate.h"
#include "core/report/code_comparison.h"
#include "core/store/code_listings.h"
#include "tests/test_files.h"

#include <QtTest/QTest>

using namespace kl;
using lines::InstructionClass;
using C = lines::InstructionClass;

Q_DECLARE_METATYPE(lines::InstructionClass)

namespace {

lines::InstructionMix sassFixture(const std::string& name)
{
    return lines::sassInstructionMix(lines::parseSass(test::sourceText("tests/fixtures/lines/" + name)));
}

std::string ptxOf(const std::string& source)
{
    CompileOptions options;
    options.arch = "sm_90";
    const Candidate candidate = parseCandidate(source, "mix.cu");
    options.tunables = candidate.defaults();
    const CompileResult result = compileCandidate(candidate, options);
    if (!result.ok)
        qWarning("%s\n%s", result.summary.c_str(), result.log.c_str());
    return result.ptx;
}

// A row of 256 floats staged through shared memory, scaled with an FMA, written back.
const std::string kStaged = R"(// @kl launch staged grid=(1) block=(256) args=(x, y)
extern "C" __global__ void staged(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float row[256];
    row[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = fmaf(row[255 - threadIdx.x], 2.0f, x[threadIdx.x]);
}
)";

// A 16x16x16 half-precision tile through the tensor cores.
const std::string kWmma = R"(// @kl launch tile grid=(1) block=(32) args=(a, b, c)
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void tile(const half* a, const half* b, float* c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
)";

} // namespace

class TestInstructionMix : public QObject {
    Q_OBJECT

private slots:
    void sassOpcodes_data()
    {
        QTest::addColumn<QString>("instruction");
        QTest::addColumn<InstructionClass>("expected");
        QTest::newRow("vector load") << "LDG.E.128.CONSTANT R4, desc[UR4][R2.64]" << C::GlobalLoad;
        QTest::newRow("predicated store") << "@!P0 STG.E desc[UR4][R2.64], R5" << C::GlobalStore;
        QTest::newRow("ldmatrix") << "LDSM.16.M88.4 R8, [R20]" << C::SharedLoad;
        QTest::newRow("spill") << "STL.64 [R1+0x8], R4" << C::LocalMemory;
        QTest::newRow("uniform constant") << "ULDC.64 UR4, c[0x0][0x208]" << C::ConstantLoad;
        QTest::newRow("hopper mma") << "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24" << C::TensorCore;
        QTest::newRow("ampere mma") << "HMMA.16816.F32 R4, R8, R12, R4" << C::TensorCore;
        QTest::newRow("tma") << "UTMALDG.2D [UR8], [UR4]" << C::AsyncCopy;
        QTest::newRow("fma") << "FFMA R0, R2, R3, R0" << C::Fp32;
        QTest::newRow("half2") << "HFMA2 R0, R2, R3, R0" << C::Fp16;
        QTest::newRow("mufu") << "MUFU.EX2 R3, R2" << C::SpecialFunction;
        QTest::newRow("uniform integer") << "UIADD3 UR4, UR4, 0x1, URZ" << C::Integer;
        QTest::newRow("conversion") << "F2FP.F16.F32.PACK_AB R0, R1, R2" << C::Conversion;
        QTest::newRow("shuffle") << "SHFL.BFLY PT, R3, R2, 0x10, 0x1f" << C::Warp;
        QTest::newRow("barrier") << "BAR.SYNC.DEFER_BLOCKING 0x0" << C::Control;
        QTest::newRow("move") << "S2R R0, SR_TID.X" << C::Other;
    }
    void sassOpcodes()
    {
        QFETCH(QString, instruction);
        QFETCH(InstructionClass, expected);
        const auto c = lines::classifySass(instruction.toStdString());
        QVERIFY(c);
        QCOMPARE(*c, expected);
    }

    void ptxLines_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<int>("expected"); // -1: not an instruction
        QTest::newRow("vector load") << "\tld.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd4];" << int(C::GlobalLoad);
        QTest::newRow("generic store") << "\t@%p1 st.f32 \t[%rd2], %f1;" << int(C::GlobalStore);
        QTest::newRow("param") << "\tld.param.u64 \t%rd1, [k_param_0];" << int(C::ConstantLoad);
        QTest::newRow("shared") << "\tst.shared.f32 \t[%r3], %f1;" << int(C::SharedStore);
        QTest::newRow("cp.async") << "\tcp.async.ca.shared.global [%r1], [%rd1], 16;" << int(C::AsyncCopy);
        QTest::newRow("wgmma") << "\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {...};" << int(C::TensorCore);
        QTest::newRow("fma") << "\tfma.rn.f32 \t%f3, %f1, 2.0, %f2;" << int(C::Fp32);
        QTest::newRow("bf16") << "\tfma.rn.bf16x2 \t%r5, %r1, %r2, %r3;" << int(C::Fp16);
        QTest::newRow("integer") << "\tmad.lo.s32 \t%r4, %r1, %r2, %r3;" << int(C::Integer);
        QTest::newRow("approx") << "\tex2.approx.ftz.f32 \t%f2, %f1;" << int(C::SpecialFunction);
        QTest::newRow("cvt") << "\tcvt.rn.f16.f32 \t%rs1, %f1;" << int(C::Conversion);
        QTest::newRow("branch") << "\t@%p1 bra \t$L__BB0_2;" << int(C::Control);
        QTest::newRow("mov") << "\tmov.u32 \t%r1, %tid.x;" << int(C::Other);
        QTest::newRow("label") << "$L__BB0_2:" << -1;
        QTest::newRow("directive") << "\t.reg .f32 \t%f<5>;" << -1;
        QTest::newRow("loc") << "\t.loc\t1 7 5" << -1;
        QTest::newRow("brace") << "{" << -1;
    }
    void ptxLines()
    {
        QFETCH(QString, line);
        QFETCH(int, expected);
        const auto c = lines::classifyPtx(line.toStdString());
        QCOMPARE(c ? int(*c) : -1, expected);
    }

    // The H200's SASS of the bank-conflict kernel: 32 unrolled LDG feed 32 STS; NOP padding is no code.
    void storedSassListingCountedByClass()
    {
        const auto mix = sassFixture("bank_conflict.nvdisasm.txt");
        QCOMPARE(mix.source, std::string("SASS"));
        QCOMPARE(mix.count(C::GlobalLoad), std::int64_t(32));
        QCOMPARE(mix.count(C::SharedStore), std::int64_t(32));
        QCOMPARE(mix.count(C::SharedLoad), std::int64_t(1));
        QCOMPARE(mix.count(C::GlobalStore), std::int64_t(1));
        QCOMPARE(mix.count(C::ConstantLoad), std::int64_t(4)); // LDC + 3 ULDC
        QCOMPARE(mix.count(C::Control), std::int64_t(4)); // BAR, 2 BRA, EXIT
        QCOMPARE(mix.count(C::Fp32), std::int64_t(1));
        QCOMPARE(mix.count(C::Integer), std::int64_t(15));
        QCOMPARE(mix.count(C::Other), std::int64_t(5));
        QCOMPARE(mix.total, std::int64_t(95)); // 104 instructions, 9 of them NOP
        // cuobjdump's layout of the same cubin counts the same.
        const auto cuobjdump = sassFixture("bank_conflict.cuobjdump.txt");
        QCOMPARE(cuobjdump.counts, mix.counts);
    }

    void realPtxCountedByClass()
    {
        const auto staged = lines::ptxInstructionMix(ptxOf(kStaged));
        QCOMPARE(staged.source, std::string("PTX"));
        QCOMPARE(staged.count(C::SharedStore), std::int64_t(1));
        QCOMPARE(staged.count(C::SharedLoad), std::int64_t(1));
        QCOMPARE(staged.count(C::GlobalLoad), std::int64_t(1)); // the second read of x[i] is the same load
        QCOMPARE(staged.count(C::GlobalStore), std::int64_t(1));
        QCOMPARE(staged.count(C::ConstantLoad), std::int64_t(2)); // the two pointer parameters
        QVERIFY(staged.count(C::Fp32) >= 1); // the fma
        QVERIFY(staged.count(C::Control) >= 2); // bar.sync, ret
        QCOMPARE(staged.count(C::TensorCore), std::int64_t(0));
        const auto wmma = lines::ptxInstructionMix(ptxOf(kWmma));
        QVERIFY2(wmma.count(C::TensorCore) >= 1, lines::mixChangesText(staged, wmma).c_str());
        QCOMPARE(wmma.count(C::SharedLoad), std::int64_t(0));
        qInfo("%s", lines::mixChangesText(staged, wmma).c_str());
    }

    // Two iterations with SASS: the diff is on instructions without offsets, the mix change per class.
    void twoSassListingsCompared()
    {
        store::CodeListings before, after;
        before.sass = lines::codeSections(test::sourceText("tests/fixtures/lines/bank_conflict.nvdisasm.txt"));
        after.sass = lines::codeSections(test::sourceText("tests/fixtures/lines/pointer_chase.nvdisasm.txt"));
        before.ptx = test::sourceText("tests/fixtures/lines/bank_conflict.ptx");
        after.ptx = test::sourceText("tests/fixtures/lines/pointer_chase.ptx");
        const auto c = report::compareCode(before, after, "iteration 1", "iteration 2");
        QCOMPARE(c.kind, std::string("SASS"));
        QVERIFY(c.note.empty());
        QVERIFY(!c.diff.same());
        QVERIFY(c.beforeText.find("/*") == std::string::npos); // no offsets or encodings
        QVERIFY(c.beforeText.find("NOP") == std::string::npos);
        QVERIFY(c.beforeText.starts_with("rows:\n    "));
        const auto changes = lines::mixChanges(c.beforeMix, c.afterMix);
        const auto loads = std::find_if(changes.begin(), changes.end(),
            [](const lines::MixChange& m) { return m.instructionClass == C::GlobalLoad; });
        QVERIFY(loads != changes.end());
        QCOMPARE(loads->before, std::int64_t(32));
        QCOMPARE(loads->after, std::int64_t(16));
        QCOMPARE(loads->delta(), std::int64_t(-16));
        const std::string table = lines::mixChangesText(c.beforeMix, c.afterMix);
        QVERIFY2(table.find("global loads                           32       16      -16") != std::string::npos,
            table.c_str());
    }

    // One side without SASS: both PTX, and the note says which side lacked SASS and why.
    void ptxWhenOneSideHasNoSass()
    {
        store::CodeListings before, after;
        before.sass = test::sourceText("tests/fixtures/lines/bank_conflict.nvdisasm.txt");
        before.ptx = ptxOf(kStaged);
        after.ptx = ptxOf(kWmma);
        after.sassNote = "nvdisasm not found";
        const auto c = report::compareCode(before, after, "iteration 1", "iteration 2");
        QCOMPARE(c.kind, std::string("PTX"));
        QCOMPARE(c.note, std::string("PTX compared: iteration 2 has no SASS (nvdisasm not found)"));
        QVERIFY(c.beforeText.find(".loc") == std::string::npos);
        QVERIFY(c.afterMix.count(C::TensorCore) >= 1);
        QCOMPARE(c.beforeMix.count(C::TensorCore), std::int64_t(0));
        // The same reason on both sides is said once.
        store::CodeListings ptxOnly = after;
        ptxOnly.ptx = before.ptx;
        const auto both = report::compareCode(ptxOnly, after, "iteration 1", "iteration 2");
        QCOMPARE(
            both.note, std::string("PTX compared: neither iteration 1 nor iteration 2 has SASS (nvdisasm not found)"));
        const auto none = report::compareCode(before, {}, "iteration 1", "iteration 3");
        QVERIFY(!none.comparable());
        QVERIFY2(none.note.starts_with("nothing to compare: iteration 3: no PTX or SASS stored"), none.note.c_str());
    }
};

QTEST_GUILESS_MAIN(TestInstructionMix)
#include "test_instruction_mix.moc"
