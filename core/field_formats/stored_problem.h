#pragma once
// The problem a session ran, loaded from the store's record (its JSON text and both sources) as the
// typed Problem the loop had: every field checked by loadProblem, shapes and sizes as it reads them.
#include "core/model/problem.h"
#include "core/store/records.h"

namespace kl::fieldformats {

// Throws kl::Error "store.problem-unreadable" when the stored text no longer loads (a record written by
// a newer KernelLoop), with loadProblem's reason.
Problem storedProblem(const store::ProblemRecord& record);

// The file names the problem's JSON gives its reference and baseline ("reference.py", "baseline.cu");
// empty where it names none (a PyTorch reference without a baseline kernel).
struct SourceNames {
    std::string reference;
    std::string baseline;
};
SourceNames sourceNames(const std::string& problemJson);

} // namespace kl::fieldformats
