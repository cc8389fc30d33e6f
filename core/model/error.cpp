#include "core/model/error.h"

namespace kl {

namespace {
std::string format(const std::string& file, const std::string& where, const std::string& message)
{
    std::string text;
    if (!file.empty())
        text += file + ": ";
    if (!where.empty())
        text += where + ": ";
    return text + message;
}
} // namespace

Error::Error(std::string category, std::string file, std::string where, std::string message)
    : std::runtime_error(format(file, where, message))
    , m_category(std::move(category))
    , m_file(std::move(file))
    , m_where(std::move(where))
    , m_message(std::move(message))
{
}

} // namespace kl
