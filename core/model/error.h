#pragma once
// One error type for everything the engineer gives us (problem files, candidates, options):
// a category a program can branch on, and a location a person can jump to.
#include <stdexcept>
#include <string>

namespace kl {

class Error : public std::runtime_error {
public:
    // category: dotted and stable, e.g. "problem.missing-field", "candidate.bad-directive".
    // file: the file the input came from (may be empty). where: a field path ("inputs[1].dtype")
    // or "line 12". message: what is wrong, in a sentence.
    Error(std::string category, std::string file, std::string where, std::string message);

    const std::string& category() const { return m_category; }
    const std::string& file() const { return m_file; }
    const std::string& where() const { return m_where; }
    const std::string& message() const { return m_message; }

private:
    std::string m_category;
    std::string m_file;
    std::string m_where;
    std::string m_message;
};

} // namespace kl
