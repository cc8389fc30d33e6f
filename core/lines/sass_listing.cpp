#include "core/lines/sass_listing.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

namespace kl::lines {

const SassFunction* SassListing::function(std::string_view name) const
{
    for (const SassFunction& f : functions)
        if (f.name == name)
            return &f;
    return nullptr;
}

bool SassListing::hasLineInfo() const
{
    for (const SassFunction& f : functions)
        for (const SassInstruction& i : f.instructions)
            if (i.line > 0)
                return true;
    return false;
}

SassListing parseSass(const std::string& text)
{
    static const std::regex nvdisasmFunction(R"(^\s*\.text\.([^\s:]+):\s*$)");
    static const std::regex cuobjdumpFunction(R"(^\s*Function\s*:\s*(\S+)\s*$)");
    static const std::regex instruction(R"(^\s*/\*([0-9a-fA-F]{4,})\*/\s*(.*)$)");
    static const std::regex lineMarker(R"x(//##\s*File\s+"([^"]*)",\s*line\s+(\d+))x");
    SassListing listing;
    std::istringstream in(text);
    std::string line;
    std::string file;
    int sourceLine = 0;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, nvdisasmFunction) || std::regex_search(line, m, cuobjdumpFunction)) {
            listing.functions.push_back({ m[1].str(), {} });
            file.clear();
            sourceLine = 0;
        } else if (std::regex_search(line, m, lineMarker)) {
            file = m[1].str();
            sourceLine = std::stoi(m[2].str());
        } else if (std::regex_search(line, m, instruction) && !listing.functions.empty()) {
            std::string code = m[2].str();
            // The encoding cuobjdump prints after the instruction, and the ';'.
            if (const auto comment = code.find("/*"); comment != std::string::npos)
                code.erase(comment);
            while (!code.empty() && (code.back() == ' ' || code.back() == '\t' || code.back() == ';'))
                code.pop_back();
            const auto first = code.find_first_not_of(" \t{");
            code = first == std::string::npos ? std::string() : code.substr(first);
            if (code.empty())
                continue;
            SassInstruction i;
            i.offset = std::stoull(m[1].str(), nullptr, 16);
            i.text = code;
            i.file = file;
            i.line = sourceLine;
            listing.functions.back().instructions.push_back(std::move(i));
        }
    }
    std::erase_if(listing.functions, [](const SassFunction& f) { return f.instructions.empty(); });
    return listing;
}

std::vector<SampledInstruction> sampledInstructions(const SassFunction& function, const PcSampling& sampling)
{
    std::map<std::uint64_t, const PcSample*> byOffset;
    for (const PcSample& pc : sampling.pcs)
        if (pc.function == function.name)
            byOffset[pc.pcOffset] = &pc;
    std::vector<SampledInstruction> out;
    for (const SassInstruction& i : function.instructions) {
        SampledInstruction s { i, 0, {} };
        if (const auto it = byOffset.find(i.offset); it != byOffset.end()) {
            const PcSample& pc = *it->second;
            s.samples = pc.samples();
            std::int64_t most = 0;
            for (const auto& [stall, n] : pc.stalls)
                if (!isNotIssuedSubset(stall) && n > most) {
                    most = n;
                    s.dominantStall = stall;
                }
            if (s.instruction.line <= 0 && pc.line > 0) {
                s.instruction.line = pc.line;
                s.instruction.file = pc.file;
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::uint64_t> offsetsForLine(const std::vector<SampledInstruction>& listing, int line)
{
    std::vector<std::uint64_t> offsets;
    for (const SampledInstruction& s : listing)
        if (s.instruction.line == line)
            offsets.push_back(s.instruction.offset);
    return offsets;
}

} // namespace kl::lines
