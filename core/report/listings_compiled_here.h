#pragma once
// The code of an iteration whose session kept none (recorded before KernelLoop stored listings, or
// by a runner that did not), compiled again here from its stored source and tunables: NVRTC needs no
// GPU, so the review can show source beside PTX (and SASS where nvdisasm is installed) for every
// CUDA iteration. Same options as the loop (core/compile), so the code is the one that was timed
// as long as the NVRTC version matches; the note says which one compiled it.
#include "core/store/code_listings.h"
#include "core/store/records.h"

#include <string>

namespace kl::report {

struct ListingsCompiledHere {
    store::CodeListings listings; // empty when it could not compile
    // "compiled here from the stored source (NVRTC 13.0, sm_90): the session stored no listing", or why not.
    std::string note;
};

// `arch`: the problem's (problemArchOf). Never throws. A Triton candidate is not compiled (Triton's helper and Python
// may be missing here).
ListingsCompiledHere compileListingsHere(const store::CandidateRecord& candidate, const std::string& arch);

} // namespace kl::report
