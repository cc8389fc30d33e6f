#include "core/lines/sass_disassembly.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kl::lines {

namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& path)
{
    std::error_code error;
    return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

std::string fileText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The last line of the tool's complaint, for a one-line reason.
std::string lastLine(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    const auto newline = text.rfind('\n');
    return newline == std::string::npos ? text : text.substr(newline + 1);
}

} // namespace

std::optional<fs::path> nvdisasmPath()
{
    if (const char* chosen = std::getenv("KL_NVDISASM"); chosen && *chosen) {
        if (std::string_view(chosen) == "off" || !executable(chosen))
            return std::nullopt;
        return fs::path(chosen);
    }
    std::vector<fs::path> places;
    if (const char* path = std::getenv("PATH")) {
        std::string_view rest(path);
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            const auto folder = rest.substr(0, colon);
            if (!folder.empty())
                places.push_back(fs::path(folder) / "nvdisasm");
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
    }
    if (const char* cuda = std::getenv("CUDA_HOME"); cuda && *cuda)
        places.push_back(fs::path(cuda) / "bin" / "nvdisasm");
    places.push_back("/usr/local/cuda/bin/nvdisasm");
    for (const auto& place : places)
        if (executable(place))
            return place;
    return std::nullopt;
}

Disassembly disassembleCubin(const std::string& cubin, std::chrono::milliseconds limit)
{
    Disassembly d;
    const auto started = std::chrono::steady_clock::now();
    if (cubin.empty()) {
        d.problem = "no cubin";
        return d;
    }
    const auto tool = nvdisasmPath();
    if (!tool) {
        d.problem = "nvdisasm not found (KL_NVDISASM, PATH, CUDA_HOME/bin, /usr/local/cuda/bin)";
        return d;
    }
    std::string pattern = (fs::temp_directory_path() / "kl-sass-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) {
        d.problem = std::string("cannot make a temporary folder: ") + std::strerror(errno);
        return d;
    }
    const fs::path dir(buffer.data());
    const auto cubinFile = dir / "kernel.cubin", outFile = dir / "sass.txt", errFile = dir / "stderr.txt";
    {
        std::ofstream out(cubinFile, std::ios::binary);
        out << cubin;
    }
    const std::string toolText = tool->string(), cubinText = cubinFile.string();
    const std::string cannotRun = "cannot run " + toolText + ": "; // no allocation after fork
    const pid_t pid = fork();
    if (pid == 0) {
        const int out = open(outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int null = open("/dev/null", O_RDONLY);
        if (out >= 0)
            dup2(out, 1);
        if (err >= 0)
            dup2(err, 2);
        if (null >= 0)
            dup2(null, 0);
        setpgid(0, 0);
        // A listing is for reading later: on a busy host the loop's compiles and the runner come first.
        if (setpriority(PRIO_PROCESS, 0, 10) != 0) { }
        const char* argv[] = { toolText.c_str(), "-g", cubinText.c_str(), nullptr };
        execv(argv[0], const_cast<char* const*>(argv));
        const char* why = std::strerror(errno);
        if (write(2, cannotRun.data(), cannotRun.size()) < 0 || write(2, why, std::strlen(why)) < 0) { }
        _exit(127);
    }
    int status = 0;
    bool timedOut = false;
    if (pid > 0) {
        while (waitpid(pid, &status, WNOHANG) != pid) {
            if (std::chrono::steady_clock::now() - started > limit) {
                timedOut = true;
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    const int exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (pid < 0)
        d.problem = std::string("fork failed: ") + std::strerror(errno);
    else if (timedOut)
        d.problem = "nvdisasm ran past " + std::to_string(limit.count()) + " ms";
    else if (exitStatus != 0)
        d.problem = "nvdisasm failed (exit " + std::to_string(exitStatus) + "): " + lastLine(fileText(errFile));
    else
        d.text = codeSections(fileText(outFile));
    if (d.problem.empty() && d.text.find(".text.") == std::string::npos) {
        d.problem = "nvdisasm printed no code section";
        d.text.clear();
    }
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    d.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return d;
}

std::string codeSections(const std::string& nvdisasmText)
{
    // nvdisasm heads each section with "//--------------------- NAME ----...".
    std::string out;
    bool keep = true; // the header before the first section (.target, .elftype)
    std::istringstream in(nvdisasmText);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("//-----", 0) == 0) {
            const auto name = line.find_first_not_of("- /");
            keep = name != std::string::npos && line.compare(name, 6, ".text.") == 0;
        }
        if (keep)
            out += line + '\n';
    }
    return out;
}

} // namespace kl::lines
