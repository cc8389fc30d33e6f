#pragma once
// The environment every child process gets (the runner, the Python helpers, the reference worker they
// start): this process's, less the variables that hold secrets. An API key lives only in the process that
// talks to the endpoint; a candidate's code, a KernelBench file or a runner on another host never sees it.
// Secret variables are those the key loader was told to read (--key-env: core/llm/api_key.cpp), and those
// whose names say they are one (..._API_KEY, ..._TOKEN, ..._SECRET, ..._PASSWORD, ACCESS_KEY...).
#include <string>
#include <vector>

namespace kl {

// `name` holds a secret: no child gets it. Thread-safe; for the whole process.
void markSecretVariable(const std::string& name);
bool isSecretVariable(const std::string& name);

// NAME=VALUE for every variable of this process's environment that is not secret, read now.
std::vector<std::string> childEnvironment();

// The same as pointers for execve/posix_spawn: valid while `strings` lives; null-terminated.
std::vector<char*> environmentPointers(std::vector<std::string>& strings);

} // namespace kl
