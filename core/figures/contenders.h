#pragma once
// PyTorch as a contender: for a problem with a PyTorch reference the runner times the reference's
// eager call and, where it compiles, torch.compile's, by the same protocol as the candidate (the
// same job, cold L2, CUDA events, medians), and stores them in the result's timing cases
// (protocol::CaseTiming's eager, torchCompile, speedups and torchCompileError). This is the one reader
// of them for show, history, the exported kernel and the GUI.
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::figures {

struct Contenders {
    std::string size; // the timed case's label
    std::optional<double> eagerUs; // median of the reference's eager call
    std::optional<double> torchCompileUs; // median of torch.compile's, when it compiled
    std::optional<double> speedupVsEager; // eager median / candidate median (same job)
    std::optional<double> speedupVsCompile;
    std::string torchCompileError; // why torch.compile (or eager) was not timed; empty when it was

    // Whether the runner timed or tried the contenders for this size at all.
    bool present() const { return eagerUs || torchCompileUs || !torchCompileError.empty(); }
};

// Per timed case of a result's timing, in timing order; cases without contenders are left out (a CUDA
// reference has none). Values that are no median (zero, not finite) read as absent.
std::vector<Contenders> contendersOf(const protocol::Timing& timing);

// "vs eager 1.42x (eager 128.70 us), vs torch.compile 0.97x (torch.compile 88.10 us)"; a failed
// torch.compile says "torch.compile not timed: <why>". Empty when nothing was timed.
std::string contendersText(const Contenders& c);

// Every iteration's contenders in a session (index → per size). Reads each timed iteration's
// timing only when the session's first timed iteration has contenders: a CUDA session costs one read.
std::map<int, std::vector<Contenders>> readContenders(const store::Store& store, std::int64_t sessionId);

} // namespace kl::figures
