#include "core/verify/patterns.h"

#include <cstring>

namespace kl::verify {

std::uint64_t poisonPattern(DType type)
{
    switch (type) {
    case DType::F16:
        return 0x7da57da57da57da5ull;
    case DType::BF16:
        return 0x7fa57fa57fa57fa5ull;
    case DType::F32:
        return 0x7fa5a5a57fa5a5a5ull;
    case DType::F64:
        return 0x7ff5a5a5a5a5a5a5ull;
    case DType::I8:
    case DType::U8:
    case DType::I32:
    case DType::I64:
        return 0xa5a5a5a5a5a5a5a5ull;
    }
    return 0xa5a5a5a5a5a5a5a5ull;
}

std::vector<std::byte> poisonElement(DType type)
{
    const std::uint64_t pattern = poisonPattern(type);
    std::byte bytes[8];
    std::memcpy(bytes, &pattern, 8);
    return { bytes, bytes + dtypeSize(type) };
}

} // namespace kl::verify
