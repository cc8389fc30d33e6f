#pragma once
// The last door before exported bytes leave: every string of an exported JSON value passes the key
// redactor (core/llm/redaction.h), so a key that reached the store anyway (an older file, a reply that
// echoed it in a form the client did not know, an engineer's note) is written as [redacted]. Keys the
// caller knows (the values of the key variables it was given) are replaced in every form; anything
// credential-shaped (an Authorization field, a bearer token, a URL's userinfo) is replaced too.
#include "core/llm/redaction.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kl::fieldformats {

// Insertion order kept: a Definition's inputs are positional (its reference's run(...) takes them in
// the order written), and people read the files.
using Json = nlohmann::ordered_json;

struct ExportSecrets {
    std::vector<std::string> keys; // known secrets, each replaced in every form it can take
};

class ExportRedactor {
public:
    explicit ExportRedactor(const ExportSecrets& secrets);
    std::string text(const std::string& text) const;
    // Every string in `value`, keys of objects included, redacted in place.
    void redact(Json& value) const;

private:
    SecretRedactor m_redactor;
};

} // namespace kl::fieldformats
