#pragma once
// Copies one session, and every row that hangs off it, between two store databases of the
// current schema: the store to an export file, and an import file to the store. Rows get new
// ids in the target; content-addressed rows (problems, sources, cache entries) are shared.
#include <cstdint>
#include <string>

namespace kl::store {

class Database;

// Runs inside the caller's write transaction on `to` and returns the session's id there.
// Rows that do not hold together (a reference to a row not copied, a JSON column that does not
// parse, a content hash that does not match its text, a broken constraint) throw kl::Error with
// `badRowCategory`, naming the table and row; a field that is not of its column's kind (text or an
// infinity in a number column, a negative time) throws `badValueCategory`, naming table, row and column.
std::int64_t copySession(Database& from, std::int64_t sessionId, Database& to, const std::string& badRowCategory,
    const std::string& badValueCategory);

} // namespace kl::store
