#pragma once
// Reading a file the engineer named (a problem, a candidate, a problem's reference or baseline).
// Only a regular file is read: a FIFO would block for ever and /dev/zero would fill the memory,
// so the file is opened without blocking, its type and size are checked first, and then at most
// `limit` bytes are read.
#include <cstddef>
#include <filesystem>
#include <string>

namespace kl {

// Throws kl::Error with `kind` + ".unreadable" (missing, no permission, a name too long, a symlink
// loop, a NUL in the path), kind + ".not-a-file" (a directory, FIFO, device or socket) or
// kind + ".too-large"; `kind` is "problem" or "candidate".
std::string readInputFile(const std::filesystem::path& path, std::size_t limit, const std::string& kind);

} // namespace kl
