#include "core/report/code_comparison.h"

#include "core/lines/sass_listing.h"

#include <sstream>

namespace kl::report {

std::string comparableSass(const lines::SassListing& listing)
{
    std::string out;
    for (const lines::SassFunction& function : listing.functions) {
        out += function.name + ":\n";
        for (const lines::SassInstruction& instruction : function.instructions)
            if (lines::classifySass(instruction.text)) // NOP padding left out: its count follows the code's size
                out += "    " + instruction.text + "\n";
    }
    return out;
}

std::string comparablePtx(const std::string& ptx)
{
    std::string out;
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos)
            continue;
        const std::string_view text = std::string_view(line).substr(first);
        if (text.starts_with(".loc") || text.starts_with(".file") || text.starts_with("//"))
            continue;
        std::string kept = line;
        for (char& c : kept)
            if (c == '\t')
                c = ' ';
        while (!kept.empty() && kept.back() == ' ')
            kept.pop_back();
        out += kept + "\n";
    }
    return out;
}

CodeComparison compareCode(const store::CodeListings& before, const store::CodeListings& after,
    const std::string& beforeName, const std::string& afterName)
{
    CodeComparison c;
    const auto missing = [](const store::CodeListings& l, const std::string& name, const char* what) {
        std::string why = name + " has no " + what;
        if (!l.sassNote.empty() && std::string(what) == "SASS")
            why += " (" + l.sassNote + ")";
        return why;
    };
    if (!before.sass.empty() && !after.sass.empty()) {
        const auto b = lines::parseSass(before.sass), a = lines::parseSass(after.sass);
        c.kind = "SASS";
        c.beforeText = comparableSass(b);
        c.afterText = comparableSass(a);
        c.beforeMix = lines::sassInstructionMix(b);
        c.afterMix = lines::sassInstructionMix(a);
    } else if (!before.ptx.empty() && !after.ptx.empty()) {
        c.kind = "PTX";
        if (before.sass.empty() && after.sass.empty() && before.sassNote == after.sassNote)
            c.note = "PTX compared: neither " + beforeName + " nor " + afterName + " has SASS"
                + (before.sassNote.empty() ? std::string() : " (" + before.sassNote + ")");
        else
            c.note = "PTX compared: " + (before.sass.empty() ? missing(before, beforeName, "SASS") : std::string())
                + (before.sass.empty() && after.sass.empty() ? "; " : "")
                + (after.sass.empty() ? missing(after, afterName, "SASS") : std::string());
        c.beforeText = comparablePtx(before.ptx);
        c.afterText = comparablePtx(after.ptx);
        c.beforeMix = lines::ptxInstructionMix(before.ptx);
        c.afterMix = lines::ptxInstructionMix(after.ptx);
    } else {
        std::string why;
        for (const auto& [l, name] : { std::pair { &before, &beforeName }, std::pair { &after, &afterName } })
            if (l->ptx.empty() && l->sass.empty())
                why += (why.empty() ? "" : "; ") + *name + ": " + store::codeListingsText(*l);
        c.note = "nothing to compare: " + why;
        return c;
    }
    c.diff = diffSources(c.beforeText, c.afterText);
    return c;
}

} // namespace kl::report
