#include "core/llm/sse_parser.h"

namespace kl {

SseParser::SseParser(EventHandler onEvent)
    : m_onEvent(std::move(onEvent))
{
}

void SseParser::feed(std::string_view bytes)
{
    for (char c : bytes) {
        if (m_lastWasCr) {
            m_lastWasCr = false;
            if (c == '\n')
                continue; // the LF of a CR LF pair
        }
        if (c == '\r' || c == '\n') {
            m_lastWasCr = c == '\r';
            line(m_line);
            m_line.clear();
        } else {
            m_line.push_back(c);
        }
    }
}

bool SseParser::finish()
{
    const bool cut = m_pending || !m_line.empty();
    m_line.clear();
    m_event = {};
    m_hasData = false;
    m_pending = false;
    return cut;
}

void SseParser::line(std::string_view text)
{
    if (m_firstLine) {
        m_firstLine = false;
        if (text.substr(0, 3) == "\xEF\xBB\xBF") // a UTF-8 byte-order mark may open the stream
            text.remove_prefix(3);
    }
    if (text.empty()) {
        dispatch();
        return;
    }
    if (text.front() == ':')
        return; // a comment, e.g. a keep-alive ": ping"
    m_pending = true;
    std::string_view field = text, value;
    if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        field = text.substr(0, colon);
        value = text.substr(colon + 1);
        if (!value.empty() && value.front() == ' ')
            value.remove_prefix(1);
    }
    if (field == "data") {
        if (m_hasData)
            m_event.data.push_back('\n');
        m_event.data.append(value);
        m_hasData = true;
    } else if (field == "event") {
        m_event.type = value.empty() ? "message" : std::string(value);
    } else if (field == "id") {
        m_event.id = value;
    }
    // "retry" and unknown fields are ignored: the client reconnects itself, not by the stream.
}

void SseParser::dispatch()
{
    if (m_hasData) {
        ++m_events;
        m_onEvent(m_event);
    }
    m_event = {};
    m_hasData = false;
    m_pending = false;
}

} // namespace kl
