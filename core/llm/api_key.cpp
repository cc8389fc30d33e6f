#include "core/llm/api_key.h"

#include "core/model/child_environment.h"
#include "core/model/error.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace kl {

namespace {

std::string trimmed(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// A key goes into a request header: a CR or LF in it would add headers of its own.
std::string checkedKey(std::string key, const std::string& file, const std::string& where)
{
    for (const char c : key)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            throw Error("llm.key-bad-characters", file, where,
                "the key contains a control character (a line break, tab or NUL); a key is one line of text");
    return key;
}

std::string octalMode(unsigned mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", mode & 07777u);
    return text;
}

std::string keyFromFile(const std::filesystem::path& path)
{
    const std::string file = path.string();
    struct stat info { };
    if (::stat(file.c_str(), &info) != 0)
        throw Error("llm.key-file-unreadable", file, {}, "the key file does not exist or cannot be examined");
    if (!S_ISREG(info.st_mode))
        throw Error("llm.key-file-unreadable", file, {}, "the key file is not a regular file");
    if ((info.st_mode & 077u) != 0)
        throw Error("llm.key-file-permissions", file, {},
            "the key file has mode " + octalMode(info.st_mode)
                + ": other users may read it; make it private with \"chmod 600 " + file + "\"");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("llm.key-file-unreadable", file, {}, "the key file cannot be opened");
    std::ostringstream text;
    text << in.rdbuf();
    auto key = trimmed(text.str());
    if (key.empty())
        throw Error("llm.key-file-empty", file, {}, "the key file is empty");
    return checkedKey(std::move(key), file, {});
}

} // namespace

std::string loadApiKey(const KeySource& source)
{
    if (!source.environmentVariable.empty() && !source.file.empty())
        throw Error(
            "llm.key-ambiguous", {}, {}, "give the key either in an environment variable or in a file, not both");
    if (!source.file.empty())
        return keyFromFile(source.file);
    if (source.environmentVariable.empty())
        return {};
    markSecretVariable(source.environmentVariable); // no child process of ours gets it
    const char* value = std::getenv(source.environmentVariable.c_str());
    auto key = trimmed(value ? value : "");
    if (key.empty())
        throw Error("llm.key-missing", {}, source.environmentVariable,
            "the environment variable " + source.environmentVariable + " is not set or empty");
    return checkedKey(std::move(key), {}, source.environmentVariable);
}

} // namespace kl
