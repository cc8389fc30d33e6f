#include "core/store/store_location.h"

#include <cstdlib>

namespace kl::store {

std::filesystem::path storeLocation(const std::string& option)
{
    if (!option.empty())
        return option;
    if (const char* env = std::getenv("KERNELLOOP_DB"); env && *env)
        return env;
    std::filesystem::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::filesystem::path(home) / ".local/share";
    else
        base = std::filesystem::temp_directory_path();
    return base / "kernelloop" / "kernelloop.db";
}

} // namespace kl::store
