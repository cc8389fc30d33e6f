#include "core/lines/tensor_instructions.h"

#include "core/lines/sass_listing.h"

#include <array>
#include <sstream>
#include <string_view>

namespace kl::lines {

namespace {

// "@!P0 HMMA.16816.F32 R4, ..." → "HMMA"
std::string sassOpcode(std::string_view text)
{
    std::size_t at = 0;
    while (at < text.size() && text[at] == ' ')
        ++at;
    if (at < text.size() && text[at] == '@') { // predicate
        while (at < text.size() && text[at] != ' ')
            ++at;
        while (at < text.size() && text[at] == ' ')
            ++at;
    }
    std::size_t end = at;
    while (end < text.size() && text[end] != ' ' && text[end] != '.' && text[end] != ';')
        ++end;
    return std::string(text.substr(at, end - at));
}

constexpr std::array<std::string_view, 4> kPtxTensorOps { "mma.sync", "wgmma.mma_async", "wmma.mma", "tcgen05.mma" };

// The PTX instruction of a line ("@%p1 mma.sync.aligned.m16n8k16..." → "mma.sync"), empty for others.
std::string ptxTensorOp(std::string_view line)
{
    std::size_t at = line.find_first_not_of(" \t");
    if (at == std::string_view::npos)
        return {};
    line.remove_prefix(at);
    if (line.starts_with("@")) {
        const auto space = line.find_first_of(" \t");
        if (space == std::string_view::npos)
            return {};
        line.remove_prefix(line.find_first_not_of(" \t", space) == std::string_view::npos
                ? line.size()
                : line.find_first_not_of(" \t", space));
    }
    for (const auto op : kPtxTensorOps)
        if (line.starts_with(op) && line.size() > op.size() && (line[op.size()] == '.' || line[op.size()] == ' '))
            return std::string(op);
    return {};
}

} // namespace

std::string TensorInstructions::text() const
{
    if (count == 0)
        return source == "SASS" ? "no HMMA/HGMMA/IMMA/IGMMA/QGMMA in the SASS"
                                : "no mma.sync/wgmma.mma_async/wmma.mma in the PTX";
    std::string out;
    for (const auto& [opcode, n] : byOpcode)
        out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + opcode;
    return out + " in the " + source;
}

std::optional<TensorInstructions> countTensorInstructions(const std::string& sass, const std::string& ptx)
{
    const SassListing listing = parseSass(sass);
    bool anySass = false;
    TensorInstructions found;
    for (const SassFunction& function : listing.functions)
        for (const SassInstruction& instruction : function.instructions) {
            anySass = true;
            const std::string opcode = sassOpcode(instruction.text);
            if (opcode.size() >= 3 && opcode.ends_with("MMA")) {
                ++found.count;
                ++found.byOpcode[opcode];
            }
        }
    if (anySass) {
        found.source = "SASS";
        return found;
    }
    if (ptx.empty())
        return std::nullopt;
    found.source = "PTX";
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);)
        if (const std::string op = ptxTensorOp(line); !op.empty()) {
            ++found.count;
            ++found.byOpcode[op];
        }
    return found;
}

} // namespace kl::lines
