#pragma once
// The ranking and the chosen problems as the CLI prints them and model writes them to ranking.txt; every
// table says whether its times are an estimate or measured. One text for every front end.
#include "core/model_capture/model_folder.h"

#include <string>

namespace kl::model_capture {

std::string rankingText(const ModelFolder& folder, int maxRows = 20);
std::string problemsText(const ModelFolder& folder);

} // namespace kl::model_capture
