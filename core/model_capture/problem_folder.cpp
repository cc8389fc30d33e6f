// model.json read and written as a file; its text is capture_json.cpp's.
#include "core/model_capture/capture_json.h"
#include "core/model_capture/model_folder.h"

#include "core/model/error.h"
#include "core/model/input_file.h"

#include <fstream>

namespace kl::model_capture {

ModelFolder readModelFolder(const std::filesystem::path& dir)
{
    const auto file = dir / "model.json";
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error))
        throw Error("model.not-a-model-folder", dir.string(), {},
            "no model.json here: give the folder kernelloop-cli model wrote");
    return decodeModelFolder(readInputFile(file.string(), 64 * 1024 * 1024, "model"), file.string());
}

void writeModelFolder(const std::filesystem::path& dir, const ModelFolder& folder)
{
    std::ofstream out(dir / "model.json", std::ios::binary);
    out << modelFolderJson(folder);
    if (!out)
        throw Error("model.cannot-write", (dir / "model.json").string(), {}, "cannot write the file");
}

} // namespace kl::model_capture
