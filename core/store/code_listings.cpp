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

std::size_t storedSize(const nlohmann::json& value)
{
    if (value.is_string())
        return value.get_ref<const std::string&>().size();
    if (value.is_object() && value.contains("deflate_base64") && value["deflate_base64"].is_string())
        return value["deflate_base64"].get_ref<const std::string&>().size();
    return 0;
}

} // namespace

nlohmann::json packedText(std::string_view text)
{
    std::string kept(text.substr(0, std::min(text.size(), kListingLimitBytes)));
    if (text.size() > kListingLimitBytes)
        kept += "\n// (listing cut at " + kilobytes(kListingLimitBytes) + " of " + kilobytes(text.size()) + ")\n";
    uLongf size = compressBound(kept.size());
    std::string deflated(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size, reinterpret_cast<const Bytef*>(kept.data()),
            kept.size(), Z_BEST_COMPRESSION)
        != Z_OK)
        return kept; // zlib only fails without memory: keep the text as it is
    deflated.resize(size);
    return { { "deflate_base64", protocol::base64Encode(deflated) }, { "bytes", kept.size() } };
}

std::optional<std::string> unpackedText(const nlohmann::json& value)
{
    if (value.is_string())
        return value.get<std::string>();
    if (!value.is_object() || !value.contains("deflate_base64") || !value["deflate_base64"].is_string()
        || !value.contains("bytes") || !value["bytes"].is_number_unsigned())
        return std::nullopt;
    const auto bytes = value["bytes"].get<std::size_t>();
    const auto deflated = protocol::base64Decode(value["deflate_base64"].get_ref<const std::string&>());
    if (!deflated || bytes > kListingLimitBytes + 4096)
        return std::nullopt;
    std::string text(bytes, '\0');
    uLongf size = bytes;
    if (uncompress(reinterpret_cast<Bytef*>(text.data()), &size, reinterpret_cast<const Bytef*>(deflated->data()),
            deflated->size())
            != Z_OK
        || size != bytes)
        return std::nullopt;
    return text;
}

void addCodeListings(nlohmann::json& compile, const std::string& ptx, const std::string& cubin)
{
    if (!compile.is_object())
        compile = nlohmann::json::object();
    if (!ptx.empty())
        compile["ptx"] = packedText(ptx);
    if (cubin.empty())
        return;
    const auto sass = lines::disassembleCubin(cubin);
    if (sass.text.empty())
        compile["sass_note"] = sass.problem;
    else
        compile["sass"] = packedText(sass.text);
}

CodeListings codeListingsOf(const nlohmann::json& compile)
{
    CodeListings listings;
    if (!compile.is_object())
        return listings;
    for (const auto& [key, text] : { std::pair { "ptx", &listings.ptx }, std::pair { "sass", &listings.sass } }) {
        if (!compile.contains(key))
            continue;
        listings.storedBytes += storedSize(compile[key]);
        if (auto unpacked = unpackedText(compile[key]))
            *text = std::move(*unpacked);
        else
            listings.damaged = true;
    }
    if (compile.contains("sass_note") && compile["sass_note"].is_string())
        listings.sassNote = compile["sass_note"].get<std::string>();
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
