// kl-llm-replay: a local stand-in for an LLM endpoint that replays a recorded scenario, so that the
// LLM proposer runs end to end on a machine without internet (the GPU test machine) and in CI.
//
//   kl-llm-replay --scenario FILE [--port N] [--port-file PATH] [--log PATH]
//
// It listens on 127.0.0.1 (port 0, the default, picks a free one), prints
// "listening on http://127.0.0.1:PORT" on stdout, writes PORT to --port-file if given, and serves
// until SIGINT or SIGTERM:
//   POST /v1/chat/completions  OpenAI-compatible (base URL http://127.0.0.1:PORT/v1)
//   POST /v1/messages          Anthropic (base URL http://127.0.0.1:PORT)
// Any other path answers 404 with a JSON error, as the real services do.
//
// The scenario file (JSON):
//   { "routes": [
//       { "when": "Your role is the planner", "replies": ["planner_1.md", "planner_2.md"],
//         "exhausted": "I have no further ideas for this kernel." },
//       ... ] }
// A request is answered by the first route whose `when` occurs in its system prompt (OpenAI: the
// messages with role "system"; Anthropic: the top-level "system"); an empty `when` matches every
// request, and a request no route matches gets HTTP 400. A route's replies (Markdown files, paths
// relative to the scenario file) are served in order, one per request, or the next n for an
// OpenAI request with "n": n; once they are used up the route answers with its `exhausted` text
// (a reply without code; the default is "I have no further ideas for this kernel.").
// `"stream": true` gets server-sent events cut into small writes (OpenAI: chat.completion.chunk
// events, a usage chunk when stream_options.include_usage, then "data: [DONE]"; Anthropic:
// message_start ... message_stop); otherwise one JSON body. The reply names the model the request
// asked for; usage is estimated as 4 bytes per token (request body in, reply text out).
//
// --log PATH appends one line per request (which route, which reply files); without it the
// lines go to stderr.
//
// --fail-first N answers the first N requests with endpoint faults before replaying anything:
// HTTP 500 and a 200 whose body is not JSON, in turn, as a flaky gateway does. The loop must treat
// them as failed proposer rounds, not as rounds without gain (the GPU check runs it so).
#include "replay_bodies.h"
#include "replay_server.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <pthread.h>

namespace fs = std::filesystem;
using kl::test::Reply;
using kl::test::SeenRequest;
using nlohmann::json;

namespace {

const std::string kDefaultExhausted = "I have no further ideas for this kernel.";

struct ReplyFile {
    std::string name; // as the scenario names it
    std::string text;
};

struct Route {
    std::string when;
    std::vector<ReplyFile> replies;
    std::string exhausted;
    std::size_t next = 0; // the reply the next request gets
};

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<Route> loadScenario(const fs::path& file)
{
    const json scenario = json::parse(readText(file));
    if (!scenario.is_object() || !scenario.contains("routes") || !scenario["routes"].is_array())
        throw std::runtime_error(file.string() + ": expected an object with a \"routes\" array");
    std::vector<Route> routes;
    for (const auto& r : scenario["routes"]) {
        const auto where = file.string() + ": routes[" + std::to_string(routes.size()) + "]";
        if (!r.is_object() || !r.contains("when") || !r["when"].is_string())
            throw std::runtime_error(where + ": \"when\" must be a string");
        Route route;
        route.when = r["when"].get<std::string>();
        route.exhausted = r.value("exhausted", kDefaultExhausted);
        for (const auto& name : r.value("replies", json::array())) {
            if (!name.is_string())
                throw std::runtime_error(where + ": \"replies\" must list file names");
            const auto path = file.parent_path() / name.get<std::string>();
            route.replies.push_back({ name.get<std::string>(), readText(path) });
        }
        for (const auto& [key, value] : r.items())
            if (key != "when" && key != "replies" && key != "exhausted" && key.rfind('_', 0) != 0)
                throw std::runtime_error(where + ": unknown field \"" + key + "\"");
        routes.push_back(std::move(route));
    }
    if (routes.empty())
        throw std::runtime_error(file.string() + ": no routes");
    return routes;
}

// Text of a string or of a list of {"type": "text", "text": ...} blocks.
std::string textOf(const json& content)
{
    if (content.is_string())
        return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const auto& block : content)
            if (block.is_object() && block.value("type", "") == "text")
                text += block.value("text", "");
    return text;
}

std::string now()
{
    char text[32];
    const std::time_t t = std::time(nullptr);
    std::tm parts {};
    gmtime_r(&t, &parts);
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

enum class Protocol { OpenAi, Anthropic };

class ScenarioReplay {
public:
    ScenarioReplay(std::vector<Route> routes, std::ostream& log)
        : m_routes(std::move(routes))
        , m_log(log)
    {
    }

    Reply answer(const SeenRequest& request, Protocol protocol)
    {
        const bool openAi = protocol == Protocol::OpenAi;
        const json body = json::parse(request.body, nullptr, false);
        if (body.is_discarded() || !body.is_object() || !body.contains("messages"))
            return error(protocol, 400, "the request body is not a JSON object with \"messages\"");
        std::string system;
        if (openAi) {
            for (const auto& m : body["messages"])
                if (m.is_object() && (m.value("role", "") == "system" || m.value("role", "") == "developer"))
                    system += textOf(m.value("content", json()));
        } else {
            system = textOf(body.value("system", json()));
        }
        const std::string model = body.value("model", "replay");
        const bool stream = body.value("stream", false);
        const int n = openAi ? std::max(1, body.value("n", 1)) : 1;

        std::vector<std::string> texts, names;
        std::size_t routeIndex = 0;
        {
            std::lock_guard lock(m_mutex);
            for (; routeIndex < m_routes.size(); ++routeIndex)
                if (system.find(m_routes[routeIndex].when) != std::string::npos)
                    break;
            if (routeIndex == m_routes.size()) {
                logLine(request.path + " no route matches the system prompt: \"" + system.substr(0, 80) + "\"");
                return error(protocol, 400,
                    "no scenario route matches the system prompt (it starts \"" + system.substr(0, 80) + "\")");
            }
            auto& route = m_routes[routeIndex];
            for (int i = 0; i < n; ++i) {
                if (route.next < route.replies.size()) {
                    texts.push_back(route.replies[route.next].text);
                    names.push_back(route.replies[route.next].name);
                    ++route.next;
                } else {
                    texts.push_back(route.exhausted);
                    names.emplace_back("(exhausted)");
                }
            }
        }
        std::size_t replyBytes = 0;
        for (const auto& t : texts)
            replyBytes += t.size();
        const kl::test::ReplyUsage usage { std::max<std::int64_t>(1, std::int64_t(request.body.size() / 4)),
            std::max<std::int64_t>(1, std::int64_t(replyBytes / 4)) };
        std::string list;
        for (const auto& name : names)
            list += (list.empty() ? "" : ",") + name;
        logLine(request.path + " route " + std::to_string(routeIndex) + " (\"" + m_routes[routeIndex].when + "\") -> "
            + list + (stream ? " stream" : " whole") + " prompt_tokens=" + std::to_string(usage.promptTokens)
            + " completion_tokens=" + std::to_string(usage.completionTokens));

        Reply reply;
        if (!stream) {
            reply.body = openAi ? kl::test::openAiCompletion(texts, model, usage)
                                : kl::test::anthropicMessage(texts.front(), model, usage);
            return reply;
        }
        if (openAi) {
            std::vector<std::vector<std::string>> pieces;
            for (const auto& t : texts)
                pieces.push_back(kl::test::tokenPieces(t));
            const bool wantsUsage = body.contains("stream_options") && body["stream_options"].is_object()
                && body["stream_options"].value("include_usage", false);
            reply.body = kl::test::openAiStream(pieces, model, wantsUsage ? std::optional(usage) : std::nullopt);
        } else {
            reply.body = kl::test::anthropicStream(kl::test::tokenPieces(texts.front()), model, usage);
        }
        reply.contentType = "text/event-stream";
        reply.headers = { { "Cache-Control", "no-cache" } };
        reply.chunked = true;
        // Small, uneven writes first (events and "data:" cut apart), then a few hundred bytes at a time.
        static const std::size_t sizes[] = { 1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31 };
        for (int i = 0; i < 96; ++i)
            reply.firstPieces.push_back(sizes[i % 12]);
        reply.chunkSize = 509;
        return reply;
    }

    int requests() const
    {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }

private:
    static Reply error(Protocol protocol, int status, const std::string& message)
    {
        Reply reply;
        reply.status = status;
        reply.body = protocol == Protocol::OpenAi ? kl::test::openAiError(message, "invalid_request_error")
                                                  : kl::test::anthropicError(message, "invalid_request_error");
        return reply;
    }

    void logLine(const std::string& line)
    {
        std::lock_guard lock(m_logMutex);
        ++m_requests;
        m_log << now() << " " << line << std::endl;
    }

    std::vector<Route> m_routes;
    mutable std::mutex m_mutex; // the routes' positions
    std::mutex m_logMutex;
    std::ostream& m_log;
    int m_requests = 0;
};

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Replays a recorded LLM scenario over the OpenAI-compatible and Anthropic APIs on 127.0.0.1" };
    std::string scenarioPath, portFile, logPath;
    int port = 0;
    int failFirst = 0;
    app.add_option("--scenario", scenarioPath, "the scenario file (JSON)")->required()->check(CLI::ExistingFile);
    app.add_option("--port", port, "the port to listen on; 0 picks a free one")->check(CLI::Range(0, 65535));
    app.add_option("--port-file", portFile, "write the port to this file once listening");
    app.add_option("--log", logPath, "append one line per request to this file (default: stderr)");
    app.add_option("--fail-first", failFirst, "answer the first N requests with HTTP 500 / a non-JSON body, in turn")
        ->check(CLI::Range(0, 1000));
    CLI11_PARSE(app, argc, argv);

    std::vector<Route> routes;
    try {
        routes = loadScenario(scenarioPath);
    } catch (const std::exception& e) {
        std::cerr << "kl-llm-replay: " << e.what() << "\n";
        return 1;
    }
    std::ofstream logFile;
    if (!logPath.empty()) {
        logFile.open(logPath, std::ios::app);
        if (!logFile) {
            std::cerr << "kl-llm-replay: cannot write " << logPath << "\n";
            return 1;
        }
    }
    std::ostream& log = logPath.empty() ? std::cerr : logFile;

    // The server's threads inherit this mask, so the signals reach sigwait below and nothing else.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN); // a client that hangs up mid-stream must not end the server

    ScenarioReplay replay(std::move(routes), log);
    std::unique_ptr<kl::test::ReplayServer> server;
    try {
        server = std::make_unique<kl::test::ReplayServer>(port);
    } catch (const std::exception& e) {
        std::cerr << "kl-llm-replay: " << e.what() << "\n";
        return 2;
    }
    std::mutex faultMutex;
    int faultsServed = 0;
    // A fault instead of the replay while any of the first N are left; the replay's positions stay put.
    auto fault = [&]() -> std::optional<Reply> {
        std::lock_guard lock(faultMutex);
        if (faultsServed >= failFirst)
            return std::nullopt;
        Reply reply;
        if (faultsServed++ % 2 == 0) {
            reply.status = 500;
            reply.body = R"({"error":{"message":"replay: injected server error","type":"server_error"}})";
        } else {
            reply.body = "<html><body>502 Bad Gateway (replay: injected non-JSON body)</body></html>";
        }
        log << "fault " << faultsServed << " of " << failFirst << ": "
            << (reply.status == 500 ? "HTTP 500" : "non-JSON body") << std::endl;
        return reply;
    };
    server->route("/v1/chat/completions", [&](const SeenRequest& r, int) {
        if (auto f = fault())
            return *f;
        return replay.answer(r, Protocol::OpenAi);
    });
    server->route("/v1/messages", [&](const SeenRequest& r, int) {
        if (auto f = fault())
            return *f;
        return replay.answer(r, Protocol::Anthropic);
    });

    if (!portFile.empty()) {
        // Written whole, then renamed: a reader never sees a half-written file.
        const std::string partial = portFile + ".partial";
        std::ofstream(partial) << server->port() << "\n";
        std::error_code error;
        fs::rename(partial, portFile, error);
        if (error) {
            std::cerr << "kl-llm-replay: cannot write " << portFile << ": " << error.message() << "\n";
            return 1;
        }
    }
    std::cout << "listening on " << server->url() << std::endl;

    int received = 0;
    sigwait(&stopSignals, &received);
    server.reset();
    std::cerr << "kl-llm-replay: stopped by " << (received == SIGINT ? "SIGINT" : "SIGTERM") << " after "
              << replay.requests() << " requests\n";
    return 0;
}
