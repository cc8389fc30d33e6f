#include "core/model/hash.h"

#include <cstdint>
#include <cstdio>

namespace kl {

namespace {
void mix(std::uint64_t& h, std::string_view text)
{
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
}
std::string hex(std::uint64_t h)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}
} // namespace

std::string contentHash(std::string_view text)
{
    std::uint64_t h = 14695981039346656037ULL;
    mix(h, text);
    return hex(h);
}

std::string contentHash(std::initializer_list<std::string_view> parts)
{
    std::uint64_t h = 14695981039346656037ULL;
    for (auto part : parts) {
        mix(h, std::to_string(part.size()));
        mix(h, ":");
        mix(h, part);
    }
    return hex(h);
}

} // namespace kl
