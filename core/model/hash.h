#pragma once
// Content hashes for caching and content-addressed storage. FNV-1a, 64 bits, as 16 hex digits:
// not cryptographic, and needs not be; it names sources and problems within one user's store.
#include <string>
#include <string_view>

namespace kl {

std::string contentHash(std::string_view text);
std::string contentHash(std::initializer_list<std::string_view> parts); // parts are length-prefixed

} // namespace kl
