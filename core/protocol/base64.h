#pragma once
// Base64 (RFC 4648, standard alphabet, padded) for cubins inside JSON lines.
#include <optional>
#include <string>
#include <string_view>

namespace kl::protocol {

std::string base64Encode(std::string_view bytes);
// nullopt for a character outside the alphabet, a bad length or misplaced padding.
// Whitespace is not accepted: a JSON string never needs it.
std::optional<std::string> base64Decode(std::string_view text);

} // namespace kl::protocol
