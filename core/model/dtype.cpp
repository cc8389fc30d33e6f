#include "core/model/dtype.h"

#include <array>

namespace kl {

namespace {
struct DTypeInfo {
    DType type;
    std::string_view name;
    std::size_t size;
    bool floating;
    std::string_view cuda;
};
constexpr std::array<DTypeInfo, 8> kTypes { {
    { DType::F16, "f16", 2, true, "__half" },
    { DType::BF16, "bf16", 2, true, "__nv_bfloat16" },
    { DType::F32, "f32", 4, true, "float" },
    { DType::F64, "f64", 8, true, "double" },
    { DType::I8, "i8", 1, false, "signed char" },
    { DType::U8, "u8", 1, false, "unsigned char" },
    { DType::I32, "i32", 4, false, "int" },
    { DType::I64, "i64", 8, false, "long long" },
} };

const DTypeInfo& info(DType type)
{
    for (const auto& t : kTypes)
        if (t.type == type)
            return t;
    return kTypes[0];
}
} // namespace

std::optional<DType> parseDType(std::string_view name)
{
    for (const auto& t : kTypes)
        if (t.name == name)
            return t.type;
    return std::nullopt;
}

std::string_view dtypeName(DType type) { return info(type).name; }
std::size_t dtypeSize(DType type) { return info(type).size; }
bool isFloating(DType type) { return info(type).floating; }
std::string_view dtypeCudaName(DType type) { return info(type).cuda; }

} // namespace kl
