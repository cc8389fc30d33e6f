#pragma once
// Element types a problem's tensors and scalars may have.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kl {

enum class DType { F16, BF16, F32, F64, I8, U8, I32, I64 };

std::optional<DType> parseDType(std::string_view name); // "f16", "bf16", "f32", "f64", "i8", "u8", "i32", "i64"
std::string_view dtypeName(DType type);
std::size_t dtypeSize(DType type);
bool isFloating(DType type);
std::string_view dtypeCudaName(DType type); // "__half", "__nv_bfloat16", "float", ...
// The finite values a type holds: [lowest, highest]. Integer types whose range goes past what a
// double holds exactly (i64) are limited to ±2^53, since problems carry values as doubles.
double dtypeLowest(DType type);
double dtypeHighest(DType type);

} // namespace kl
