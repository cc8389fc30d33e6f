#include "replay_server.h"

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kl::test {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// How long a held connection waits for releaseHeld() at most, so a failing test cannot hang.
constexpr auto kMaxHold = std::chrono::seconds(20);

} // namespace

struct ReplayServer::State {
    httplib::Server server;
    std::thread thread;
    mutable std::mutex mutex;
    mutable std::condition_variable changed;
    std::vector<SeenRequest> seen;
    std::map<std::string, int> counts;
    std::map<std::string, Handler> handlers;
    std::uint64_t releaseGeneration = 0;

    // Waits until releaseHeld() is called after `generation`, or kMaxHold.
    void hold(std::uint64_t generation)
    {
        std::unique_lock lock(mutex);
        changed.wait_for(lock, kMaxHold, [&] { return releaseGeneration != generation; });
    }
};

std::string SeenRequest::header(const std::string& lowerName) const
{
    const auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
}

ReplayServer::ReplayServer(int port)
    : m_state(std::make_unique<State>())
{
    auto& s = *m_state;
    s.server.set_tcp_nodelay(true);
    s.server.set_keep_alive_max_count(1);
    s.server.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
        auto& st = *m_state;
        SeenRequest seen;
        seen.method = req.method;
        seen.path = req.path;
        for (const auto& [name, value] : req.headers)
            seen.headers.emplace(lower(name), value);
        seen.body = req.body;
        Handler handler;
        int count = 0;
        std::uint64_t generation = 0;
        {
            std::lock_guard lock(st.mutex);
            st.seen.push_back(seen);
            count = ++st.counts[req.path];
            generation = st.releaseGeneration;
            if (const auto it = st.handlers.find(req.path); it != st.handlers.end())
                handler = it->second;
        }
        st.changed.notify_all();
        if (!handler) {
            res.status = 404;
            res.set_content(R"({"error":{"message":"no route in the replay server","type":"invalid_request_error"}})",
                "application/json");
            return;
        }
        auto reply = std::make_shared<Reply>(handler(seen, count));
        res.status = reply->status;
        for (const auto& [name, value] : reply->headers)
            res.set_header(name, value);
        if (!reply->chunked && !reply->holdAfter && !reply->resetAfter) {
            res.set_content(reply->body, reply->contentType.c_str());
            return;
        }
        // Written piece by piece; returning false from the provider drops the connection.
        auto position = std::make_shared<std::size_t>(0);
        auto piece = std::make_shared<std::size_t>(0);
        auto provider = [reply, position, piece, generation, this](std::size_t, httplib::DataSink& sink) {
            const auto& body = reply->body;
            if (reply->holdAfter && *position >= *reply->holdAfter) {
                m_state->hold(generation);
                return false;
            }
            if (reply->resetAfter && *position >= *reply->resetAfter)
                return false;
            if (*position >= body.size()) {
                sink.done();
                return true;
            }
            std::size_t size = *piece < reply->firstPieces.size() ? reply->firstPieces[*piece] : reply->chunkSize;
            if (reply->holdAfter)
                size = std::min(size, *reply->holdAfter - *position);
            if (reply->resetAfter)
                size = std::min(size, *reply->resetAfter - *position);
            size = std::min(size, body.size() - *position);
            if (!sink.write(body.data() + *position, size))
                return false;
            *position += size;
            if ((*piece)++ < reply->firstPieces.size() && reply->pace)
                reply->pace();
            return true;
        };
        if (reply->chunked)
            res.set_chunked_content_provider(reply->contentType, provider);
        else
            res.set_content_provider(reply->body.size(), reply->contentType,
                [provider](
                    std::size_t offset, std::size_t, httplib::DataSink& sink) { return provider(offset, sink); });
    });
    if (port == 0)
        m_port = s.server.bind_to_any_port("127.0.0.1");
    else
        m_port = s.server.bind_to_port("127.0.0.1", port) ? port : -1;
    if (m_port <= 0)
        throw std::runtime_error(port == 0 ? std::string("the replay server could not bind a loopback port")
                                           : "the replay server could not bind 127.0.0.1:" + std::to_string(port));
    s.thread = std::thread([&s] { s.server.listen_after_bind(); });
    // Until the loop runs, stop() does nothing and a destructor right after construction would
    // wait forever (cpp-httplib 0.11 has no wait_until_ready).
    while (!s.server.is_running())
        std::this_thread::yield();
}

ReplayServer::~ReplayServer()
{
    releaseHeld();
    m_state->server.stop();
    if (m_state->thread.joinable())
        m_state->thread.join();
}

std::string ReplayServer::url(const std::string& path) const
{
    return "http://127.0.0.1:" + std::to_string(m_port) + path;
}

void ReplayServer::route(const std::string& path, Handler handler)
{
    std::lock_guard lock(m_state->mutex);
    m_state->handlers[path] = std::move(handler);
}

std::vector<SeenRequest> ReplayServer::requests() const
{
    std::lock_guard lock(m_state->mutex);
    return m_state->seen;
}

int ReplayServer::requestCount(const std::string& path) const
{
    std::lock_guard lock(m_state->mutex);
    const auto it = m_state->counts.find(path);
    return it == m_state->counts.end() ? 0 : it->second;
}

bool ReplayServer::waitForRequests(const std::string& path, int count, std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_state->mutex);
    return m_state->changed.wait_for(lock, timeout, [&] {
        const auto it = m_state->counts.find(path);
        return it != m_state->counts.end() && it->second >= count;
    });
}

void ReplayServer::releaseHeld()
{
    {
        std::lock_guard lock(m_state->mutex);
        ++m_state->releaseGeneration;
    }
    m_state->changed.notify_all();
}

Reply jsonReply(const std::string& body, int status)
{
    Reply r;
    r.status = status;
    r.body = body;
    return r;
}

Reply eventStreamReply(const std::string& body)
{
    Reply r;
    r.contentType = "text/event-stream";
    r.chunked = true;
    r.body = body;
    return r;
}

int closedPort()
{
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(s);
    return ntohs(address.sin_port);
}

std::string fixture(const std::string& relativePath)
{
    const std::string path = std::string(KL_SOURCE_DIR) + "/tests/fixtures/llm/" + relativePath;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("missing fixture " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace kl::test
