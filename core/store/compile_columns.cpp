#include "core/store/compile_columns.h"

#include "core/store/stored_field.h"

#include <cmath>
#include <cstdint>

namespace kl::store {

using nlohmann::json;

namespace {

// The record's own keys, beside the static report's.
constexpr const char* kTelemetry = "telemetry";
constexpr const char* kCompiledAhead = "compiled_ahead_ms";
constexpr const char* kPtx = "ptx";
constexpr const char* kSass = "sass";
constexpr const char* kSassNote = "sass_note";
constexpr const char* kListingsMs = "listings_ms";

// A finite number at `key`; anything else leaves `target` as it is (rows written by older versions
// lack fields).
template <typename T> void readInto(T& target, const json& object, const char* key)
{
    if (const auto value = finiteField(object, key))
        target = static_cast<T>(*value);
}

json packedJson(const PackedText& p)
{
    if (p.plain)
        return *p.plain;
    return { { "deflate_base64", p.deflateBase64 }, { "bytes", p.bytes } };
}

PackedText packedOf(const json& value)
{
    PackedText p;
    if (value.is_string()) {
        p.plain = value.get<std::string>();
    } else if (value.is_object() && value.contains("deflate_base64") && value["deflate_base64"].is_string()
        && value.contains("bytes") && value["bytes"].is_number_unsigned()) {
        p.deflateBase64 = value["deflate_base64"].get<std::string>();
        p.bytes = value["bytes"].get<std::size_t>();
    } else {
        p.damaged = true;
    }
    return p;
}

} // namespace

Telemetry staticTelemetryFromJson(const json& statics)
{
    if (!statics.is_object())
        throw Error("findings.bad-telemetry", {}, "static", "expected an object");
    Telemetry t;
    t.kernel = storedField<std::string>(statics, "kernel").value_or("");
    readInto(t.registers, statics, "registers");
    readInto(t.threadsPerBlock, statics, "threads_per_block");
    readInto(t.staticShared, statics, "static_shared");
    readInto(t.dynamicShared, statics, "dynamic_shared");
    readInto(t.stackFrame, statics, "stack_frame");
    readInto(t.spillStores, statics, "spill_stores");
    readInto(t.spillLoads, statics, "spill_loads");
    readInto(t.blocksPerSm, statics, "blocks_per_sm");
    readInto(t.theoreticalOccupancy, statics, "theoretical_occupancy");
    readInto(t.gridBlocks, statics, "grid_blocks");
    t.occupancyLimiter = storedField<std::string>(statics, "occupancy_limiter").value_or("");
    // Counted in the compiled code with the static report; absent from rows stored before it was.
    if (const auto found = statics.find("tensor_instructions"); found != statics.end() && found->is_object()) {
        lines::TensorInstructions tensor;
        readInto(tensor.count, *found, "count");
        tensor.source = storedField<std::string>(*found, "source").value_or("");
        if (const auto ops = found->find("by_opcode"); ops != found->end() && ops->is_object())
            for (const auto& [opcode, n] : ops->items())
                if (n.is_number_integer())
                    tensor.byOpcode[opcode] = n.get<std::int64_t>();
        t.tensorInstructions = tensor;
    }
    return t;
}

json staticTelemetryJson(const Telemetry& t)
{
    json out {
        { "kernel", t.kernel },
        { "registers", t.registers },
        { "threads_per_block", t.threadsPerBlock },
        { "static_shared", t.staticShared },
        { "dynamic_shared", t.dynamicShared },
        { "stack_frame", t.stackFrame },
        { "spill_stores", t.spillStores },
        { "spill_loads", t.spillLoads },
        { "blocks_per_sm", t.blocksPerSm },
        { "theoretical_occupancy", t.theoreticalOccupancy },
        { "occupancy_limiter", t.occupancyLimiter },
        { "grid_blocks", t.gridBlocks },
    };
    if (t.tensorInstructions)
        out["tensor_instructions"] = { { "count", t.tensorInstructions->count },
            { "source", t.tensorInstructions->source }, { "by_opcode", t.tensorInstructions->byOpcode } };
    return out;
}

json compileColumn(const CompileRecord& c)
{
    json column = c.report.is_object() ? c.report : json::object();
    if (c.statics)
        column[kTelemetry] = staticTelemetryJson(*c.statics);
    if (c.compiledAheadMs)
        column[kCompiledAhead] = *c.compiledAheadMs;
    const StoredListings& l = c.listings;
    if (l.ptx)
        column[kPtx] = packedJson(*l.ptx);
    if (l.sass)
        column[kSass] = packedJson(*l.sass);
    if (!l.sassNote.empty())
        column[kSassNote] = l.sassNote;
    if (l.listingsMs)
        column[kListingsMs] = *l.listingsMs;
    return column.empty() ? json() : column; // nothing compiled: NULL, as before any record
}

CompileRecord compileRecordOf(const json& column, std::vector<Error>* unreadable)
{
    CompileRecord c;
    if (!column.is_object())
        return c;
    c.report = column;
    for (const char* key : { kTelemetry, kCompiledAhead, kPtx, kSass, kSassNote, kListingsMs })
        c.report.erase(key);
    if (const auto found = column.find(kTelemetry); found != column.end() && !found->is_null()) {
        try {
            c.statics = staticTelemetryFromJson(*found);
        } catch (const Error& error) {
            // A row this version cannot read gives no findings; the result itself stands.
            if (unreadable)
                unreadable->push_back(Error(error.category(), {}, "compile_json.telemetry", error.message()));
        }
    }
    c.compiledAheadMs = finiteField(column, kCompiledAhead);
    c.listings.listingsMs = finiteField(column, kListingsMs);
    for (const auto& [key, packed] : { std::pair { kPtx, &c.listings.ptx }, std::pair { kSass, &c.listings.sass } })
        if (const auto found = column.find(key); found != column.end() && !found->is_null())
            *packed = packedOf(*found);
    if (const auto note = column.find(kSassNote); note != column.end() && note->is_string())
        c.listings.sassNote = note->get<std::string>();
    return c;
}

} // namespace kl::store
