#include "core/compile/compile_cache.h"

#include "core/model/hash.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace kl {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "KLCC1\n"; // bump when the entry layout or NvrtcInputs::key() changes
constexpr const char* kSuffix = ".klcc";

void put(std::string& out, const std::string& field)
{
    out += std::to_string(field.size());
    out += '\n';
    out += field;
}

// Reads one length-prefixed field; false on anything malformed (a truncated or foreign file).
bool take(const std::string& in, std::size_t& at, std::string& field)
{
    const std::size_t newline = in.find('\n', at);
    if (newline == std::string::npos || newline == at || newline - at > 12)
        return false;
    std::uint64_t length = 0;
    for (std::size_t i = at; i < newline; ++i) {
        if (in[i] < '0' || in[i] > '9')
            return false;
        length = length * 10 + static_cast<std::uint64_t>(in[i] - '0');
    }
    if (length > in.size() - newline - 1)
        return false;
    field.assign(in, newline + 1, static_cast<std::size_t>(length));
    at = newline + 1 + static_cast<std::size_t>(length);
    return true;
}

std::string encode(const std::string& key, const NvrtcOutput& o)
{
    std::string out = kMagic;
    put(out, key);
    put(out, std::to_string(o.status));
    put(out, o.log);
    put(out, o.ptx);
    put(out, o.cubin);
    put(out, std::to_string(o.loweredNames.size()));
    for (const auto& [expression, lowered] : o.loweredNames) {
        put(out, expression);
        put(out, lowered);
    }
    return out;
}

std::optional<NvrtcOutput> decode(const std::string& in, const std::string& expectedKey)
{
    const std::string magic = kMagic;
    if (in.compare(0, magic.size(), magic) != 0)
        return std::nullopt;
    std::size_t at = magic.size();
    std::string key, status, count;
    NvrtcOutput o;
    if (!take(in, at, key) || key != expectedKey || !take(in, at, status) || !take(in, at, o.log)
        || !take(in, at, o.ptx) || !take(in, at, o.cubin) || !take(in, at, count))
        return std::nullopt;
    try {
        o.status = std::stoi(status);
        const unsigned long n = std::stoul(count);
        for (unsigned long i = 0; i < n; ++i) {
            std::string expression, lowered;
            if (!take(in, at, expression) || !take(in, at, lowered))
                return std::nullopt;
            o.loweredNames[expression] = lowered;
        }
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (at != in.size())
        return std::nullopt;
    return o;
}

std::uint64_t sizeOf(const std::string& key, const NvrtcOutput& o)
{
    std::uint64_t bytes = key.size() + o.log.size() + o.ptx.size() + o.cubin.size();
    for (const auto& [e, l] : o.loweredNames)
        bytes += e.size() + l.size();
    return bytes;
}

std::optional<std::string> readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return text.str();
}

} // namespace

std::string NvrtcInputs::key() const
{
    std::string k = "nvrtc " + nvrtcVersion + "\n";
    put(k, programName);
    put(k, source);
    put(k, std::to_string(options.size()));
    for (const auto& o : options)
        put(k, o);
    put(k, std::to_string(headers.size()));
    for (const auto& [name, content] : headers) {
        put(k, name);
        put(k, content);
    }
    put(k, std::to_string(nameExpressions.size()));
    for (const auto& e : nameExpressions)
        put(k, e);
    return k;
}

const char* cacheUseName(CacheUse use)
{
    switch (use) {
    case CacheUse::Off:
        return "off";
    case CacheUse::Miss:
        return "miss";
    case CacheUse::MemoryHit:
        return "memory";
    case CacheUse::DiskHit:
        return "disk";
    }
    return "off";
}

CompileCache::Settings CompileCache::settingsFromEnvironment()
{
    Settings s;
    const char* chosen = std::getenv("KERNELLOOP_COMPILE_CACHE");
    if (chosen && std::string(chosen) == "off") {
        s.enabled = false;
        return s;
    }
    if (chosen && *chosen)
        s.folder = fs::path(chosen);
    else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        s.folder = fs::path(xdg) / "kernelloop" / "compile";
    else if (const char* home = std::getenv("HOME"); home && *home)
        s.folder = fs::path(home) / ".cache" / "kernelloop" / "compile";
    return s;
}

CompileCache::CompileCache(Settings settings)
    : m_settings(std::move(settings))
{
}

bool CompileCache::enabled() const
{
    std::lock_guard lock(m_mutex);
    return m_settings.enabled;
}

CompileCache::Settings CompileCache::settings() const
{
    std::lock_guard lock(m_mutex);
    return m_settings;
}

void CompileCache::reconfigure(Settings settings)
{
    std::lock_guard lock(m_mutex);
    m_settings = std::move(settings);
    m_memory.clear();
    m_order.clear();
    m_memoryBytes = 0;
}

void CompileCache::clearMemory()
{
    std::lock_guard lock(m_mutex);
    m_memory.clear();
    m_order.clear();
    m_memoryBytes = 0;
}

std::optional<NvrtcOutput> CompileCache::lookup(const NvrtcInputs& inputs, CacheUse& use)
{
    std::lock_guard lock(m_mutex);
    use = CacheUse::Off;
    if (!m_settings.enabled)
        return std::nullopt;
    use = CacheUse::Miss;
    const std::string key = inputs.key();
    const std::string hash = contentHash(key);
    if (const auto found = m_memory.find(hash); found != m_memory.end() && found->second.key == key) {
        use = CacheUse::MemoryHit;
        return found->second.output;
    }
    if (!m_settings.folder)
        return std::nullopt;
    const fs::path file = *m_settings.folder / (hash + kSuffix);
    std::error_code ec;
    if (!fs::exists(file, ec))
        return std::nullopt;
    const auto text = readFile(file);
    auto output = text ? decode(*text, key) : std::nullopt;
    if (!output) { // corrupt, truncated or a hash collision: drop it, compile again
        fs::remove(file, ec);
        return std::nullopt;
    }
    fs::last_write_time(file, fs::file_time_type::clock::now(), ec); // recently used: trimmed last
    use = CacheUse::DiskHit;
    remember(hash, Entry { key, *output, sizeOf(key, *output) });
    return output;
}

void CompileCache::store(const NvrtcInputs& inputs, const NvrtcOutput& output)
{
    std::lock_guard lock(m_mutex);
    if (!m_settings.enabled)
        return;
    const std::string key = inputs.key();
    const std::string hash = contentHash(key);
    remember(hash, Entry { key, output, sizeOf(key, output) });
    if (!m_settings.folder)
        return;
    // Written beside the entry and renamed over it: another process never reads half an entry.
    std::error_code ec;
    fs::create_directories(*m_settings.folder, ec);
    static thread_local std::mt19937_64 random { std::random_device {}() };
    const fs::path target = *m_settings.folder / (hash + kSuffix);
    const fs::path temporary = *m_settings.folder / (hash + ".tmp" + std::to_string(random()));
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            return; // a read-only or missing folder: the memory level still works
        out << encode(key, output);
        if (!out) {
            out.close();
            fs::remove(temporary, ec);
            return;
        }
    }
    fs::rename(temporary, target, ec);
    if (ec)
        fs::remove(temporary, ec);
    trimFolder();
}

void CompileCache::remember(const std::string& hash, Entry entry)
{
    if (entry.bytes > m_settings.memoryCapBytes)
        return;
    if (const auto old = m_memory.find(hash); old != m_memory.end()) {
        m_memoryBytes -= old->second.bytes;
        m_memory.erase(old);
        m_order.erase(std::remove(m_order.begin(), m_order.end(), hash), m_order.end());
    }
    m_memoryBytes += entry.bytes;
    m_memory.emplace(hash, std::move(entry));
    m_order.push_back(hash);
    while (m_memoryBytes > m_settings.memoryCapBytes && !m_order.empty()) {
        const auto oldest = m_memory.find(m_order.front());
        m_memoryBytes -= oldest->second.bytes;
        m_memory.erase(oldest);
        m_order.erase(m_order.begin());
    }
}

void CompileCache::trimFolder()
{
    struct File {
        fs::path path;
        fs::file_time_type time;
        std::uint64_t bytes;
    };
    std::vector<File> files;
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(*m_settings.folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != kSuffix)
            continue;
        std::error_code e;
        const auto bytes = it->file_size(e);
        const auto time = it->last_write_time(e);
        if (e)
            continue;
        files.push_back({ it->path(), time, bytes });
        total += bytes;
    }
    if (total <= m_settings.folderCapBytes)
        return;
    // Down to 80% of the cap, so that the next stores do not each walk the folder and delete one.
    std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.time < b.time; });
    for (const File& f : files) {
        if (total <= m_settings.folderCapBytes / 5 * 4)
            break;
        if (fs::remove(f.path, ec))
            total -= f.bytes;
    }
}

CompileCache& compileCache()
{
    static CompileCache cache(CompileCache::settingsFromEnvironment());
    return cache;
}

} // namespace kl
