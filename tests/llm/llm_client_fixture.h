#pragma once
// What the chat-client suites share: a real HTTP server on 127.0.0.1 that replays recorded replies
// of both protocols under one route per scenario ("/ok/v1/chat/completions", "/ratelimit/...",
// "/echo/..."), endpoint settings with short retry delays and a log that counts libcurl's reads, and
// a planted API key and header secret that must never come back out of the client.
#include "replay_bodies.h"
#include "replay_server.h"

#include "core/llm/chat_client.h"

#include <QObject>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kl::test {

inline const std::string kKey = "sk-kltest-PLANTED-7c1e9a2b4d6f8e0a";
inline const std::string kHeaderSecret = "hdr-secret-PLANTED-3b5d7f9e1c";

std::string openAiPath(const std::string& scenario);
std::string anthropicPath(const std::string& scenario);

// A reply whose candidate carries a 1 MiB comment: larger than any candidate may be.
std::string megabyteReply();

// The base of each chat-client suite: its initTestCase starts the server (no proxy may see these
// requests) with every scenario's route, init clears the log and read count, cleanup releases held
// connections.
class LlmClientFixture : public QObject {
    Q_OBJECT

protected:
    EndpointConfig config(Provider provider, const std::string& scenario);
    static ChatRequest request(bool stream);

    // A stream whose first 60 writes (1 to 31 bytes) each wait until the client has read the one before.
    Reply pacedStream(const std::string& body);
    void waitForReads(int count);

    std::string logText();
    // Neither secret in the stored exchange, its message or the log.
    void verifyNoSecret(const Exchange& e);

    std::unique_ptr<ReplayServer> m_server;
    std::string m_okText; // replies/ok_vectorised.md: the text every "ok" reply carries
    std::mutex m_mutex;
    std::condition_variable m_readsChanged;
    int m_reads = 0; // libcurl's reads of a body (with traceHttp), under m_mutex
    std::vector<std::string> m_log;

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();
};

} // namespace kl::test
