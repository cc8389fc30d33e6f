#include "core/model/input_file.h"

#include "core/model/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kl {

namespace {

std::string whyUnreadable(int error)
{
    switch (error) {
    case ENOENT:
        return "no such file";
    case ENOTDIR:
        return "a folder in the path is not a folder";
    case ENAMETOOLONG:
        return "the file name is too long";
    case ELOOP:
        return "too many levels of symbolic links (a symlink loop?)";
    case EACCES:
    case EPERM:
        return "permission denied";
    default:
        return std::string("cannot open the file: ") + std::strerror(error);
    }
}

std::string typeName(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

struct Descriptor {
    int fd = -1;
    ~Descriptor()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

} // namespace

std::string readInputFile(const std::filesystem::path& path, std::size_t limit, const std::string& kind)
{
    const std::string& name = path.native();
    if (name.empty())
        throw Error(kind + ".unreadable", name, {}, "no file name given");
    if (name.find('\0') != std::string::npos)
        throw Error(kind + ".unreadable", name.substr(0, name.find('\0')), {}, "the file name contains a NUL byte");
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    Descriptor file { ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) };
    if (file.fd < 0)
        throw Error(kind + ".unreadable", name, {}, whyUnreadable(errno));
    struct stat info { };
    if (::fstat(file.fd, &info) != 0)
        throw Error(kind + ".unreadable", name, {}, whyUnreadable(errno));
    if (!S_ISREG(info.st_mode))
        throw Error(kind + ".not-a-file", name, {}, "is " + typeName(info.st_mode) + ", not a regular file");
    if (static_cast<std::uintmax_t>(info.st_size) > limit)
        throw Error(kind + ".too-large", name, {},
            "the file is " + std::to_string(info.st_size) + " bytes; the limit is " + std::to_string(limit));
    // Read one byte past the limit, so a file that grows while we read is still refused.
    std::string text(static_cast<std::size_t>(info.st_size) + 1, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const auto n = ::read(file.fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(kind + ".unreadable", name, {}, std::string("cannot read the file: ") + std::strerror(errno));
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
        if (got > limit)
            throw Error(kind + ".too-large", name, {}, "the file is larger than " + std::to_string(limit) + " bytes");
        if (got == text.size())
            text.resize(std::min(limit + 1, text.size() * 2));
    }
    text.resize(got);
    return text;
}

} // namespace kl
