// Every message of runner protocol v1 survives a trip through its JSON line, and every kind of
// malformed line is refused with kl::Error("protocol.bad-message") naming the field at fault.
#include "core/model/error.h"
#include "core/protocol/messages.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace kl;
using namespace kl::protocol;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

DeviceDescription h200()
{
    DeviceDescription d;
    d.index = 0;
    d.name = "NVIDIA H200";
    d.uuid = "GPU-1234";
    d.computeCapability = "9.0";
    d.smCount = 132;
    d.l2Bytes = 62914560;
    d.sharedPerSm = 233472;
    d.sharedPerBlock = 49152;
    d.sharedPerBlockOptin = 232448;
    d.registersPerSm = 65536;
    d.maxThreadsPerSm = 2048;
    d.maxBlocksPerSm = 32;
    d.warpSize = 32;
    d.memoryBytes = 150000000000;
    d.memoryBusBits = 6144;
    d.smClockMhz = 1980;
    d.memoryClockMhz = 3201;
    d.driverVersion = "13.0";
    d.runtimeToolkit = "13.0";
    d.copyBandwidthGbps = 4250.5;
    d.copyBandwidthBytes = 2147483648;
    return d;
}

EvaluateRequest fullRequest()
{
    EvaluateRequest r;
    r.id = "8";
    r.options.seed = 18446744073709551615ull; // largest seed: unsigned 64 bits must survive
    r.options.trials = 3;
    r.options.profile = MetricSet::Stalls;
    r.options.pcSampling = true;
    r.options.time = false;
    r.options.flushBytes = 1 << 20;
    r.modules.reference.cubin = std::string("\x7f"
                                            "ELF\0\1\2\xff",
        8);
    r.modules.candidate.cubin = "candidate cubin";
    r.modules.baseline = Module { "baseline cubin" };
    r.tolerances[DType::F16] = Tolerance { 0.01, 0.02 };
    r.tolerances[DType::BF16] = Tolerance { 1e-3, 2e-2 };

    Case c;
    c.label = "8192x4096";
    c.kind = CaseKind::Main;
    c.timed = true;
    c.bytes = 134234112;
    c.flops = 671088640.5;
    Buffer x { "x", PlannedBuffer::Role::Input, DType::F16, 8192, 4096, 4104,
        Distribution { Distribution::Kind::Normal, 0.5, 2.0 } };
    Buffer y { "y", PlannedBuffer::Role::Output, DType::F16, 8192, 4096, 4104, std::nullopt };
    c.buffers = { x, y };
    Launch ref { "layernorm_gelu_reference", { 64, 1, 1 }, { 128, 1, 1 }, 0, {} };
    ref.args
        = { BufferArg { "x" }, BufferArg { "y" }, makeScalarArg(DType::I32, 8192), makeScalarArg(DType::F32, 1e-5) };
    c.programs.reference.launches = { ref };
    Launch cand { "_Z4candPK6__half", { 8192, 2, 3 }, { 256, 1, 1 }, 4096, {} };
    cand.args = { BufferArg { "x" }, BufferArg { "stats" }, makeScalarArg(DType::I64, 1ll << 40),
        makeScalarArg(DType::U8, 255), makeScalarArg(DType::I8, -128), makeScalarArg(DType::F64, -2.5),
        makeScalarArg(DType::F16, 0.5), makeScalarArg(DType::BF16, 3.0) };
    c.programs.candidate.scratch = { Scratch { "stats", DType::F32, 16384, true } };
    c.programs.candidate.launches = { cand };
    c.programs.baseline = c.programs.reference;
    r.cases.push_back(c);

    Case fuzz = c;
    fuzz.label = "M=7,N=1000";
    fuzz.kind = CaseKind::Fuzz;
    fuzz.timed = false;
    fuzz.programs.baseline.reset();
    r.cases.push_back(fuzz);
    return r;
}

EvaluateResult fullResult()
{
    EvaluateResult r;
    r.header = ResultHeader { "8", Status::Failed, Category::WrongResult, "y differs at [3, 517]" };
    r.device = h200();
    Verification v;
    v.passed = false;
    CaseVerification cv;
    cv.label = "7x1000";
    cv.kind = CaseKind::Fuzz;
    cv.trial = 1;
    cv.passed = false;
    cv.category = Category::WrongResult;
    cv.elements = 7000;
    cv.mismatches = 12;
    cv.unwritten = 1;
    cv.nan = 2;
    cv.maxAbsError = 0.5;
    cv.maxRelError = std::numeric_limits<double>::infinity();
    cv.worstIndex = { 3, 517 };
    cv.worstOutput = "y";
    cv.window = ErrorWindow { { 3, 513 }, { 0.1, 0.2, -std::numeric_limits<double>::infinity() },
        { 0.1, std::numeric_limits<double>::quiet_NaN(), 0.7 } };
    v.cases.push_back(cv);
    CaseVerification ok;
    ok.label = "8192x4096";
    ok.passed = true;
    ok.elements = 8192 * 4096;
    v.cases.push_back(ok);
    r.verification = v;

    Timing t;
    t.smClockMhz = 1980;
    CaseTiming ct;
    ct.label = "8192x4096";
    ct.bytes = 134234112;
    ct.flops = 671088640;
    ct.candidate = TimingSummary { 48.7, 48.5, 49.0, 48.3, 48.8, 0.01, 400, std::nullopt, { 48.7, 48.6, 49.1 } };
    ct.baseline = TimingSummary { 135.0, 134.0, 136.0, 133.0, 135.1, 0.02, 200, 9.5, {} };
    ct.copy = TimingSummary { 35.8, 35.7, 35.9, 35.6, 35.8, 0.003, 300, std::nullopt, {} };
    ct.gbps = 2756.0;
    ct.tflops = 13.8;
    ct.pctOfCopy = 73.5;
    ct.speedupVsBaseline = 2.77;
    t.cases.push_back(ct);
    r.timing = t;

    Profile p;
    p.status = ProfileStatus::Unavailable;
    p.reason = "insufficient-privileges";
    p.metricSet = MetricSet::Default;
    p.passes = 2;
    p.kernels.push_back(KernelProfile {
        "layernorm_gelu", "8192x4096", { { "gpu__time_duration.sum", 47900.0 }, { "dram__bytes_read.sum", 6.7e7 } } });
    r.profile = p;
    lines::PcSampling sampling;
    sampling.status = lines::SamplingStatus::Ok;
    sampling.caseLabel = "8192x4096";
    sampling.totalSamples = 180;
    sampling.pcs.push_back({ "layernorm_gelu", 272, "layernorm_gelu.cu", 12, { { "long_scoreboard", 180 } } });
    r.pcSampling = sampling;
    r.phasesMs = { { "load", 3.1 }, { "verify", 41.0 }, { "time", 220.0 }, { "profile", 130.0 } };
    return r;
}

// A message equals its round trip when both serialise to the same JSON.
template <class M> void checkRoundTrip(const M& message)
{
    const auto line = toLine(message);
    QVERIFY(line.back() == '\n');
    QVERIFY(line.find('\n') == line.size() - 1); // one line, however much it holds
    const auto back = parseMessage<M>(line);
    QCOMPARE(q(nlohmann::json(back).dump()), q(nlohmann::json(message).dump()));
}

} // namespace

class TestProtocolMessages : public QObject {
    Q_OBJECT
private slots:
    void categoriesMatchTheDoc()
    {
        // Every category of the doc's table, by name, with its status.
        const std::vector<std::pair<std::string, Status>> table {
            { "passed", Status::Ok },
            { "missing-kernel", Status::Failed },
            { "launch-error", Status::Failed },
            { "too-many-resources", Status::Failed },
            { "illegal-address", Status::Failed },
            { "trap", Status::Failed },
            { "timeout", Status::Failed },
            { "out-of-bounds-write", Status::Failed },
            { "unwritten-output", Status::Failed },
            { "nan-output", Status::Failed },
            { "input-modified", Status::Failed },
            { "stale-output", Status::Failed },
            { "wrong-result", Status::Failed },
            { "below-physical-floor", Status::Failed },
            { "crash", Status::Failed },
            { "runner-lost", Status::Error },
            { "no-device", Status::Error },
            { "bad-request", Status::Error },
            { "out-of-memory", Status::Error },
            { "cancelled", Status::Error },
            { "bad-message", Status::Error },
        };
        for (const auto& [name, status] : table) {
            const auto c = parseCategory(name);
            QVERIFY2(c.has_value(), name.c_str());
            QCOMPARE(std::string(categoryName(*c)), name);
            QVERIFY(statusOf(*c) == status);
        }
        QVERIFY(!parseCategory("Passed").has_value());
        QVERIFY(!parseCategory("").has_value());
        for (const auto* s : { "ok", "failed", "error" })
            QCOMPARE(std::string(statusName(*parseStatus(s))), std::string(s));
        QVERIFY(!parseStatus("OK"));
    }

    void helloRoundTrip()
    {
        Hello h;
        h.runner = "0.1.0";
        h.pid = 4321;
        h.deviceOk = false;
        h.detail = "libcuda.so.1: cannot open shared object file";
        h.deviceIndex = 3;
        checkRoundTrip(h);
        const auto j = nlohmann::json::parse(toLine(h));
        QCOMPARE(j.at("type").get<std::string>(), std::string("hello"));
        QCOMPARE(j.at("device_status").get<std::string>(), std::string("no-device"));
        QCOMPARE(j.at("v").get<int>(), 1);
    }

    void helloFromTheDoc()
    {
        const auto h = parseMessage<Hello>(
            R"({"v":1,"type":"hello","protocol":1,"runner":"0.1.0","pid":1234,"device_status":"ok","device_index":0})");
        QVERIFY(h.deviceOk);
        QCOMPARE(h.pid, std::int64_t(1234));
        QCOMPARE(h.runner, std::string("0.1.0"));
    }

    void progressRoundTrip()
    {
        checkRoundTrip(Progress { "8", "verify", 3, 16 });
        const auto p
            = parseMessage<Progress>(R"({"v":1,"id":"8","type":"progress","phase":"verify","done":3,"total":16})");
        QCOMPARE(p.done, std::int64_t(3));
        QCOMPARE(p.total, std::int64_t(16));
    }

    void describeAndShutdownRoundTrip()
    {
        checkRoundTrip(DescribeRequest { "7" });
        checkRoundTrip(ShutdownRequest { "9" });
        checkRoundTrip(ShutdownResult { ResultHeader { "9", Status::Ok, std::nullopt, {} } });
        DescribeResult ok { ResultHeader { "7", Status::Ok, std::nullopt, {} }, h200() };
        checkRoundTrip(ok);
        DescribeResult none { ResultHeader { "7", Status::Error, Category::NoDevice, "no driver" }, std::nullopt };
        checkRoundTrip(none);
        const auto back = parseMessage<DescribeResult>(toLine(ok));
        QCOMPARE(back.device->copyBandwidthBytes, std::int64_t(2147483648));
        QCOMPARE(back.device->copyBandwidthGbps, 4250.5);
        QCOMPARE(back.device->name, std::string("NVIDIA H200"));
    }

    void describeResultFromTheDoc()
    {
        const auto r = parseMessage<DescribeResult>(R"({"v":1,"id":"7","type":"result","status":"ok","device":{
  "index":0,"name":"NVIDIA H200","uuid":"GPU-…","compute_capability":"9.0","sm_count":132,
  "l2_bytes":62914560,"shared_per_sm":233472,"shared_per_block":49152,"shared_per_block_optin":232448,
  "registers_per_sm":65536,"max_threads_per_sm":2048,"max_blocks_per_sm":32,"warp_size":32,
  "memory_bytes":150000000000,"memory_bus_bits":6144,"sm_clock_mhz":1980,"memory_clock_mhz":3201,
  "driver_version":"13.0","runtime_toolkit":"13.0",
  "copy_bandwidth_gbps":4250.0,"copy_bandwidth_bytes":2147483648}})");
        QVERIFY(r.header.status == Status::Ok);
        QCOMPARE(r.device->smCount, 132);
        QCOMPARE(r.device->l2Bytes, std::int64_t(62914560));
        QCOMPARE(r.device->uuid, std::string("GPU-…"));
    }

    void evaluateRequestRoundTrip()
    {
        const auto request = fullRequest();
        checkRoundTrip(request);
        const auto back = parseMessage<EvaluateRequest>(toLine(request));
        QCOMPARE(back.options.seed, std::uint64_t(18446744073709551615ull));
        QVERIFY(back.options.profile == MetricSet::Stalls);
        QVERIFY(back.modules.reference.cubin == request.modules.reference.cubin); // binary, NUL included
        QCOMPARE(back.modules.reference.cubin.size(), std::size_t(8));
        QCOMPARE(back.tolerances.at(DType::BF16).rtol, 2e-2);
        QCOMPARE(back.cases.size(), std::size_t(2));
        const auto& c = back.cases[0];
        QCOMPARE(c.buffers[0].rowStride, std::int64_t(4104));
        QVERIFY(c.buffers[0].distribution.has_value());
        QVERIFY(!c.buffers[1].distribution.has_value());
        QCOMPARE(c.flops, 671088640.5);
        const auto& args = c.programs.candidate.launches[0].args;
        QCOMPARE(args.size(), std::size_t(8));
        QVERIFY(std::get<BufferArg>(args[1]) == BufferArg { "stats" });
        QVERIFY(std::get<ScalarArg>(args[2]) == makeScalarArg(DType::I64, double(1ll << 40)));
        QVERIFY(std::get<ScalarArg>(args[4]) == makeScalarArg(DType::I8, -128));
        QVERIFY(std::holds_alternative<double>(std::get<ScalarArg>(args[6]).value));
        QVERIFY(c.programs.candidate.scratch[0].zeroed);
        QVERIFY(c.programs.baseline.has_value());
        QVERIFY(!back.cases[1].programs.baseline.has_value());
        QVERIFY(back.cases[1].kind == CaseKind::Fuzz);
        // Integral byte counts go out as JSON integers, as in the doc.
        const auto j = nlohmann::json::parse(toLine(request));
        QVERIFY(j["cases"][0]["bytes"].is_number_integer());
        QVERIFY(j["cases"][0]["programs"]["reference"]["launches"][0]["args"][2]["i32"].is_number_integer());
    }

    void profileThresholdTravels() // --profile-candidates promising: the incumbent's speedup, less the margin
    {
        auto request = fullRequest();
        QVERIFY(!nlohmann::json::parse(toLine(request))["options"].contains("profile_min_speedup")); // unset: as before
        request.options.profileMinSpeedup = 1.37;
        QCOMPARE(parseMessage<EvaluateRequest>(toLine(request)).options.profileMinSpeedup, 1.37);
        auto negative = nlohmann::json::parse(toLine(request));
        negative["options"]["profile_min_speedup"] = -1.0;
        QVERIFY_THROWS_EXCEPTION(std::exception, parseMessage<EvaluateRequest>(negative.dump()));
    }
    void evaluateRequestDefaults()
    {
        // Options may be left out; the doc's defaults apply.
        auto j = nlohmann::json::parse(toLine(fullRequest()));
        j.erase("options");
        j.erase("tolerances");
        const auto r = j.get<EvaluateRequest>();
        QCOMPARE(r.options.trials, 2);
        QCOMPARE(r.options.minReps, 100);
        QVERIFY(r.options.profile == MetricSet::Default);
        QVERIFY(r.options.time);
        QVERIFY(r.tolerances.empty());
    }

    void evaluateResultRoundTrip()
    {
        const auto result = fullResult();
        checkRoundTrip(result);
        const auto back = parseMessage<EvaluateResult>(toLine(result));
        QVERIFY(back.category() == Category::WrongResult);
        QVERIFY(back.header.status == Status::Failed);
        const auto& cv = back.verification->cases[0];
        QCOMPARE(cv.worstIndex, (std::vector<std::int64_t> { 3, 517 }));
        QVERIFY(std::isinf(cv.maxRelError));
        QVERIFY(std::isnan(cv.window->actual[1]));
        QVERIFY(std::isinf(cv.window->expected[2]) && cv.window->expected[2] < 0);
        QCOMPARE(cv.window->actual[2], 0.7);
        QCOMPARE(back.timing->cases[0].candidate.samplesUs.size(), std::size_t(3));
        QVERIFY(!back.timing->cases[0].candidate.graphMedianUs.has_value());
        QCOMPARE(*back.timing->cases[0].baseline->graphMedianUs, 9.5);
        QCOMPARE(*back.timing->cases[0].speedupVsBaseline, 2.77);
        QVERIFY(back.profile->status == ProfileStatus::Unavailable);
        QCOMPARE(back.profile->reason, std::string("insufficient-privileges"));
        QCOMPARE(back.profile->kernels[0].metrics.at("gpu__time_duration.sum"), 47900.0);
        QVERIFY(back.pcSampling && back.pcSampling->totalSamples == 180);
        QCOMPARE(back.pcSampling->pcs.at(0).stalls.at("long_scoreboard"), std::int64_t(180));
        QCOMPARE(back.phasesMs.at("verify"), 41.0);
    }

    // The adaptive timing's fields (H1, issue 14): the protocol chosen in the request, the median's
    // interval, why the runs stopped, the copy's source and the temperature in the reply; absent in
    // an older runner's reply (then empty), refused when malformed.
    void adaptiveTimingFields()
    {
        auto request = fullRequest();
        QVERIFY(request.options.repetitions == EvaluateOptions::Repetitions::Adaptive); // the default
        request.options.repetitions = EvaluateOptions::Repetitions::Fixed;
        request.options.intervalHalfWidth = 0.01;
        request.options.adaptiveMinReps = 30;
        const auto backRequest = parseMessage<EvaluateRequest>(toLine(request));
        QVERIFY(backRequest.options.repetitions == EvaluateOptions::Repetitions::Fixed);
        QCOMPARE(backRequest.options.intervalHalfWidth, 0.01);
        QCOMPARE(backRequest.options.adaptiveMinReps, 30);

        auto result = fullResult();
        auto& c = result.timing->cases[0];
        c.candidate.medianLowUs = 48.6;
        c.candidate.medianHighUs = 48.9;
        c.candidate.stoppedBy = "interval";
        c.copySource = "cached";
        result.timing->temperatureC = 41;
        result.timing->repetitions = "adaptive";
        checkRoundTrip(result);
        const auto back = parseMessage<EvaluateResult>(toLine(result));
        QCOMPARE(*back.timing->cases[0].candidate.medianLowUs, 48.6);
        QCOMPARE(*back.timing->cases[0].candidate.medianHighUs, 48.9);
        QCOMPARE(back.timing->cases[0].candidate.stoppedBy, std::string("interval"));
        QCOMPARE(back.timing->cases[0].copySource, std::string("cached"));
        QCOMPARE(*back.timing->temperatureC, 41.0);
        QCOMPARE(back.timing->repetitions, std::string("adaptive"));

        const auto old = parseMessage<EvaluateResult>(toLine(fullResult())); // no such keys
        QVERIFY(!old.timing->cases[0].candidate.medianLowUs);
        QVERIFY(old.timing->cases[0].candidate.stoppedBy.empty());
        QVERIFY(old.timing->cases[0].copySource.empty());
        QVERIFY(old.timing->repetitions.empty());
        const auto oldJson = nlohmann::json::parse(toLine(fullResult()));
        QVERIFY(!oldJson["timing"]["cases"][0]["candidate"].contains("median_ci_us"));
        QVERIFY(!oldJson["timing"]["cases"][0].contains("copy_source"));
    }

    void evaluateFailureHasNulls()
    {
        const auto f = EvaluateResult::failure("12", Category::Timeout, "ran past 2000 ms");
        QVERIFY(f.header.status == Status::Failed);
        checkRoundTrip(f);
        const auto j = nlohmann::json::parse(toLine(f));
        QVERIFY(j["timing"].is_null());
        QVERIFY(j["pc_sampling"].is_null());
        QCOMPARE(j["category"].get<std::string>(), std::string("timeout"));
        const auto lost = EvaluateResult::failure("13", Category::RunnerLost, "no hello");
        QVERIFY(lost.header.status == Status::Error);
        QVERIFY(EvaluateResult::failure("", Category::Cancelled, "").header.status == Status::Error);
    }

    // Samples that do not have the documented shape cost the samples, not the result: its timing and
    // verdict stand, and what did not decode is said where the loop and the store can tell.
    void malformedSamplesLeaveTheResult()
    {
        auto j = nlohmann::json::parse(toLine(fullResult()));
        j["pc_sampling"]["pcs"] = "many";
        const auto back = parseMessage<EvaluateResult>(j.dump() + "\n");
        QVERIFY(!back.pcSampling);
        QVERIFY2(back.pcSamplingUnreadable.starts_with("pc_sampling.pcs: "), back.pcSamplingUnreadable.c_str());
        QVERIFY(back.timing && back.timing->cases.size() == fullResult().timing->cases.size());
        QVERIFY(back.category() == Category::WrongResult);
        j["pc_sampling"] = nullptr;
        const auto none = parseMessage<EvaluateResult>(j.dump() + "\n");
        QVERIFY(!none.pcSampling && none.pcSamplingUnreadable.empty());
    }

    void parseRequestDispatches()
    {
        QVERIFY(std::holds_alternative<DescribeRequest>(parseRequest(toLine(DescribeRequest { "1" }))));
        QVERIFY(std::holds_alternative<ShutdownRequest>(parseRequest(toLine(ShutdownRequest { "2" }))));
        const auto e = parseRequest(toLine(fullRequest()));
        QVERIFY(std::holds_alternative<EvaluateRequest>(e));
        QCOMPARE(std::get<EvaluateRequest>(e).id, std::string("8"));
        QCOMPARE(*peekId(R"({"v":2,"id":"77","type":"evaluate"})"), std::string("77"));
        QVERIFY(!peekId("garbage").has_value());
        QVERIFY(!peekId(R"({"id":5})").has_value());
    }

    void scalarArgRanges()
    {
        QVERIFY(std::get<std::int64_t>(makeScalarArg(DType::I32, 2147483647).value) == 2147483647);
        for (const auto& [type, value] :
            std::vector<std::pair<DType, double>> { { DType::I32, 2147483648.0 }, { DType::U8, 256 }, { DType::U8, -1 },
                { DType::I8, 128 }, { DType::I32, 1.5 }, { DType::F32, std::numeric_limits<double>::quiet_NaN() } }) {
            try {
                makeScalarArg(type, value);
                QFAIL("accepted a value outside the type");
            } catch (const Error& e) {
                QCOMPARE(e.category(), std::string("protocol.bad-arg"));
            }
        }
    }

    // Lines that must be refused: (name, line, message type, expected `where`, part of the message).
    void malformedLines_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("as");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");

        const auto good = nlohmann::json::parse(toLine(fullRequest()));
        const auto edited = [&](auto edit) {
            auto j = good;
            edit(j);
            return QByteArray::fromStdString(j.dump());
        };
        const auto full = QByteArray::fromStdString(good.dump());

        QTest::newRow("garbage") << QByteArray("hello there") << u"request"_qs << u"line"_qs << u"not JSON"_qs;
        QTest::newRow("truncated line") << full.left(full.size() / 2) << u"request"_qs << u"line"_qs << u"truncated"_qs;
        QTest::newRow("empty line") << QByteArray("\n") << u"request"_qs << u"line"_qs << u"empty"_qs;
        QTest::newRow("binary") << QByteArray("\x01\x02\xff", 3) << u"request"_qs << u"line"_qs << u"not JSON"_qs;
        QTest::newRow("not an object") << QByteArray("[1,2,3]") << u"request"_qs << u"message"_qs << u"object"_qs;
        QTest::newRow("no v") << QByteArray(R"({"id":"1","type":"describe"})") << u"request"_qs << u"v"_qs
                              << u"missing protocol version"_qs;
        QTest::newRow("wrong v") << QByteArray(R"({"v":2,"id":"1","type":"describe"})") << u"request"_qs << u"v"_qs
                                 << u"version 2 is not supported"_qs;
        QTest::newRow("v as string") << QByteArray(R"({"v":"1","id":"1","type":"describe"})") << u"request"_qs
                                     << u"v"_qs << u"integer"_qs;
        QTest::newRow("no type") << QByteArray(R"({"v":1,"id":"1"})") << u"request"_qs << u"type"_qs << u"missing"_qs;
        QTest::newRow("unknown request") << QByteArray(R"({"v":1,"id":"1","type":"reboot"})") << u"request"_qs
                                         << u"type"_qs << u"not a request"_qs;
        QTest::newRow("id not a string") << QByteArray(R"({"v":1,"id":7,"type":"describe"})") << u"request"_qs
                                         << u"id"_qs << u"must be a string, got an integer"_qs;
        QTest::newRow("hello for progress") << QByteArray(R"({"v":1,"type":"hello","protocol":1})") << u"progress"_qs
                                            << u"type"_qs << u"expected a \"progress\" message"_qs;
        QTest::newRow("stub hello") << QByteArray(R"({"v":1,"event":"hello","status":"no-device"})") << u"hello"_qs
                                    << u"type"_qs << u"missing"_qs;
        QTest::newRow("hello newer protocol")
            << QByteArray(R"({"v":1,"type":"hello","protocol":2,"device_status":"ok"})") << u"hello"_qs
            << u"protocol"_qs << u"protocol 2"_qs;
        QTest::newRow("hello bad device status")
            << QByteArray(R"({"v":1,"type":"hello","protocol":1,"device_status":"fine"})") << u"hello"_qs
            << u"device_status"_qs << u"not ok or no-device"_qs;
        QTest::newRow("missing cases") << edited([](auto& j) { j.erase("cases"); }) << u"request"_qs << u"cases"_qs
                                       << u"missing required field"_qs;
        QTest::newRow("empty cases") << edited([](auto& j) { j["cases"] = nlohmann::json::array(); }) << u"request"_qs
                                     << u"cases"_qs << u"must not be empty"_qs;
        QTest::newRow("rows as string") << edited([](auto& j) { j["cases"][0]["buffers"][1]["rows"] = "8192"; })
                                        << u"request"_qs << u"cases[0].buffers[1].rows"_qs
                                        << u"must be an integer, got a string"_qs;
        QTest::newRow("rows fractional") << edited([](auto& j) { j["cases"][1]["buffers"][0]["rows"] = 1.5; })
                                         << u"request"_qs << u"cases[1].buffers[0].rows"_qs << u"1.5"_qs;
        QTest::newRow("stride below length")
            << edited([](auto& j) { j["cases"][0]["buffers"][0]["row_stride"] = 10; }) << u"request"_qs
            << u"cases[0].buffers[0].row_stride"_qs << u"below row_length"_qs;
        QTest::newRow("unknown dtype") << edited([](auto& j) { j["cases"][0]["buffers"][0]["dtype"] = "f8"; })
                                       << u"request"_qs << u"cases[0].buffers[0].dtype"_qs << u"not a dtype"_qs;
        QTest::newRow("unknown kind") << edited([](auto& j) { j["cases"][0]["kind"] = "huge"; }) << u"request"_qs
                                      << u"cases[0].kind"_qs << u"not one of main, fuzz, padded"_qs;
        QTest::newRow("bad base64") << edited([](auto& j) { j["modules"]["candidate"]["cubin_b64"] = "not base64!"; })
                                    << u"request"_qs << u"modules.candidate.cubin_b64"_qs << u"not valid base64"_qs;
        QTest::newRow("no candidate module") << edited([](auto& j) { j["modules"].erase("candidate"); })
                                             << u"request"_qs << u"modules.candidate"_qs << u"missing"_qs;
        QTest::newRow("baseline program without module")
            << edited([](auto& j) { j["modules"].erase("baseline"); }) << u"request"_qs << u"cases[0].programs"_qs
            << u"no baseline module"_qs;
        QTest::newRow("grid of two") << edited([](auto& j) {
            j["cases"][0]["programs"]["candidate"]["launches"][0]["grid"] = { 1, 2 };
        }) << u"request"_qs << u"cases[0].programs.candidate.launches[0].grid"_qs
                                     << u"3 elements"_qs;
        QTest::newRow("zero block") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["block"][0] = 0;
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].block[0]"_qs
                                    << u"at least 1"_qs;
        QTest::newRow("arg with two types") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["args"][2] = { { "i32", 1 }, { "f32", 1.0 } };
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].args[2]"_qs
                                            << u"has both"_qs;
        QTest::newRow("arg with no type") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["args"][2] = { { "int", 1 } };
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].args[2]"_qs
                                          << u"exactly one of"_qs;
        QTest::newRow("i32 out of range") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["args"][2] = { { "i32", 3000000000ll } };
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].args[2].i32"_qs
                                          << u"does not fit i32"_qs;
        QTest::newRow("unknown buffer") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["args"][1] = { { "buffer", "z" } };
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].args[1].buffer"_qs
                                        << u"no tensor or scratch buffer is named \"z\""_qs;
        QTest::newRow("scratch of another program") << edited([](auto& j) {
            j["cases"][0]["programs"]["reference"]["launches"][0]["args"][1] = { { "buffer", "stats" } };
        }) << u"request"_qs << u"cases[0].programs.reference.launches[0].args[1].buffer"_qs
                                                    << u"\"stats\""_qs;
        QTest::newRow("trials zero") << edited([](auto& j) { j["options"]["trials"] = 0; }) << u"request"_qs
                                     << u"options.trials"_qs << u"1..100"_qs;
        QTest::newRow("unknown profile") << edited([](auto& j) { j["options"]["profile"] = "everything"; })
                                         << u"request"_qs << u"options.profile"_qs << u"not one of"_qs;
        QTest::newRow("unknown repetitions") << edited([](auto& j) { j["options"]["repetitions"] = "some"; })
                                             << u"request"_qs << u"options.repetitions"_qs << u"adaptive"_qs;
        QTest::newRow("zero half width") << edited([](auto& j) { j["options"]["interval_half_width"] = 0; })
                                         << u"request"_qs << u"options.interval_half_width"_qs << u"positive"_qs;

        const auto result = nlohmann::json::parse(toLine(fullResult()));
        const auto editedResult = [&](auto edit) {
            auto j = result;
            edit(j);
            return QByteArray::fromStdString(j.dump());
        };
        QTest::newRow("unknown category") << editedResult([](auto& j) { j["category"] = "exploded"; })
                                          << u"evaluate-result"_qs << u"category"_qs << u"not a result category"_qs;
        QTest::newRow("failed without category") << editedResult([](auto& j) { j.erase("category"); })
                                                 << u"evaluate-result"_qs << u"category"_qs << u"status is failed"_qs;
        QTest::newRow("bad status") << editedResult([](auto& j) { j["status"] = "meh"; }) << u"evaluate-result"_qs
                                    << u"status"_qs << u"not ok, failed or error"_qs;
        QTest::newRow("window mismatch") << editedResult([](auto& j) {
            j["verification"]["cases"][0]["window"]["actual"] = { 1.0 };
        }) << u"evaluate-result"_qs << u"verification.cases[0].window.actual"_qs
                                         << u"1 values for 3"_qs;
        QTest::newRow("window word") << editedResult([](auto& j) {
            j["verification"]["cases"][0]["window"]["actual"][0] = "big";
        }) << u"evaluate-result"_qs << u"verification.cases[0].window.actual[0]"_qs
                                     << u"\"big\" is not a number"_qs;
        QTest::newRow("median missing") << editedResult([](auto& j) {
            j["timing"]["cases"][0]["candidate"].erase("median_us");
        }) << u"evaluate-result"_qs << u"timing.cases[0].candidate.median_us"_qs
                                        << u"missing"_qs;
        QTest::newRow("metric as string")
            << editedResult([](auto& j) { j["profile"]["kernels"][0]["metrics"]["gpu__time_duration.sum"] = "fast"; })
            << u"evaluate-result"_qs << u"profile.kernels[0].metrics.gpu__time_duration.sum"_qs
            << u"must be a number"_qs;
        QTest::newRow("device without name") << editedResult([](auto& j) { j["device"].erase("name"); })
                                             << u"evaluate-result"_qs << u"device.name"_qs << u"missing"_qs;
        QTest::newRow("describe ok without device") << QByteArray(R"({"v":1,"id":"7","type":"result","status":"ok"})")
                                                    << u"describe-result"_qs << u"device"_qs << u"missing"_qs;
    }

    void malformedLines()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, as);
        QFETCH(QString, where);
        QFETCH(QString, says);
        const auto text = line.toStdString();
        try {
            if (as == u"request"_qs)
                parseRequest(text);
            else if (as == u"hello"_qs)
                parseMessage<Hello>(text);
            else if (as == u"progress"_qs)
                parseMessage<Progress>(text);
            else if (as == u"describe-result"_qs)
                parseMessage<DescribeResult>(text);
            else
                parseMessage<EvaluateResult>(text);
            QFAIL("accepted a malformed line");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"protocol.bad-message"_qs);
            QCOMPARE(q(e.where()), where);
            QVERIFY2(q(e.message()).contains(says), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestProtocolMessages)
#include "test_messages.moc"
