#pragma once
// The prompt templates, one system and one user template per role, as Mustache text
// (kainjow::mustache): {{name}} inserts a section of promptSections(), {{#name}}...{{/name}}
// shows a block only when that section has something to say, {{> candidate_format}} includes a
// shared part (in its language's version, candidate_format_triton, for a Triton problem). Built-in templates come from
// resources/prompts/; a user's folder overrides any of them file by file.
#include "core/exchange/exchange.h" // PromptRole
#include "core/llm/prompt_payload.h"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

struct Prompt {
    std::string system;
    std::string user;
};

class PromptLibrary {
public:
    static PromptLibrary builtIn();
    // The built-in templates, with those in `dir` ("coder.user.md", "candidate_format.partial.md",
    // ...) in their place; other files there (*.md that are not *.system.md, *.user.md or
    // *.partial.md) are ignored. Throws kl::Error: "prompt.unknown-template" for a file name that is not
    // one of the built-in ones (a typo would silently change nothing), "prompt.bad-template" for
    // Mustache syntax errors, "prompt.unknown-placeholder" for a {{name}} no section provides.
    static PromptLibrary withOverrides(const std::filesystem::path& dir);

    Prompt render(PromptRole role, const PromptPayload& payload) const;

    std::vector<std::string> templateNames() const;
    const std::string& templateText(const std::string& name) const; // throws std::out_of_range
    std::string origin(const std::string& name) const; // "built-in" or the file's path

    static const std::vector<std::string>& placeholderNames(); // what templates may use

private:
    void check(const std::string& name) const;
    // `variant` ("_triton" or empty) picks each partial's language version where one exists.
    std::string renderTemplate(
        const std::string& name, const std::map<std::string, std::string>& sections, const std::string& variant) const;

    std::map<std::string, std::string> m_templates;
    std::map<std::string, std::string> m_origins;
};

} // namespace kl
