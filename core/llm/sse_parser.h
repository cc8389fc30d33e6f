#pragma once
// An incremental parser for server-sent events (the WHATWG "text/event-stream" format), fed with
// bytes exactly as they come off the socket: an event, a line or a CR LF pair may be split
// across any number of writes.
#include <functional>
#include <string>
#include <string_view>

namespace kl {

struct ServerSentEvent {
    std::string type = "message"; // the "event:" field
    std::string data; // "data:" lines joined with "\n"
    std::string id;
};

class SseParser {
public:
    using EventHandler = std::function<void(const ServerSentEvent&)>;
    explicit SseParser(EventHandler onEvent);

    void feed(std::string_view bytes);
    // The stream ended. An event without its closing blank line is dropped, as the standard
    // says; returns whether such a partial event was pending (a sign the stream was cut).
    bool finish();

    std::size_t eventCount() const { return m_events; }

private:
    void line(std::string_view text);
    void dispatch();

    EventHandler m_onEvent;
    std::string m_line; // bytes of the unfinished line
    bool m_lastWasCr = false; // a CR ended the last chunk: an LF next belongs to it
    ServerSentEvent m_event;
    bool m_hasData = false;
    bool m_pending = false; // fields seen since the last dispatch
    bool m_firstLine = true;
    std::size_t m_events = 0;
};

} // namespace kl
