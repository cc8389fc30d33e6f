#include "core/llm/prompt_library.h"

#include "core/model/error.h"

#include <kainjow/mustache.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace kl {

namespace detail {
const std::map<std::string, std::string>& builtinPrompts(); // generated from resources/prompts
}

namespace {

constexpr std::string_view kPartialSuffix = ".partial.md";

bool isPartial(const std::string& name)
{
    return name.size() > kPartialSuffix.size()
        && name.compare(name.size() - kPartialSuffix.size(), kPartialSuffix.size(), kPartialSuffix) == 0;
}

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Other files in a prompt folder (a README, notes) are not templates.
bool isTemplateFileName(const std::string& name)
{
    return endsWith(name, ".system.md") || endsWith(name, ".user.md") || endsWith(name, kPartialSuffix);
}

std::string partialName(const std::string& fileName)
{
    return fileName.substr(0, fileName.size() - kPartialSuffix.size());
}

std::string withoutTrailingNewlines(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

// Sections left out leave blank lines behind; one blank line between parts is enough. Code
// blocks are left as they are.
std::string withoutBlankRuns(const std::string& text)
{
    std::string out;
    std::istringstream in(text);
    std::string line;
    bool inCode = false, lastBlank = false;
    while (std::getline(in, line)) {
        if (line.rfind("```", 0) == 0)
            inCode = !inCode;
        const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
        if (blank && lastBlank && !inCode)
            continue;
        lastBlank = blank && !inCode;
        out += line + "\n";
    }
    return out;
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("prompt.unreadable", path.string(), {}, "cannot open the template");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

const std::vector<std::string>& PromptLibrary::placeholderNames()
{
    static const std::vector<std::string> names { "problem_name", "problem", "best_candidate", "kernel_names",
        "iteration", "state", "findings", "hardware", "history", "steering", "rejections", "examples", "plan",
        "failure", "language", "code_fence", "directive", "compiler", "triton", "specification" };
    return names;
}

PromptLibrary PromptLibrary::builtIn()
{
    PromptLibrary library;
    for (const auto& [name, text] : detail::builtinPrompts()) {
        library.m_templates[name] = text;
        library.m_origins[name] = "built-in";
    }
    for (const auto& [name, text] : library.m_templates)
        library.check(name);
    return library;
}

PromptLibrary PromptLibrary::withOverrides(const std::filesystem::path& dir)
{
    PromptLibrary library = builtIn();
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error))
        throw Error("prompt.unreadable", dir.string(), {}, "the prompt folder does not exist");
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.is_regular_file() && isTemplateFileName(entry.path().filename().string()))
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
        const auto name = path.filename().string();
        if (!library.m_templates.count(name)) {
            const auto known = library.templateNames();
            std::string list;
            for (const auto& n : known)
                list += (list.empty() ? "" : ", ") + n;
            throw Error("prompt.unknown-template", path.string(), {},
                "\"" + name + "\" is not a template name; the templates are " + list);
        }
        library.m_templates[name] = readFile(path);
        library.m_origins[name] = path.string();
        library.check(name);
    }
    return library;
}

// Mustache accepts any name and renders an unknown one as nothing; a misspelt placeholder in a
// user's template would silently drop a part of the prompt, so names are checked here.
void PromptLibrary::check(const std::string& name) const
{
    const std::string& text = m_templates.at(name);
    kainjow::mustache::mustache parsed(text);
    if (!parsed.is_valid())
        throw Error("prompt.bad-template", m_origins.at(name), {}, parsed.error_message());
    static const std::regex tag(R"(\{\{\{?\s*([#^/>&!]?)\s*([^}]*?)\s*\}?\}\})");
    const auto& names = placeholderNames();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), tag); it != std::sregex_iterator(); ++it) {
        const std::string kind = (*it)[1];
        const std::string placeholder = (*it)[2];
        const auto line = 1 + std::count(text.begin(), text.begin() + it->position(), '\n');
        const std::string where = "line " + std::to_string(line);
        if (kind == "!")
            continue;
        if (kind == ">") {
            if (!m_templates.count(placeholder + std::string(kPartialSuffix)))
                throw Error("prompt.unknown-placeholder", m_origins.at(name), where,
                    "no shared part \"" + placeholder + "\" (a file " + placeholder + ".partial.md)");
            continue;
        }
        if (std::find(names.begin(), names.end(), placeholder) == names.end()) {
            std::string list;
            for (const auto& n : names)
                list += (list.empty() ? "" : ", ") + n;
            throw Error("prompt.unknown-placeholder", m_origins.at(name), where,
                "unknown placeholder {{" + placeholder + "}}; the placeholders are " + list);
        }
    }
}

std::string PromptLibrary::renderTemplate(
    const std::string& name, const std::map<std::string, std::string>& sections, const std::string& variant) const
{
    kainjow::mustache::mustache tmpl(m_templates.at(name));
    tmpl.set_custom_escape([](const std::string& s) { return s; }); // prompts are not HTML
    kainjow::mustache::data data;
    for (const auto& [key, value] : sections)
        data.set(key, value);
    for (const auto& [file, text] : m_templates) {
        if (!isPartial(file))
            continue;
        // {{> candidate_format}} in a Triton prompt is candidate_format_triton.partial.md where
        // that exists: one set of role templates, the language's own parts.
        const auto own = variant.empty() ? m_templates.end()
                                         : m_templates.find(partialName(file) + variant + std::string(kPartialSuffix));
        const std::string& chosen = own != m_templates.end() ? own->second : text;
        data.set(
            partialName(file), kainjow::mustache::partial([text = withoutTrailingNewlines(chosen)] { return text; }));
    }
    std::string out = tmpl.render(data);
    if (!tmpl.is_valid())
        throw Error("prompt.bad-template", m_origins.at(name), {}, tmpl.error_message());
    out = withoutBlankRuns(out);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out + "\n";
}

Prompt PromptLibrary::render(PromptRole role, const PromptPayload& payload) const
{
    const auto sections = promptSections(payload);
    const std::string base(promptRoleName(role));
    const std::string variant = payload.problem.language == CandidateLanguage::Triton ? "_triton" : "";
    return { renderTemplate(base + ".system.md", sections, variant),
        renderTemplate(base + ".user.md", sections, variant) };
}

std::vector<std::string> PromptLibrary::templateNames() const
{
    std::vector<std::string> names;
    for (const auto& [name, text] : m_templates)
        names.push_back(name);
    return names;
}

const std::string& PromptLibrary::templateText(const std::string& name) const { return m_templates.at(name); }

std::string PromptLibrary::origin(const std::string& name) const { return m_origins.at(name); }

} // namespace kl
