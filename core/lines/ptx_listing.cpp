#include "core/lines/ptx_listing.h"

#include <map>
#include <regex>
#include <sstream>

namespace kl::lines {

namespace {

std::string_view lastComponent(std::string_view path)
{
    const auto slash = path.find_last_of("/\\");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool isInstruction(const std::string& line)
{
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos)
        return false;
    const char c = line[first];
    if (c == '.' || c == '/' || c == '{' || c == '}' || c == ')' || c == '(')
        return false;
    return line.find(';') != std::string::npos; // labels end in ':' and carry no ';'
}

} // namespace

std::vector<int> PtxListing::ptxLinesFor(int sourceLine, std::string_view file) const
{
    std::vector<int> out;
    for (const PtxLine& l : lines)
        if (l.sourceLine == sourceLine && sourceLine > 0
            && (file.empty() || lastComponent(l.sourceFile) == lastComponent(file)))
            out.push_back(l.number);
    return out;
}

int PtxListing::sourceLineOf(int ptxLine) const
{
    return ptxLine >= 1 && ptxLine <= static_cast<int>(lines.size()) ? lines[ptxLine - 1].sourceLine : 0;
}

PtxListing parsePtx(const std::string& ptx)
{
    static const std::regex loc(R"(^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+)");
    static const std::regex inlinedAt(R"(inlined_at\s+(\d+)\s+(\d+)\s+\d+)");
    static const std::regex file(R"x(^\s*\.file\s+(\d+)\s+"([^"]*)")x");
    PtxListing listing;
    std::map<int, std::string> files; // .file directives follow the code in NVRTC's PTX
    {
        std::istringstream in(ptx);
        std::string line;
        while (std::getline(in, line)) {
            std::smatch m;
            if (std::regex_search(line, m, file))
                files[std::stoi(m[1].str())] = m[2].str();
        }
    }
    std::istringstream in(ptx);
    std::string line;
    int fileIndex = -1, sourceLine = 0;
    for (int number = 1; std::getline(in, line); ++number) {
        PtxLine l { number, line, 0, {} };
        std::smatch m;
        if (std::regex_search(line, m, loc)) {
            fileIndex = std::stoi(m[1].str());
            sourceLine = std::stoi(m[2].str());
            // Code inlined from another file (wmma::mma_sync from CUDA's mma.hpp) belongs, for the
            // engineer, to the line that called it: the .loc's inlined_at.
            if (std::smatch at; std::regex_search(line, at, inlinedAt) && std::stoi(at[1].str()) != fileIndex) {
                fileIndex = std::stoi(at[1].str());
                sourceLine = std::stoi(at[2].str());
            }
        } else if (line.find(".entry") != std::string::npos || line.find(".func") != std::string::npos) {
            fileIndex = -1;
            sourceLine = 0;
        } else if (sourceLine > 0 && isInstruction(line)) {
            l.sourceLine = sourceLine;
            if (const auto it = files.find(fileIndex); it != files.end())
                l.sourceFile = it->second;
        }
        listing.lines.push_back(std::move(l));
    }
    return listing;
}

} // namespace kl::lines
