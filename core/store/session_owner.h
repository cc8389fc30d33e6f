#pragma once
// The process that owns a running session: recorded when the session is created, so that a later
// open can tell a session still being written from one whose process was killed (kill -9, a power
// cut) and would otherwise say "running" forever. Internal to core/store.
#include <cstdint>
#include <string>

namespace kl::store {

class Statement;

struct ProcessIdentity {
    std::int64_t pid = 0;
    std::string host; // gethostname()
    // When the process started: "BOOT_ID:START_TICKS" from /proc, so that a pid reused by a later
    // process (or after a reboot) is not mistaken for the owner. Empty where /proc is missing.
    std::string start;
};

ProcessIdentity thisProcess();
// The owner stored in a row's three columns from `column` on: pid, host, start (sessions and campaigns).
ProcessIdentity ownerOf(const Statement& row, int column);

enum class OwnerState {
    Alive,
    Gone,
    Unknown, // another host, or no owner recorded (sessions from before schema version 4)
};

OwnerState ownerState(const ProcessIdentity& owner);

} // namespace kl::store
