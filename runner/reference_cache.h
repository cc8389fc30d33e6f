#pragma once
// The reference's outputs kept between jobs. A tuning loop sends every candidate with the same
// reference, sizes and seed, so every job after the first would compute the very same expected
// outputs again (most of a verification: docs/measurements.md, 2026-12-02 07:27Z). The runner keeps them
// per (reference, case, seed) in device memory and restores them into the reference's output buffers
// (a device-to-device copy) instead of running the reference; a restored copy must match the
// checksum taken when it was stored, else it is dropped and the reference runs.
//
// Why device memory (docs/measurements.md, 2026-12-02 07:27Z): page-locked host memory is visible to
// the device, and CUPTI's kernel replay saved and restored it with every profiled launch (the profile
// phase became several times slower); pageable host memory costs a copy back every job; device memory
// leaves the replay as it was (its save/restore there is fast).
//
// The key names everything the reference's outputs depend on: the reference itself (the cubin's
// hash and size, or the PyTorch reference's source, file name and scalars), every buffer of the
// case (name, role, dtype, rows, row length and stride, distribution), the shapes a Python
// reference sees, the reference's program (scratch and every launch: kernel, grid, block, shared
// memory, arguments) and the trial's seed. The candidate, the baseline, the tolerances and the
// timing options are not in it: they do not change what the reference computes. No CUDA here: the
// key and the bookkeeping are tested on the CPU (tests/runner/test_reference_cache.cpp).
#include "core/protocol/messages.h"

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <utility>

namespace kl::runner {

std::string referenceCacheKey(
    const protocol::EvaluateRequest& request, const protocol::Case& testCase, std::uint64_t seed);

// $KL_RUNNER_REFERENCE_CACHE_MB (0: off), default 1024 MiB; the runner also keeps it under an eighth
// of the device's free memory when the cache is in device memory.
std::size_t referenceCacheCapacity();
// $KL_RUNNER_REFERENCE_CACHE_PAGEABLE=1: pageable host memory instead of device memory.
bool referenceCacheOnDevice();

// Least recently used entries go first when the bytes would pass the capacity. An entry larger
// than the whole capacity is not kept.
template <class Entry> class ByteBoundedCache {
public:
    explicit ByteBoundedCache(std::size_t capacityBytes)
        : m_capacity(capacityBytes)
    {
    }

    std::size_t capacity() const { return m_capacity; }
    std::size_t bytes() const { return m_bytes; }
    std::size_t size() const { return m_index.size(); }
    bool enabled() const { return m_capacity > 0; }

    // The entry, now the most recently used; null when absent.
    Entry* find(const std::string& key)
    {
        const auto it = m_index.find(key);
        if (it == m_index.end())
            return nullptr;
        m_order.splice(m_order.begin(), m_order, it->second);
        return &it->second->entry;
    }

    // True when kept (replacing an entry of the same key).
    bool insert(const std::string& key, Entry entry, std::size_t entryBytes)
    {
        erase(key);
        if (entryBytes > m_capacity)
            return false;
        while (m_bytes + entryBytes > m_capacity && !m_order.empty())
            erase(m_order.back().key);
        m_order.push_front(Slot { key, std::move(entry), entryBytes });
        m_index[key] = m_order.begin();
        m_bytes += entryBytes;
        return true;
    }

    void clear()
    {
        m_order.clear();
        m_index.clear();
        m_bytes = 0;
    }
    void erase(const std::string& key)
    {
        const auto it = m_index.find(key);
        if (it == m_index.end())
            return;
        m_bytes -= it->second->bytes;
        m_order.erase(it->second);
        m_index.erase(it);
    }

private:
    struct Slot {
        std::string key;
        Entry entry;
        std::size_t bytes = 0;
    };
    std::size_t m_capacity = 0;
    std::size_t m_bytes = 0;
    std::list<Slot> m_order; // most recently used first
    std::map<std::string, typename std::list<Slot>::iterator> m_index;
};

} // namespace kl::runner
