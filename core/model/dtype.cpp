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
    double highest;
    double lowest;
};
constexpr double kExactInDouble = 9007199254740992.0; // 2^53
constexpr std::array<DTypeInfo, 8> kTypes { {
    { DType::F16, "f16", 2, true, "__half", 65504.0, -65504.0 },
    { DType::BF16, "bf16", 2, true, "__nv_bfloat16", 3.3895313892515355e38, -3.3895313892515355e38 },
    { DType::F32, "f32", 4, true, "float", 3.4028234663852886e38, -3.4028234663852886e38 },
    { DType::F64, "f64", 8, true, "double", 1.7976931348623157e308, -1.7976931348623157e308 },
    { DType::I8, "i8", 1, false, "signed char", 127.0, -128.0 },
    { DType::U8, "u8", 1, false, "unsigned char", 255.0, 0.0 },
    { DType::I32, "i32", 4, false, "int", 2147483647.0, -2147483648.0 },
    { DType::I64, "i64", 8, false, "long long", kExactInDouble, -kExactInDouble },
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
double dtypeLowest(DType type) { return info(type).lowest; }
double dtypeHighest(DType type) { return info(type).highest; }

} // namespace kl
