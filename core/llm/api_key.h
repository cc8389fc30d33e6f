#pragma once
// Where the CLI finds an API key: an environment variable named in the configuration, or a key
// file only its owner can read. (The GUI keeps keys in the OS keychain.) Neither the key nor any
// part of it ever appears in an error message.
#include <filesystem>
#include <string>

namespace kl {

struct KeySource {
    std::string environmentVariable; // e.g. "OPENAI_API_KEY"
    std::filesystem::path file; // must have mode 0600 (or stricter)
    bool empty() const { return environmentVariable.empty() && file.empty(); }
};

// The key, with surrounding white space removed; "" for an empty source (local servers need no
// key). Throws kl::Error: "llm.key-missing" (variable unset or empty), "llm.key-file-unreadable",
// "llm.key-file-permissions" (group or others may read or write it), "llm.key-file-empty",
// "llm.key-ambiguous" (both a variable and a file given), "llm.key-bad-characters" (a control
// character inside the key: it would inject request headers).
std::string loadApiKey(const KeySource& source);

} // namespace kl
