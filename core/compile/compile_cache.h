#pragma once
// What NVRTC gave for one program, kept so that the same program is not compiled twice. NVRTC runs
// with --no-cache (its own cache skips ptxas, whose -v log is where registers and spills come from),
// so without this every compile costs the full NVRTC + ptxas time (~250 ms for layernorm_gelu). The
// entry keeps the whole log, so a hit yields the same diagnostics and static report as the compile.
//
// Key: every input NVRTC sees (source, program name, options, local headers' names and contents,
// the kernels' name expressions) and the NVRTC version; the entry stores that key text too and a hit
// must match it byte for byte, so a hash collision is a miss, never a wrong cubin.
// Two levels: in memory for the process (capped), and a folder shared by processes (capped by size,
// oldest entries removed first; an unreadable or corrupt entry is a miss and is deleted).
// Folder: $KERNELLOOP_COMPILE_CACHE (a path, or "off" for no cache at all), else
// $XDG_CACHE_HOME/kernelloop/compile, else ~/.cache/kernelloop/compile.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct NvrtcOutput {
    int status = 0; // nvrtcResult of nvrtcCompileProgram
    std::string log, ptx, cubin;
    std::map<std::string, std::string> loweredNames; // name expression → lowered name, where NVRTC gave one
};

// Everything that decides NVRTC's output; key() is its text, hash() names the entry.
struct NvrtcInputs {
    std::string nvrtcVersion;
    std::string programName;
    std::string source;
    std::vector<std::string> options;
    std::vector<std::pair<std::string, std::string>> headers; // name, content
    std::vector<std::string> nameExpressions;
    std::string key() const;
};

enum class CacheUse { Off, Miss, MemoryHit, DiskHit };
const char* cacheUseName(CacheUse use); // "off", "miss", "memory", "disk"

class CompileCache {
public:
    struct Settings {
        std::optional<std::filesystem::path> folder; // none: memory only
        std::uint64_t folderCapBytes = 512ull << 20;
        std::uint64_t memoryCapBytes = 128ull << 20;
        bool enabled = true;
    };
    static Settings settingsFromEnvironment();

    explicit CompileCache(Settings settings);

    bool enabled() const;
    std::optional<NvrtcOutput> lookup(const NvrtcInputs& inputs, CacheUse& use);
    void store(const NvrtcInputs& inputs, const NvrtcOutput& output);

    // For tests and the bench: forget the in-memory entries (the folder stays), or reconfigure.
    void clearMemory();
    void reconfigure(Settings settings);
    Settings settings() const;

private:
    struct Entry {
        std::string key;
        NvrtcOutput output;
        std::uint64_t bytes = 0;
    };
    void remember(const std::string& hash, Entry entry);
    void trimFolder();

    mutable std::mutex m_mutex;
    Settings m_settings;
    std::map<std::string, Entry> m_memory;
    std::vector<std::string> m_order; // insertion order, oldest first
    std::uint64_t m_memoryBytes = 0;
};

// The process's cache, configured from the environment on first use.
CompileCache& compileCache();

} // namespace kl
