#include "core/verify/element.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace kl::verify {

namespace {
template <typename T> T load(const std::byte* data)
{
    T value;
    std::memcpy(&value, data, sizeof(T));
    return value;
}

template <typename T> void store(T value, std::byte* data) { std::memcpy(data, &value, sizeof(T)); }

template <typename T> T saturate(double value)
{
    if (std::isnan(value))
        return 0;
    if (value <= static_cast<double>(std::numeric_limits<T>::min()))
        return std::numeric_limits<T>::min();
    if (value >= static_cast<double>(std::numeric_limits<T>::max()))
        return std::numeric_limits<T>::max();
    return static_cast<T>(std::llround(value));
}
} // namespace

double halfToDouble(std::uint16_t bits)
{
    const int sign = bits >> 15;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    double value;
    if (exponent == 0)
        value = std::ldexp(mantissa, -24);
    else if (exponent == 31)
        value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else
        value = std::ldexp(mantissa + 1024, exponent - 25);
    return sign ? -value : value;
}

double bfloat16ToDouble(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t doubleToHalf(double value)
{
    const std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    if (std::isnan(value))
        return 0x7e00;
    const double magnitude = std::fabs(value);
    if (magnitude >= 65520.0) // rounds to infinity
        return sign | 0x7c00;
    if (magnitude < std::ldexp(1.0, -14)) {
        // Subnormal: units of 2^-24, rounded to nearest even.
        const double units = std::nearbyint(magnitude * std::ldexp(1.0, 24));
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
    }
    int exponent;
    const double fraction = std::frexp(magnitude, &exponent); // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
    // 11 significant bits: the mantissa with its hidden bit, in [1024, 2048].
    double significand = std::nearbyint(fraction * 2048.0);
    if (significand >= 2048.0) {
        significand /= 2.0;
        ++exponent;
    }
    const int biased = exponent - 1 + 15;
    if (biased >= 31)
        return sign | 0x7c00;
    return static_cast<std::uint16_t>(sign | (biased << 10) | (static_cast<int>(significand) - 1024));
}

std::uint16_t doubleToBfloat16(double value)
{
    const float f = static_cast<float>(value);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    if (std::isnan(f))
        return static_cast<std::uint16_t>((bits >> 16) | 0x0040);
    const std::uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

double readElement(DType type, const std::byte* data)
{
    switch (type) {
    case DType::F16:
        return halfToDouble(load<std::uint16_t>(data));
    case DType::BF16:
        return bfloat16ToDouble(load<std::uint16_t>(data));
    case DType::F32:
        return load<float>(data);
    case DType::F64:
        return load<double>(data);
    case DType::I8:
        return load<std::int8_t>(data);
    case DType::U8:
        return load<std::uint8_t>(data);
    case DType::I32:
        return load<std::int32_t>(data);
    case DType::I64:
        return static_cast<double>(load<std::int64_t>(data));
    }
    return 0.0;
}

void writeElement(DType type, double value, std::byte* data)
{
    switch (type) {
    case DType::F16:
        store(doubleToHalf(value), data);
        break;
    case DType::BF16:
        store(doubleToBfloat16(value), data);
        break;
    case DType::F32:
        store(static_cast<float>(value), data);
        break;
    case DType::F64:
        store(value, data);
        break;
    case DType::I8:
        store(saturate<std::int8_t>(value), data);
        break;
    case DType::U8:
        store(saturate<std::uint8_t>(value), data);
        break;
    case DType::I32:
        store(saturate<std::int32_t>(value), data);
        break;
    case DType::I64:
        store(saturate<std::int64_t>(value), data);
        break;
    }
}

} // namespace kl::verify
