#include "core/report/listings_compiled_here.h"

#include "core/compile/compiler.h"
#include "core/lines/sass_disassembly.h"
#include "core/model/candidate.h"
#include "core/model/error.h"

namespace kl::report {

ListingsCompiledHere compileListingsHere(const store::CandidateRecord& record, const std::string& arch)
{
    ListingsCompiledHere out;
    try {
        const Candidate candidate = parseCandidate(record.source, record.fileName);
        if (candidate.language != CandidateLanguage::Cuda) {
            out.note = "the session stored no listing, and a Triton candidate is not compiled again here";
            return out;
        }
        CompileOptions options;
        options.arch = arch;
        options.tunables = candidate.applicable(record.tunables);
        const CompileResult compiled = compileCandidate(candidate, options);
        if (!compiled.ok) {
            out.note = "the session stored no listing, and its source does not compile here: " + compiled.summary;
            return out;
        }
        out.listings.ptx = compiled.ptx;
        const lines::Disassembly sass = lines::disassembleCubin(compiled.cubin);
        out.listings.sass = sass.text;
        out.listings.sassNote = sass.problem;
        out.note = "compiled here from the stored source (NVRTC " + compiled.nvrtcVersion + ", " + arch
            + "): the session stored no listing";
    } catch (const Error& error) {
        out.note = "the session stored no listing, and its source cannot be read: " + error.message();
    }
    return out;
}

} // namespace kl::report
