#include "core/model/child_environment.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

extern char** environ;

namespace kl {

namespace {

std::mutex g_mutex;
std::set<std::string>& marked()
{
    static std::set<std::string> names;
    return names;
}

bool looksSecret(std::string name)
{
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    static const char* const words[]
        = { "API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL" };
    return std::any_of(
        std::begin(words), std::end(words), [&](const char* word) { return name.find(word) != std::string::npos; });
}

} // namespace

void markSecretVariable(const std::string& name)
{
    if (name.empty())
        return;
    std::lock_guard lock(g_mutex);
    marked().insert(name);
}

bool isSecretVariable(const std::string& name)
{
    {
        std::lock_guard lock(g_mutex);
        if (marked().count(name))
            return true;
    }
    return looksSecret(name);
}

std::vector<std::string> childEnvironment()
{
    std::vector<std::string> env;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text = *entry;
        const auto eq = text.find('=');
        if (eq != std::string::npos && !isSecretVariable(text.substr(0, eq)))
            env.push_back(text);
    }
    return env;
}

std::vector<char*> environmentPointers(std::vector<std::string>& strings)
{
    std::vector<char*> pointers;
    for (auto& s : strings)
        pointers.push_back(s.data());
    pointers.push_back(nullptr);
    return pointers;
}

} // namespace kl
