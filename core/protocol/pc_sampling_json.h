#pragma once
// The runner's "pc_sampling" value on the wire (docs/runner-protocol.md) and in the store's column:
// decoded once into lines::PcSampling when a reply is read, written back from it.
#include "core/lines/pc_sampling.h"

#include <optional>

#include <nlohmann/json_fwd.hpp>

namespace kl::protocol {

// null / absent → nullopt. Throws kl::Error "lines.bad-value" (where = the field path) for
// anything that is not the documented shape.
std::optional<lines::PcSampling> pcSamplingFromJson(const nlohmann::json& value);
nlohmann::json pcSamplingJson(const lines::PcSampling& sampling);

} // namespace kl::protocol
