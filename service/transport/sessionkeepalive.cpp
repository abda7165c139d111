#include "service/transport/sessionkeepalive.h"

namespace coreflow {

SessionKeepalive::SessionKeepalive(Clock &clock, qint64 pingIntervalMs, qint64 silenceDeadlineMs)
    : m_clock(clock), m_pingIntervalMs(pingIntervalMs), m_silenceDeadlineMs(silenceDeadlineMs), m_deadlines(clock)
{
}

std::shared_ptr<SessionKeepalive> SessionKeepalive::create(Clock &clock, qint64 pingIntervalMs, qint64 silenceDeadlineMs)
{
    if (pingIntervalMs <= 0 || silenceDeadlineMs <= 0)
        return nullptr;
    return std::make_shared<SessionKeepalive>(clock, pingIntervalMs, silenceDeadlineMs);
}

} // namespace coreflow
