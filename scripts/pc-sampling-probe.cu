// A diagnostic run once on the H200 (2026-12-01): which CUPTI PC-sampling flow yields samples.
// Build: nvcc -O2 -arch=sm_90 scripts/pc-sampling-probe.cu -o probe -lcupti -lcuda; run: ./probe A|B|C|D|E.
// Found: with start/stop control the range lands in the configured buffer at stop, and GetData into that
// same buffer then returns 0 samples (A, B); GetData into a second buffer returns the range (C, D).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_pcsampling.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#define C(x) do { CUptiResult r = (x); if (r != CUPTI_SUCCESS) { const char* s; cuptiGetResultString(r, &s); printf("  %s -> %s\n", #x, s); } } while (0)

__global__ void chase(const unsigned* next, unsigned* out, int steps) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int s = 0; s < steps; ++s) i = next[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}

struct Buf {
    std::vector<CUpti_PCSamplingPCData> pcs;
    std::vector<std::vector<CUpti_PCSamplingStallReason>> st;
    CUpti_PCSamplingData d{};
    Buf(size_t n, size_t reasons) : pcs(n), st(n, std::vector<CUpti_PCSamplingStallReason>(reasons)) {
        d.size = sizeof(CUpti_PCSamplingData); d.collectNumPcs = n; d.pPcData = pcs.data();
        for (size_t i = 0; i < n; ++i) { pcs[i].size = sizeof(CUpti_PCSamplingPCData); pcs[i].stallReason = st[i].data(); }
    }
};

int main(int argc, char** argv) {
    const char mode = argc > 1 ? argv[1][0] : 'A';
    cudaSetDevice(0); cudaFree(0);
    CUcontext ctx; cuCtxGetCurrent(&ctx);
    const unsigned n = 1u << 24;
    std::vector<unsigned> h(n); for (unsigned i = 0; i < n; ++i) h[i] = (unsigned)((i * 2654435761ull + 12345) % n);
    unsigned *next, *out; cudaMalloc(&next, n * 4); cudaMalloc(&out, n * 4); cudaMemcpy(next, h.data(), n * 4, cudaMemcpyHostToDevice);
    CUpti_PCSamplingEnableParams e{CUpti_PCSamplingEnableParamsSize}; e.ctx = ctx; C(cuptiPCSamplingEnable(&e));
    size_t nr = 0; CUpti_PCSamplingGetNumStallReasonsParams g{CUpti_PCSamplingGetNumStallReasonsParamsSize}; g.ctx = ctx; g.numStallReasons = &nr; C(cuptiPCSamplingGetNumStallReasons(&g));
    Buf cfg(2000, nr), sep(2000, nr);
    std::vector<CUpti_PCSamplingConfigurationInfo> info;
    CUpti_PCSamplingConfigurationInfo a{};
    a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    a.attributeData.collectionModeData.collectionMode = mode == 'D' ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS; info.push_back(a);
    a = {}; a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD; a.attributeData.samplingPeriodData.samplingPeriod = 12; info.push_back(a);
    const bool startStop = mode == 'A' || mode == 'B' || mode == 'C';
    a = {}; a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL; a.attributeData.enableStartStopControlData.enableStartStopControl = startStop; info.push_back(a);
    a = {}; a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT; a.attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED; info.push_back(a);
    a = {}; a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER; a.attributeData.samplingDataBufferData.samplingDataBuffer = &cfg.d; info.push_back(a);
    CUpti_PCSamplingConfigurationInfoParams p{CUpti_PCSamplingConfigurationInfoParamsSize}; p.ctx = ctx; p.numAttributes = info.size(); p.pPCSamplingConfigurationInfo = info.data();
    C(cuptiPCSamplingSetConfigurationAttribute(&p));
    uint64_t total = 0; size_t pcs = 0;
    auto get = [&](Buf& b, const char* what) {
        for (int k = 0; k < 50; ++k) {
            CUpti_PCSamplingGetDataParams d{CUpti_PCSamplingGetDataParamsSize}; d.ctx = ctx; d.pcSamplingData = &b.d;
            C(cuptiPCSamplingGetData(&d));
            printf("  %s: totalSamples %llu totalNumPcs %zu remaining %zu dropped %llu nonUsr %llu\n", what, (unsigned long long)b.d.totalSamples, b.d.totalNumPcs, b.d.remainingNumPcs, (unsigned long long)b.d.droppedSamples, (unsigned long long)b.d.nonUsrKernelsTotalSamples);
            total += b.d.totalSamples; pcs += b.d.totalNumPcs;
            if (b.d.remainingNumPcs == 0) break;
        }
    };
    for (int run = 0; run < 3; ++run) {
        if (startStop) { CUpti_PCSamplingStartParams s{CUpti_PCSamplingStartParamsSize}; s.ctx = ctx; C(cuptiPCSamplingStart(&s)); }
        chase<<<n / 256, 256>>>(next, out, 64);
        cudaDeviceSynchronize();
        if (startStop) { CUpti_PCSamplingStopParams s{CUpti_PCSamplingStopParamsSize}; s.ctx = ctx; C(cuptiPCSamplingStop(&s)); }
        if (mode == 'B') std::this_thread::sleep_for(std::chrono::milliseconds(300));
        printf(" run %d: configured buffer after stop: totalSamples %llu totalNumPcs %zu\n", run, (unsigned long long)cfg.d.totalSamples, cfg.d.totalNumPcs);
        if (mode == 'A' || mode == 'B') get(cfg, "get(same)");
        if (mode == 'C' || mode == 'D') get(sep, "get(separate)");
    }
    CUpti_PCSamplingDisableParams dd{CUpti_PCSamplingDisableParamsSize}; dd.ctx = ctx; C(cuptiPCSamplingDisable(&dd));
    printf(" after disable: configured buffer totalSamples %llu totalNumPcs %zu\n", (unsigned long long)cfg.d.totalSamples, cfg.d.totalNumPcs);
    printf("MODE %c: GetData totals %llu samples, %zu pcs\n", mode, (unsigned long long)total, pcs);
}
