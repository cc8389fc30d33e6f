#pragma once
// A loopback HTTP server for the LLM tests (cpp-httplib on 127.0.0.1, a free port, its own
// threads) that replays recorded replies: whole, chunked in small pieces, held open (stalls),
// or cut off (connection resets). Only this file's .cpp sees httplib, so it compiles once.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kl::test {

struct SeenRequest {
    std::string method;
    std::string path;
    std::multimap<std::string, std::string> headers; // names in lower case
    std::string body;
    std::string header(const std::string& lowerName) const;
};

struct Reply {
    int status = 200;
    std::string contentType = "application/json";
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool chunked = false; // Transfer-Encoding: chunked, written piece by piece
    // Chunked: the sizes of the first writes; after each one `pace` (if set) runs before the next,
    // so a test can wait until the client has read it. The rest goes in chunkSize pieces.
    std::vector<std::size_t> firstPieces;
    std::function<void()> pace;
    std::size_t chunkSize = 16384;
    std::optional<std::size_t> holdAfter; // after this many bytes, keep the connection silent until released
    std::optional<std::size_t> resetAfter; // after this many bytes, drop the connection
};

class ReplayServer {
public:
    using Handler = std::function<Reply(const SeenRequest& request, int countForPath)>;

    // Listens on 127.0.0.1:port; 0 picks a free port (see port()).
    explicit ReplayServer(int port = 0);
    ~ReplayServer();
    ReplayServer(const ReplayServer&) = delete;
    ReplayServer& operator=(const ReplayServer&) = delete;

    int port() const { return m_port; }
    std::string url(const std::string& path = {}) const; // "http://127.0.0.1:PORT" + path

    // POST handlers by exact path; countForPath is 1 for the first request to that path.
    void route(const std::string& path, Handler handler);

    std::vector<SeenRequest> requests() const;
    int requestCount(const std::string& path) const;
    // Blocks until `path` has seen `count` requests, or the timeout passes; returns whether it did.
    bool waitForRequests(const std::string& path, int count, std::chrono::milliseconds timeout) const;
    // Ends every held connection (replies with holdAfter) now.
    void releaseHeld();

private:
    struct State;
    std::unique_ptr<State> m_state;
    int m_port = 0;
};

// The text of a file under tests/fixtures/llm/.
std::string fixture(const std::string& relativePath);

// A whole reply with `body` as JSON, and one sent as a chunked event stream.
Reply jsonReply(const std::string& body, int status = 200);
Reply eventStreamReply(const std::string& body);

// A port on 127.0.0.1 that nothing listens on (bound, never listened, closed): connecting is refused.
int closedPort();

} // namespace kl::test
