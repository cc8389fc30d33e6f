#pragma once
// Names the engineer gives things (tensors, size symbols, scalars, tunables, kernels, scratch
// buffers): C identifiers of a sane length, checked by a loop rather than a regex, because
// std::regex recurses once per character and a name of a few ten thousand characters overflowed
// the stack.
#include <cstddef>
#include <string>
#include <string_view>

namespace kl {

constexpr std::size_t kMaxNameLength = 128;

// [A-Za-z_][A-Za-z0-9_]*, at most kMaxNameLength characters.
bool isIdentifier(std::string_view text);

// Why `text` is not a name ("is empty", "has 26000 characters; at most 128", "is not an
// identifier"), or empty when it is one.
std::string nameProblem(std::string_view text);

// Names a tunable may not have: it becomes a -D macro, so C++ and CUDA keywords, CUDA's built-in
// variables, and names with a leading "__" or "_" + capital (reserved to the implementation, e.g.
// __CUDA_ARCH__) would rewrite the compiler's own code.
bool isReservedName(std::string_view text);

// `text` in quotes for a message, cut short ("...") when long: a 26,000-character name is not echoed.
std::string quotedForMessage(std::string_view text, std::size_t keep = 40);

} // namespace kl
