#pragma once
// The only place the model capture reads or writes JSON: the helper's requests and replies
// (python/kernelloop/model_capture.py), problem.json for each problem, and model.json. Refusals in a
// reply become kl::Error "model.<category>".
#include "core/model_capture/model_capture.h"
#include "core/model_capture/model_check.h"
#include "core/model_capture/model_folder.h"
#include "core/model_capture/patch_writer.h"
#include "core/model_capture/ranking.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::model_capture {

struct CaptureRequest {
    std::string file; // absolute
    int seed = 0;
    std::optional<bool> evalMode; // none: the file's KL_EVAL, else the mode the model is built in
};

std::string captureRequestJson(const CaptureRequest& request);
std::string problemsRequestJson(
    const CaptureRequest& request, const std::string& method, const std::vector<ProblemGroup>& groups);
std::string checkRequestJson(const CheckRequest& request);

// `file` names the model in errors. Throws "model.<category>" for a refusal, "model.helper-died" for a
// reply that is not one.
Capture decodeCapture(const std::string& reply, const std::string& file);
ProblemsReply decodeProblems(const std::string& reply, const std::string& file);
ModelCheckReport decodeCheck(const std::string& reply, const std::string& file);

// problem.json for one problem at the model's shapes (one size set).
std::string problemJson(const ProblemDraft& draft, const ProblemGroup& group, const Capture& capture);

std::string modelFolderJson(const ModelFolder& folder);
// A Python string literal holding `text` (a JSON string literal is one).
std::string pythonStringLiteral(const std::string& text);
ModelFolder decodeModelFolder(const std::string& text, const std::string& file);

} // namespace kl::model_capture
