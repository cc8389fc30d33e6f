#pragma once
// What the findings rules read: one main kernel at one main size, as flat values. The loop fills
// it from the compile report (static resources, occupancy), the runner's timing and its CUPTI
// profile; tests fill it by hand or from a recorded runner reply (telemetryFromRecordedReply in
// core/loop/evaluation.h, which decodes it through the protocol first). Keeping it
// flat keeps the findings free of the compile and protocol parts.
#include "core/lines/pc_sampling.h"
#include "core/lines/tensor_instructions.h"
#include "core/model/precision.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kl {

struct Telemetry {
    // Static, per main kernel (ptxas and the occupancy calculator). 0 means unknown where 0 is
    // not a real value (registers, threads, blocks per SM, occupancy, grid, SMs).
    std::string kernel;
    int registers = 0;
    int threadsPerBlock = 0;
    std::int64_t staticShared = 0;
    std::int64_t dynamicShared = 0;
    std::int64_t stackFrame = 0; // local memory even with zero spills
    std::int64_t spillStores = 0;
    std::int64_t spillLoads = 0;
    int blocksPerSm = 0;
    double theoreticalOccupancy = 0.0; // 0..1
    std::string occupancyLimiter; // "registers" | "shared memory" | "warps" | "blocks"
    std::int64_t gridBlocks = 0;
    int smCount = 0;

    // Timing at a main size.
    std::string sizeLabel;
    std::optional<double> medianUs, gbps, pctOfCopy, copyGbps, bytes, flops, tflops, cv, graphMedianUs;

    // Speed of light at that size, as the runner computed it (absent from older runners).
    std::optional<double> pctOfSol;
    std::optional<Bound> solBound;

    // What the FLOPs run in (the problem's "compute", as the timing says); unknown: FP32 CUDA cores.
    std::optional<Precision> precision;
    // Device: peak FLOP/s of the pipe that matters: the precision's ceiling at the timing's SM clock,
    // FP32 CUDA cores where the precision is unknown.
    double peakTflops = 0.0;

    // Tensor-core instructions in the candidate's SASS (else PTX), when the code was at hand.
    std::optional<lines::TensorInstructions> tensorInstructions;

    // CUPTI metrics by their Nsight Compute names.
    std::map<std::string, double> metrics;

    // The runner's PC samples at the main size (its "pc_sampling"), when it sampled.
    std::optional<lines::PcSampling> lineSamples;

    // A metric, or nothing when absent or not finite (NaN, inf).
    std::optional<double> metric(const std::string& name) const;
    // A percentage metric clamped to 0..100 (multi-pass ratios can exceed 100%).
    std::optional<double> percent(const std::string& name) const;
};

// Metric names the rules use (Nsight Compute names, docs/gpu-facts.md, "Metric names").
namespace metric {
inline constexpr const char* kDuration = "gpu__time_duration.sum";
inline constexpr const char* kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMemoryThroughput = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramThroughput = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramBytesRead = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWrite = "dram__bytes_write.sum";
inline constexpr const char* kL2HitRate = "lts__t_sector_hit_rate.pct";
inline constexpr const char* kL1HitRate = "l1tex__t_sector_hit_rate.pct";
inline constexpr const char* kAchievedOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kInstructions = "smsp__inst_executed.sum";
inline constexpr const char* kLocalLoads = "smsp__inst_executed_op_local_ld.sum";
inline constexpr const char* kLocalStores = "smsp__inst_executed_op_local_st.sum";
inline constexpr const char* kLocalLoadBytes = "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum";
inline constexpr const char* kLocalStoreBytes = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum";
inline constexpr const char* kSharedLoadConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
inline constexpr const char* kSharedStoreConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
inline constexpr const char* kSharedLoadWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
inline constexpr const char* kSharedStoreWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
inline constexpr const char* kSharedLoads = "smsp__inst_executed_op_shared_ld.sum";
inline constexpr const char* kSharedStores = "smsp__inst_executed_op_shared_st.sum";
inline constexpr const char* kWarpLatency = "smsp__average_warp_latency_per_inst_issued.ratio";
inline constexpr const char* kIssueActive = "smsp__issue_active.avg.per_cycle_elapsed";
// Tensor pipes (GH100, docs/gpu-facts.md): utilisation of all tensor pipes and of the HMMA (fp16/bf16/tf32/fp8
// mma and wgmma) pipe, and tensor instructions executed.
inline constexpr const char* kTensorPipe = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kTensorPipeHmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kTensorInstructions = "sm__inst_executed_pipe_tensor.sum";
inline constexpr const char* kFmaPipe = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
// smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
std::string stallRatio(const std::string& reason);
} // namespace metric

// FP32 FLOP/s of a device from its SM count, SM clock and compute capability ("9.0"): lanes per
// SM × 2 (FMA) × clock. 0 for an architecture it does not know.
double peakFp32Tflops(int smCount, double smClockMhz, const std::string& computeCapability);

// Fills what the runner's timing leaves out, as both readers of a result do: copyGbps from the
// same-size copy's median (else the device's copy bandwidth), and gbps, tflops and % of copy from
// bytes, flops and the median where they are absent.
void deriveRates(Telemetry& t, std::optional<double> copyMedianUs, double deviceCopyGbps);

} // namespace kl
