// The line profiler's core on recorded and real inputs: the runner's pc_sampling value decoded
// (and refused when malformed), summed per source line, shown as `show --lines` prints it; SASS
// listings in both tools' layouts linked to lines and samples; the PTX fallback on real NVRTC
// output of the planted GPU kernels (tests/gpu/lines).
#include "core/compile/compiler.h"
#include "core/lines/line_heat.h"
#include "core/lines/pc_sampling.h"
#include "core/lines/ptx_listing.h"
#include "core/lines/sass_listing.h"
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/protocol/pc_sampling_json.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace kl;

namespace {

std::filesystem::path source(const std::string& relative) { return std::filesystem::path(KL_SOURCE_DIR) / relative; }

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The runner's whole reply for a planted problem, recorded on the H200 (tests/fixtures/lines/README.md).
nlohmann::json fixture(const std::string& problem = "pointer_chase")
{
    return nlohmann::json::parse(readText(source("tests/fixtures/lines/" + problem + "-lines-h200.json")));
}

lines::PcSampling sampling(const std::string& problem = "pointer_chase")
{
    return *protocol::pcSamplingFromJson(fixture(problem)["pc_sampling"]);
}

} // namespace

class TestLines : public QObject {
    Q_OBJECT

private slots:
    void decodesTheRunnersValue()
    {
        const lines::PcSampling s = sampling();
        QCOMPARE(s.status, lines::SamplingStatus::Ok);
        QCOMPARE(s.caseLabel, std::string("64Mx256k"));
        QCOMPARE(s.periodLog2, 12);
        QCOMPARE(s.runs, 1);
        QCOMPARE(s.totalSamples, std::int64_t(18032));
        QCOMPARE(s.pcs.size(), std::size_t(115));
        QCOMPARE(s.pcs[23].pcOffset, std::uint64_t(0x340)); // the IMAD that waits on the dependent LDG
        QCOMPARE(s.pcs[23].line, 11);
        // The not-issued subset (long_scoreboard_not_issued 1356) is not counted again.
        QCOMPARE(s.pcs[23].samples(), std::int64_t(1374));
        QCOMPARE(s.sampledInCandidate(), std::int64_t(18032));
        QCOMPARE(*protocol::pcSamplingFromJson(protocol::pcSamplingJson(s)), s);
        QVERIFY(!protocol::pcSamplingFromJson(nlohmann::json(nullptr)));
    }

    void cuptiNamesAreShortened()
    {
        QCOMPARE(lines::stallName("smsp__pcsamp_warps_issue_stalled_long_scoreboard"), std::string("long_scoreboard"));
        QCOMPARE(lines::stallName("smsp__pcsamp_warps_issue_stalled_mio_throttle_not_issued"),
            std::string("mio_throttle_not_issued"));
        QCOMPARE(lines::stallName("wait"), std::string("wait"));
        nlohmann::json v = fixture()["pc_sampling"];
        v["pcs"][0]["stalls"] = { { "smsp__pcsamp_warps_issue_stalled_barrier", 5 } };
        QCOMPARE(protocol::pcSamplingFromJson(v)->pcs[0].stalls.at("barrier"), std::int64_t(5));
    }

    void refusesMalformedValues_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("where");
        QTest::newRow("not an object") << R"({"op":"replace","path":"","value":[1]})"
                                       << "pc_sampling";
        QTest::newRow("unknown status") << R"({"op":"replace","path":"/status","value":"fine"})"
                                        << "pc_sampling.status";
        QTest::newRow("negative count") << R"({"op":"replace","path":"/total_samples","value":-1})"
                                        << "pc_sampling.total_samples";
        QTest::newRow("pcs not a list") << R"({"op":"replace","path":"/pcs","value":{}})"
                                        << "pc_sampling.pcs";
        QTest::newRow("stall count a string") << R"({"op":"replace","path":"/pcs/3/stalls/wait","value":"200"})"
                                              << "pc_sampling.pcs[3].stalls.wait";
        QTest::newRow("fractional line") << R"({"op":"replace","path":"/pcs/3/line","value":1.5})"
                                         << "pc_sampling.pcs[3].line";
        QTest::newRow("negative ms") << R"({"op":"replace","path":"/ms","value":-2})"
                                     << "pc_sampling.ms";
    }
    void refusesMalformedValues()
    {
        QFETCH(QString, patch);
        QFETCH(QString, where);
        const nlohmann::json value
            = fixture()["pc_sampling"].patch(nlohmann::json::array({ nlohmann::json::parse(patch.toStdString()) }));
        try {
            protocol::pcSamplingFromJson(value);
            QFAIL("accepted");
        } catch (const Error& error) {
            QCOMPARE(QString::fromStdString(error.category()), QStringLiteral("lines.bad-value"));
            QCOMPARE(QString::fromStdString(error.where()), where);
        }
    }

    void sumsSamplesPerLine()
    {
        const lines::LineHeat heat = lines::lineHeat(sampling());
        QCOMPARE(heat.samples, std::int64_t(18032));
        QCOMPARE(heat.unmappedSamples, std::int64_t(0));
        QCOMPARE(heat.lines.size(), std::size_t(5));
        const lines::HotLine& hot = heat.lines.front();
        QCOMPARE(hot.line, 11);
        QCOMPARE(hot.samples, std::int64_t(18009));
        QVERIFY(qAbs(hot.share - 18009.0 / 18032.0) < 1e-9);
        QCOMPARE(hot.dominantStall(), std::string("long_scoreboard"));
        QVERIFY(qAbs(hot.dominantShare() - 17868.0 / 18009.0) < 1e-9);
        // The unrolled chase: 107 sampled PCs on the one source line.
        QCOMPARE(hot.pcOffsets.size(), std::size_t(107));
        QVERIFY(std::ranges::find(hot.pcOffsets, std::uint64_t(0x340)) != hot.pcOffsets.end());
        for (const lines::StallCount& s : hot.stalls)
            QVERIFY(!lines::isNotIssuedSubset(s.stall));
        QCOMPARE(heat.lines[1].line, 13); // 7 samples, before line 12's 6
        QVERIFY(heat.line(12, "tests/gpu/lines/pointer_chase/baseline.cu"));
        QVERIFY(!heat.line(10, "other.cu"));
        QVERIFY(lines::lineHeat(sampling(), "other.cu").lines.empty());
    }

    void sumsTheBankConflictSamples()
    {
        const lines::LineHeat heat = lines::lineHeat(sampling("bank_conflict"));
        QCOMPARE(heat.samples, std::int64_t(33206));
        QCOMPARE(heat.unmappedSamples, std::int64_t(0));
        QCOMPARE(heat.lines.size(), std::size_t(9));
        const lines::HotLine& hot = heat.lines.front();
        QCOMPARE(hot.line, 19); // the conflicting shared read
        QCOMPARE(hot.samples, std::int64_t(32333));
        QVERIFY(qAbs(hot.share - 32333.0 / 33206.0) < 1e-9);
        QCOMPARE(hot.dominantStall(), std::string("short_scoreboard"));
        QVERIFY(qAbs(hot.dominantShare() - 31674.0 / 32333.0) < 1e-9);
        QCOMPARE(hot.pcOffsets, (std::vector<std::uint64_t> { 1296, 1328, 1344, 1360 }));
        QCOMPARE(heat.lines[1].line, 12); // 372 samples, long_scoreboard on the global load
        QCOMPARE(heat.lines[1].dominantStall(), std::string("long_scoreboard"));
    }

    void reportsTheHottestLinesWithTheirSource()
    {
        const std::string code = readText(source("tests/gpu/lines/pointer_chase/baseline.cu"));
        const std::string report = lines::hotLinesReport(sampling(), code, 2);
        // The totals, then what the phase cost (the runner's 976.9 ms) and what CUPTI counted.
        QVERIFY2(report.starts_with("18032 samples in the candidate at 64Mx256k, one per 2^12 cycles, 0 dropped\n"
                                    "sampling phase: 976.9 ms, 1 run; CUPTI counted 18032 samples (0 in other "
                                    "kernels, 0 dropped)\n"),
            report.c_str());
        QVERIFY2(report.find("     11   99.9%  long_scoreboard 99%, wait 1%, selected 0%\n"
                             "         for (int k = 0; k < 64; ++k) j = (unsigned)next[j] % (unsigned)n; // @hot\n")
                != std::string::npos,
            report.c_str());
        QVERIFY(report.find("     13 ") != std::string::npos);
        QVERIFY(report.find("     12 ") == std::string::npos); // only two lines asked for
        const std::string text = lines::hotLineText(lines::lineHeat(sampling()).lines.front(), code);
        QVERIFY2(text.starts_with("line 11: 100% of samples, long_scoreboard 99% (the warp waits for a global"),
            text.c_str());

        lines::PcSampling refused;
        refused.status = lines::SamplingStatus::Unavailable;
        refused.reason = "insufficient-privileges";
        refused.detail = "cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
        QCOMPARE(lines::hotLinesReport(refused, code, 3),
            std::string("no line samples: PC sampling unavailable (insufficient-privileges): "
                        "cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n"));
    }

    void readsNvdisasmWithLineMarkers()
    {
        const lines::SassListing listing
            = lines::parseSass(readText(source("tests/fixtures/lines/pointer_chase.nvdisasm.txt")));
        // The data sections' `/*0340*/ .byte` rows are not instructions.
        QCOMPARE(listing.functions.size(), std::size_t(1));
        QVERIFY(listing.hasLineInfo());
        const lines::SassFunction* chase = listing.function("chase");
        QVERIFY(chase);
        QCOMPARE(chase->instructions.size(), std::size_t(208));
        const lines::SassInstruction& load = chase->instructions[31];
        QCOMPARE(load.offset, std::uint64_t(0x1f0));
        QCOMPARE(load.text, std::string("LDG.E.CONSTANT R8, desc[UR4][R8.64]"));
        QCOMPARE(load.line, 11);
        QCOMPARE(load.file, std::string("/work/main/baseline.cu"));
        const auto sampled = lines::sampledInstructions(*chase, sampling());
        // The hottest PC is the IMAD that consumes the third load's value.
        QCOMPARE(sampled[52].instruction.offset, std::uint64_t(0x340));
        QCOMPARE(sampled[52].instruction.text, std::string("IMAD.HI.U32 R7, R5, R8, RZ"));
        QCOMPARE(sampled[52].samples, std::int64_t(1374));
        QCOMPARE(sampled[52].dominantStall, std::string("long_scoreboard"));
        // Every instruction nvdisasm puts on line 11, sampled or not (107 of them were).
        QCOMPARE(lines::offsetsForLine(sampled, 11).size(), std::size_t(184));
    }

    void readsCuobjdumpAndTakesLinesFromTheSamples()
    {
        const lines::SassListing listing
            = lines::parseSass(readText(source("tests/fixtures/lines/pointer_chase.cuobjdump.txt")));
        QCOMPARE(listing.functions.size(), std::size_t(1));
        QVERIFY(!listing.hasLineInfo());
        const lines::SassFunction& chase = listing.functions.front();
        QCOMPARE(chase.instructions.size(),
            std::size_t(208)); // the encoding halves are not instructions; the NOP padding is
        QCOMPARE(chase.instructions[31].text, std::string("LDG.E.CONSTANT R8, desc[UR4][R8.64]"));
        const auto sampled = lines::sampledInstructions(chase, sampling());
        QCOMPARE(sampled[52].instruction.line, 11); // taken from the sample at 0x340
        QCOMPARE(sampled[52].samples, std::int64_t(1374));
        QCOMPARE(sampled[7].instruction.offset, std::uint64_t(0x70));
        QCOMPARE(sampled[7].instruction.line, 0); // @P0 EXIT was not sampled: no line known
        QVERIFY(lines::parseSass("not a listing\n/*00d0*/ LDG ;\n").functions.empty());
    }

    void ptxFallbackLinksThePlantedLines_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("instruction");
        QTest::newRow("dependent load") << "tests/gpu/lines/pointer_chase/baseline.cu" << 11 << "ld.global";
        QTest::newRow("conflicting shared read")
            << "tests/gpu/lines/bank_conflict/baseline.cu" << 19 << "ld.volatile.shared";
    }
    void ptxFallbackLinksThePlantedLines()
    {
        QFETCH(QString, file);
        QFETCH(int, line);
        QFETCH(QString, instruction);
        const Candidate candidate = loadCandidate(source(file.toStdString()).string());
        CompileOptions options;
        options.lineInfo = true;
        const CompileResult compiled = compileCandidate(candidate, options);
        QVERIFY2(compiled.ok, compiled.log.c_str());
        const lines::PtxListing ptx = lines::parsePtx(compiled.ptx);
        const std::vector<int> generated = ptx.ptxLinesFor(line, candidate.fileName);
        QVERIFY(!generated.empty());
        bool found = false;
        for (const int number : generated) {
            QCOMPARE(ptx.sourceLineOf(number), line);
            found = found || ptx.lines[number - 1].text.find(instruction.toStdString()) != std::string::npos;
        }
        QVERIFY2(found, qPrintable(instruction));
        // Directives never carry a line; without -lineinfo nothing does.
        for (const lines::PtxLine& l : ptx.lines)
            if (l.text.find(".loc") != std::string::npos)
                QCOMPARE(l.sourceLine, 0);
        options.lineInfo = false;
        const lines::PtxListing bare = lines::parsePtx(compileCandidate(candidate, options).ptx);
        QVERIFY(bare.ptxLinesFor(line).empty());
    }

    // Real NVRTC: wmma::mma_sync is inlined from CUDA's mma.hpp; its mma.sync instructions belong to
    // the candidate's line that called it (the .loc's inlined_at), not to a line of the header.
    void inlinedHeaderCodeLinksToItsCallSite()
    {
        const std::string text = R"(// @kl launch tile grid=(1) block=(32) args=(a, b, c)
#include <mma.h>
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
        const Candidate candidate = parseCandidate(text, "tile.cu");
        const CompileResult compiled = compileCandidate(candidate, CompileOptions {});
        QVERIFY2(compiled.ok, compiled.log.c_str());
        QVERIFY(compiled.ptx.find("inlined_at") != std::string::npos);
        const lines::PtxListing ptx = lines::parsePtx(compiled.ptx);
        int mma = 0;
        for (const int number : ptx.ptxLinesFor(12, "tile.cu"))
            mma += ptx.lines[number - 1].text.find("mma.sync") != std::string::npos ? 1 : 0;
        QVERIFY(mma > 0);
        for (const lines::PtxLine& l : ptx.lines)
            if (l.text.find("mma.sync") != std::string::npos)
                QCOMPARE(l.sourceLine, 12);
    }
};

QTEST_GUILESS_MAIN(TestLines)
#include "test_lines.moc"
