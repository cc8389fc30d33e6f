#pragma once
// A live LLM review session against the replay server over loopback, for the GUI tests that look at
// the window while a proposal waits: every reply the recorded kernel as a distinct variant, streamed
// when asked, with a plan of `planSentences` sentences in front (a long plan wraps to many lines).
#include "core/session/session_recipe.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <QString>

#include <nlohmann/json.hpp>

#include <string>

namespace kl::test {

inline void serveVariants(test::ReplayServer& server, int planSentences)
{
    server.route("/v1/chat/completions", [planSentences](const test::SeenRequest& r, int n) {
        auto text = test::fixture("replies/ok_vectorised.md");
        text.insert(text.find("```cuda\n") + 8, "// variant " + std::to_string(n) + "\n");
        if (planSentences > 0) {
            std::string plan = "Plan:";
            for (int i = 0; i < planSentences; ++i)
                plan += " keep the row in registers and load it with 16-byte vectors, sentence " + std::to_string(i)
                    + ".";
            text = plan + "\n\n" + text;
        }
        const test::ReplyUsage usage { std::int64_t(r.body.size() / 4), 700 };
        test::Reply out;
        if (nlohmann::json::parse(r.body).value("stream", false)) {
            out.contentType = "text/event-stream";
            out.body = test::openAiStream({ test::tokenPieces(text) }, "replay", usage);
            out.chunked = true;
            out.chunkSize = 256;
        } else {
            out.body = test::openAiCompletion({ text }, "replay", usage);
        }
        return out;
    });
}

// The bundled LayerNorm+GELU example in review mode: three rounds of the single-role LLM proposer.
inline session::SessionRecipe reviewRecipe(const QString& db, const test::ReplayServer& server)
{
    session::SessionRecipe r;
    r.problem = KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json";
    r.db = db.toStdString();
    r.runner = KL_MODEL_RUNNER;
    r.metrics = "none";
    r.patience = 0;
    r.trials = 1;
    r.budget = 3;
    r.proposer = session::ProposerChoice::Llm;
    r.mode = LoopMode::Review;
    r.llm.baseUrl = server.url("/v1");
    r.llm.model = "replay";
    r.llm.roles = "single";
    r.llm.keyEnv = "KL_TEST_LLM_KEY";
    return r;
}

} // namespace kl::test
