#include "core/store/session_owner.h"

#include "core/store/sqlite.h"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace kl::store {

namespace {

std::string hostName()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        return {};
    return name;
}

std::string bootId()
{
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

struct ProcStat {
    bool found = false;
    char state = '?';
    std::string startTicks;
};

// Field 3 (state) and field 22 (starttime) of /proc/PID/stat; the command name in field 2 may hold
// spaces and parentheses, so fields are counted from its last ')'.
ProcStat procStat(std::int64_t pid)
{
    ProcStat stat;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line))
        return stat;
    const auto close = line.rfind(')');
    if (close == std::string::npos)
        return stat;
    std::istringstream fields(line.substr(close + 1));
    std::string field;
    for (int index = 3; fields >> field; ++index) {
        if (index == 3)
            stat.state = field.empty() ? '?' : field[0];
        if (index == 22) {
            stat.startTicks = field;
            stat.found = true;
            break;
        }
    }
    return stat;
}

} // namespace

ProcessIdentity thisProcess()
{
    ProcessIdentity self;
    self.pid = ::getpid();
    self.host = hostName();
    const auto stat = procStat(self.pid);
    const auto boot = bootId();
    if (stat.found && !boot.empty())
        self.start = boot + ":" + stat.startTicks;
    return self;
}

OwnerState ownerState(const ProcessIdentity& owner)
{
    if (owner.pid <= 0 || owner.host.empty() || owner.host != hostName())
        return OwnerState::Unknown;
    if (::kill(static_cast<pid_t>(owner.pid), 0) != 0 && errno == ESRCH)
        return OwnerState::Gone;
    const auto stat = procStat(owner.pid);
    if (!stat.found)
        return OwnerState::Alive; // no /proc to ask: kill() says it exists
    if (stat.state == 'Z' || stat.state == 'X')
        return OwnerState::Gone; // killed, not yet reaped by its parent
    if (!owner.start.empty() && owner.start != bootId() + ":" + stat.startTicks)
        return OwnerState::Gone; // the pid now belongs to another process
    return OwnerState::Alive;
}

ProcessIdentity ownerOf(const Statement& row, int column)
{
    ProcessIdentity owner;
    owner.pid = row.optionalInteger(column).value_or(0);
    owner.host = row.text(column + 1);
    owner.start = row.text(column + 2);
    return owner;
}

} // namespace kl::store
