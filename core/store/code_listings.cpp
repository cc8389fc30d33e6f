#include "core/store/code_listings.h"

#include "core/lines/sass_disassembly.h"
#include "core/protocol/base64.h"

#include <zlib.h>

#include <cstdio>

namespace kl::store {

namespace {

std::string kilobytes(std::size_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f KB", static_cast<double>(bytes) / 1000.0);
    return text;
}

std::size_t storedSize(const PackedText& packed)
{
    return packed.plain ? packed.plain->size() : packed.deflateBase64.size();
}

} // namespace

PackedText packedText(std::string_view text)
{
    std::string kept(text.substr(0, std::min(text.size(), kListingLimitBytes)));
    if (text.size() > kListingLimitBytes)
        kept += "\n// (listing cut at " + kilobytes(kListingLimitBytes) + " of " + kilobytes(text.size()) + ")\n";
    PackedText packed;
    uLongf size = compressBound(kept.size());
    std::string deflated(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size, reinterpret_cast<const Bytef*>(kept.data()),
            kept.size(), Z_BEST_COMPRESSION)
        != Z_OK) {
        packed.plain = std::move(kept); // zlib only fails without memory: keep the text as it is
        return packed;
    }
    deflated.resize(size);
    packed.deflateBase64 = protocol::base64Encode(deflated);
    packed.bytes = kept.size();
    return packed;
}

std::optional<std::string> unpackedText(const PackedText& packed)
{
    if (packed.plain)
        return packed.plain;
    if (packed.damaged || packed.bytes > kListingLimitBytes + 4096)
        return std::nullopt;
    const auto deflated = protocol::base64Decode(packed.deflateBase64);
    if (!deflated)
        return std::nullopt;
    std::string text(packed.bytes, '\0');
    uLongf size = packed.bytes;
    if (uncompress(reinterpret_cast<Bytef*>(text.data()), &size, reinterpret_cast<const Bytef*>(deflated->data()),
            deflated->size())
            != Z_OK
        || size != packed.bytes)
        return std::nullopt;
    return text;
}

StoredListings listingsOf(const std::string& ptx, const std::string& cubin)
{
    StoredListings listings;
    if (!ptx.empty())
        listings.ptx = packedText(ptx);
    if (cubin.empty())
        return listings;
    const auto sass = lines::disassembleCubin(cubin);
    if (sass.text.empty())
        listings.sassNote = sass.problem;
    else
        listings.sass = packedText(sass.text);
    return listings;
}

CodeListings codeListingsOf(const CompileRecord& compile)
{
    CodeListings listings;
    const StoredListings& stored = compile.listings;
    for (const auto& [packed, text] :
        { std::pair { &stored.ptx, &listings.ptx }, std::pair { &stored.sass, &listings.sass } }) {
        if (!*packed)
            continue;
        listings.storedBytes += storedSize(**packed);
        if (auto unpacked = unpackedText(**packed))
            *text = std::move(*unpacked);
        else
            listings.damaged = true;
    }
    listings.sassNote = stored.sassNote;
    return listings;
}

std::string codeListingsText(const CodeListings& l)
{
    std::string text;
    const std::string store = " stored (" + kilobytes(l.storedBytes) + " in the store)";
    if (!l.sass.empty() && !l.ptx.empty())
        text = "SASS (nvdisasm -g, " + kilobytes(l.sass.size()) + ") and PTX (" + kilobytes(l.ptx.size()) + ")" + store;
    else if (!l.sass.empty())
        text = "SASS (nvdisasm -g, " + kilobytes(l.sass.size()) + ")" + store;
    else if (!l.ptx.empty())
        text = "PTX only (" + kilobytes(l.ptx.size()) + ")" + store
            + (l.sassNote.empty() ? std::string() : ", no SASS: " + l.sassNote);
    else
        text = "no PTX or SASS stored for this iteration"
            + (l.sassNote.empty() ? std::string(" (measured before KernelLoop kept them, or it did not compile)")
                                  : " (" + l.sassNote + ")");
    if (l.damaged)
        text += "; a stored listing is damaged and cannot be read";
    return text;
}

} // namespace kl::store
