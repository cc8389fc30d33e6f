// The compile cache with the real NVRTC: a second compile of the same program is a hit with the same
// registers, cubin and diagnostics; the disk level survives a new process (memory cleared); a changed
// tunable, option or local header is a miss; a corrupt or foreign entry is a miss and is replaced;
// compile errors are cached like successes; the folder stays under its cap.
#include "core/compile/compile_cache.h"
#include "core/compile/compiler.h"
#include "core/model/problem.h"
#include "fixtures.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> entries(const fs::path& folder)
{
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(folder))
        if (e.path().extension() == ".klcc")
            found.push_back(e.path());
    return found;
}

kl::CompileOptions spillOptions()
{
    kl::CompileOptions o;
    o.arch = "sm_90";
    o.extraOptions = { "-maxrregcount=32" };
    return o;
}

} // namespace

class CompileCacheTest : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    fs::path m_folder;

    void useFolder(std::uint64_t capBytes = 512ull << 20)
    {
        kl::CompileCache::Settings s;
        s.folder = m_folder;
        s.folderCapBytes = capBytes;
        kl::compileCache().reconfigure(s);
    }

private slots:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_folder = fs::path(m_dir.path().toStdString()) / QTest::currentTestFunction();
        fs::remove_all(m_folder);
        useFolder();
    }

    void secondCompileIsAHitWithTheSameReport()
    {
        const kl::Candidate spill = kl::loadCandidate(kl::test::compileFixturePath(QStringLiteral("kernels/spill.cu")));
        const kl::CompileResult first = kl::compileCandidate(spill, spillOptions());
        QVERIFY2(first.ok, first.summary.c_str());
        QCOMPARE(first.cache, kl::CacheUse::Miss);
        QCOMPARE(entries(m_folder).size(), std::size_t { 1 });

        const kl::CompileResult second = kl::compileCandidate(spill, spillOptions());
        QCOMPARE(second.cache, kl::CacheUse::MemoryHit);
        QVERIFY(second.ok);
        QCOMPARE(second.kernels.size(), first.kernels.size());
        const kl::KernelResources& a = first.kernels.front();
        const kl::KernelResources& b = second.kernels.front();
        QVERIFY(a.registers > 0); // ptxas' report reached the result (the reason for --no-cache)
        QCOMPARE(b.registers, a.registers);
        QVERIFY(a.spillStoreBytes > 0);
        QCOMPARE(b.spillStoreBytes, a.spillStoreBytes);
        QCOMPARE(b.loweredName, a.loweredName);
        QCOMPARE(b.parameters.size(), a.parameters.size());
        QVERIFY(second.cubin == first.cubin);
        QVERIFY(second.ptx == first.ptx);
        QCOMPARE(second.log, first.log);
        QCOMPARE(second.diagnostics.size(), first.diagnostics.size());

        // A new process: only the folder is left.
        kl::compileCache().clearMemory();
        const kl::CompileResult third = kl::compileCandidate(spill, spillOptions());
        QCOMPARE(third.cache, kl::CacheUse::DiskHit);
        QCOMPARE(third.kernels.front().registers, a.registers);
        QVERIFY(third.cubin == first.cubin);
        qInfo("compile: NVRTC %.0f ms, memory hit %.2f ms, disk hit %.2f ms", first.compileMillis, second.compileMillis,
            third.compileMillis);
        QVERIFY(third.compileMillis < first.compileMillis);
    }

    void changedInputsMiss()
    {
        const kl::Problem problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        kl::CompileOptions o;
        o.arch = problem.arch;
        o.includeDir = problem.dir;
        o.tunables = problem.baseline.defaults();
        QCOMPARE(kl::compileCandidate(problem.baseline, o).cache, kl::CacheUse::Miss);
        QCOMPARE(kl::compileCandidate(problem.baseline, o).cache, kl::CacheUse::MemoryHit);

        kl::CompileOptions otherTunables = o;
        otherTunables.tunables = problem.baseline.withOverrides({ { "VEC", 4 } });
        const kl::CompileResult vec4 = kl::compileCandidate(problem.baseline, otherTunables);
        QCOMPARE(vec4.cache, kl::CacheUse::Miss);
        QVERIFY(vec4.ok);

        kl::CompileOptions otherArch = o;
        otherArch.arch = "sm_80";
        QCOMPARE(kl::compileCandidate(problem.baseline, otherArch).cache, kl::CacheUse::Miss);

        kl::CompileOptions fastMath = o;
        fastMath.extraOptions = { "--use_fast_math" };
        QCOMPARE(kl::compileCandidate(problem.baseline, fastMath).cache, kl::CacheUse::Miss);

        kl::Candidate edited = problem.baseline;
        edited.source += "\n// a comment changes the source, so the key\n";
        QCOMPARE(kl::compileCandidate(edited, o).cache, kl::CacheUse::Miss);
    }

    void localHeaderContentIsPartOfTheKey()
    {
        const fs::path problemDir = m_folder / "problem";
        fs::create_directories(problemDir);
        auto writeHeader = [&](const char* text) { std::ofstream(problemDir / "scale.cuh") << text; };
        const kl::Candidate candidate
            = kl::parseCandidate("#include \"scale.cuh\"\n"
                                 "// @kl launch k grid=(1) block=(32) args=(y)\n"
                                 "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = SCALE; }\n",
                "candidate.cu");
        kl::CompileOptions o;
        o.includeDir = problemDir;
        writeHeader("#define SCALE 2.0f\n");
        QCOMPARE(kl::compileCandidate(candidate, o).cache, kl::CacheUse::Miss);
        QCOMPARE(kl::compileCandidate(candidate, o).cache, kl::CacheUse::MemoryHit);
        writeHeader("#define SCALE undefined_name\n");
        const kl::CompileResult broken = kl::compileCandidate(candidate, o);
        QCOMPARE(broken.cache, kl::CacheUse::Miss);
        QVERIFY(!broken.ok);
        QCOMPARE(broken.kind, kl::CompileErrorKind::UndeclaredIdentifier);
    }

    void compileErrorsAreCachedToo()
    {
        const kl::Candidate bad = kl::loadCandidate(kl::test::compileFixturePath(QStringLiteral("errors/syntax.cu")));
        kl::CompileOptions o;
        const kl::CompileResult first = kl::compileCandidate(bad, o);
        QVERIFY(!first.ok);
        kl::compileCache().clearMemory();
        const kl::CompileResult again = kl::compileCandidate(bad, o);
        QCOMPARE(again.cache, kl::CacheUse::DiskHit);
        QCOMPARE(again.kind, first.kind);
        QCOMPARE(again.summary, first.summary);
        QCOMPARE(again.diagnostics.front().line, first.diagnostics.front().line);
    }

    void corruptEntriesAreMissesAndReplaced_data()
    {
        QTest::addColumn<int>("damage");
        QTest::newRow("truncated") << 0;
        QTest::newRow("garbage") << 1;
        QTest::newRow("other key") << 2; // a hash collision: same file name, different program
        QTest::newRow("empty") << 3;
    }
    void corruptEntriesAreMissesAndReplaced()
    {
        QFETCH(int, damage);
        const kl::Candidate spill = kl::loadCandidate(kl::test::compileFixturePath(QStringLiteral("kernels/spill.cu")));
        const kl::CompileResult first = kl::compileCandidate(spill, spillOptions());
        const fs::path entry = entries(m_folder).front();
        std::string text = kl::test::readFile(entry.string());
        if (damage == 0)
            text.resize(text.size() / 2);
        else if (damage == 1)
            text = "KLCC1\nnot a length\n";
        else if (damage == 2)
            text.replace(text.find("nvrtc "), 6, "nvrtX ");
        else
            text.clear();
        std::ofstream(entry, std::ios::binary | std::ios::trunc) << text;
        kl::compileCache().clearMemory();

        const kl::CompileResult again = kl::compileCandidate(spill, spillOptions());
        QCOMPARE(again.cache, kl::CacheUse::Miss);
        QVERIFY(again.ok);
        QCOMPARE(again.kernels.front().registers, first.kernels.front().registers);
        kl::compileCache().clearMemory();
        QCOMPARE(kl::compileCandidate(spill, spillOptions()).cache, kl::CacheUse::DiskHit); // rewritten whole
    }

    void folderStaysUnderItsCap()
    {
        const kl::Problem problem = kl::loadProblem(kl::test::examplePath("layernorm_gelu"));
        kl::CompileOptions o;
        o.arch = problem.arch;
        o.includeDir = problem.dir;
        o.tunables = problem.baseline.defaults();
        kl::compileCandidate(problem.baseline, o);
        const auto one = fs::file_size(entries(m_folder).front());
        useFolder(one * 5 / 2); // room for two entries
        for (std::int64_t threads : { 64, 128, 256, 512 }) {
            o.tunables = problem.baseline.withOverrides({ { "THREADS", threads } });
            QVERIFY(kl::compileCandidate(problem.baseline, o).ok);
        }
        std::uint64_t total = 0;
        for (const auto& e : entries(m_folder))
            total += fs::file_size(e);
        QVERIFY2(total <= one * 5 / 2, std::to_string(total).c_str());
        QVERIFY(!entries(m_folder).empty());
        // The newest survived.
        kl::compileCache().clearMemory();
        QCOMPARE(kl::compileCandidate(problem.baseline, o).cache, kl::CacheUse::DiskHit);
    }

    void offMeansNvrtcEveryTime()
    {
        kl::CompileCache::Settings off;
        off.enabled = false;
        kl::compileCache().reconfigure(off);
        const kl::Candidate spill = kl::loadCandidate(kl::test::compileFixturePath(QStringLiteral("kernels/spill.cu")));
        QCOMPARE(kl::compileCandidate(spill, spillOptions()).cache, kl::CacheUse::Off);
        QCOMPARE(kl::compileCandidate(spill, spillOptions()).cache, kl::CacheUse::Off);
        QVERIFY(!fs::exists(m_folder) || entries(m_folder).empty());
    }

    void environmentChoosesTheFolder()
    {
        qputenv("KERNELLOOP_COMPILE_CACHE", "off");
        QVERIFY(!kl::CompileCache::settingsFromEnvironment().enabled);
        qputenv("KERNELLOOP_COMPILE_CACHE", "/tmp/kl-cc");
        QCOMPARE(kl::CompileCache::settingsFromEnvironment().folder->string(), std::string("/tmp/kl-cc"));
        qunsetenv("KERNELLOOP_COMPILE_CACHE");
        qputenv("XDG_CACHE_HOME", "/x/cache");
        QCOMPARE(
            kl::CompileCache::settingsFromEnvironment().folder->string(), std::string("/x/cache/kernelloop/compile"));
        qunsetenv("XDG_CACHE_HOME");
        qputenv("HOME", "/home/u");
        QCOMPARE(kl::CompileCache::settingsFromEnvironment().folder->string(),
            std::string("/home/u/.cache/kernelloop/compile"));
    }
};

QTEST_GUILESS_MAIN(CompileCacheTest)
#include "test_compile_cache.moc"
