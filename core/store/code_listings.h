#pragma once
// The code of a compiled candidate kept with its iteration, for the SASS/PTX pane and `show --lines`:
// the PTX always, the SASS where nvdisasm ran (lines::disassembleCubin), in the stored compile record
// (records.h: StoredListings). Deflated and base64'd: the planted pointer_chase kernel's 13.8 KB of
// SASS code sections and 3.1 KB of PTX take 3.3 KB of the row instead of 17 KB (47 KB for
// nvdisasm's whole output); a listing past kListingLimitBytes is cut.
#include "core/store/records.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kl::store {

constexpr std::size_t kListingLimitBytes = 4u << 20; // per listing, before deflating

// `text` deflated (cut at kListingLimitBytes with a last line saying so).
PackedText packedText(std::string_view text);
// The text again; nullopt for a damaged one (the pane then says so rather than showing a part).
std::optional<std::string> unpackedText(const PackedText& packed);

// The PTX and the SASS of `cubin` (or "sass_note": why there is none), packed.
StoredListings listingsOf(const std::string& ptx, const std::string& cubin);

struct CodeListings {
    std::string ptx;
    std::string sass; // `nvdisasm -g` code sections
    std::string sassNote; // why no SASS was stored, when the loop said
    std::size_t storedBytes = 0; // what the listings take in the store
    bool damaged = false; // a listing was stored but cannot be read back
};
CodeListings codeListingsOf(const CompileRecord& compile);

// One line for `show --lines` and the pane's title: "SASS (nvdisasm -g, 13.8 KB) and PTX (3.1 KB)
// stored (3.3 KB in the store)", "PTX only (3.1 KB) stored: nvdisasm not found ...", "no PTX or
// SASS stored for this iteration (...)".
std::string codeListingsText(const CodeListings& listings);

} // namespace kl::store
