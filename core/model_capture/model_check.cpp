#include "core/model_capture/model_check.h"

#include "core/model/error.h"
#include "core/model_capture/capture_json.h"
#include "core/model_capture/capture_run.h"

#include <filesystem>

namespace kl::model_capture {

ModelCheckReport checkPatchedModel(const CheckRequest& request, int timeoutSeconds)
{
    namespace fs = std::filesystem;
    if (!fs::is_regular_file(request.file))
        throw Error("model.no-file", request.file, {}, "no such file");
    if (!fs::is_regular_file(request.patch))
        throw Error("model.no-patch", request.patch, {}, "no such patch (kernelloop-cli model-patch writes one)");
    if (request.batch && (*request.batch < 1 || *request.batch > 1 << 20))
        throw Error("model.bad-option", request.file, "--batch", "give 1 to 2^20");
    CheckRequest absolute = request;
    absolute.file = fs::absolute(request.file).string();
    absolute.patch = fs::absolute(request.patch).string();
    return decodeCheck(runModelHelper(checkRequestJson(absolute), request.file, timeoutSeconds), request.file);
}

} // namespace kl::model_capture
