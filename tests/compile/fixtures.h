#pragma once
// Locating and reading the committed fixtures of tests/fixtures/compile.
#include <QString>

#include <fstream>
#include <sstream>
#include <string>

namespace kl::test {

inline std::string compileFixturePath(const QString& relative)
{
    return std::string(KL_SOURCE_DIR) + "/tests/fixtures/compile/" + relative.toStdString();
}

inline std::string examplePath(const char* example)
{
    return std::string(KL_SOURCE_DIR) + "/resources/examples/" + example + "/problem.json";
}

inline std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline std::string readCompileFixture(const QString& relative) { return readFile(compileFixturePath(relative)); }

} // namespace kl::test
