#pragma once

// POSIX shell words, both ways: a runner started through ssh or srun gets its command line as one
// shell string, and endpoints and recipes store argument lists as such strings. One quoting rule
// and one splitting rule, so that what one part writes every other part reads back the same.
#include <string>
#include <string_view>
#include <vector>

namespace kl {

// The word as the shell reads it back: plain words as they are, anything else in '...'.
std::string shellQuoted(const std::string& word);

struct ShellWords {
    std::vector<std::string> words;
    std::string problem; // empty when the line split cleanly, else e.g. "an unclosed ' quote"
};

// Blanks (space, tab, newline) separate; '...' is literal; "..." and \ escape the next character.
ShellWords splitShellWords(std::string_view line);

} // namespace kl
