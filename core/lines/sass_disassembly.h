#pragma once
// The SASS of a compiled candidate, from the CUDA toolkit's nvdisasm run on its cubin as a child
// process (core links no CUDA library; the tool is optional: the CI machine has none, the H200 one
// has it). What the loop stores beside the PTX so that the SASS pane can show each iteration's code.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace kl::lines {

// $KL_NVDISASM (a path, or "off" for none), else nvdisasm on $PATH, in $CUDA_HOME/bin or
// /usr/local/cuda/bin; nullopt when there is none.
std::optional<std::filesystem::path> nvdisasmPath();

struct Disassembly {
    std::string text; // `nvdisasm -g` cut to its code sections (codeSections); empty when it failed
    std::string problem; // why there is no text: "nvdisasm not found", "nvdisasm failed: ...", ...
    double millis = 0.0;
};

// Never throws; a tool that runs past `limit` is killed.
Disassembly disassembleCubin(const std::string& cubin, std::chrono::milliseconds limit = std::chrono::seconds(20));

// The header and the .text.* sections of an `nvdisasm -g` listing: what parseSass reads. The rest
// (debug sections printed as .byte rows, notes, symbols) is most of the text and nothing to read.
std::string codeSections(const std::string& nvdisasmText);

} // namespace kl::lines
