#pragma once
// RelayCounters: what the relay has done since start, for the status model (forwards, pushes,
// refusals by name, reconnects are read from the connector). Value-free: names and counts only.
#include <QMap>
#include <QString>

namespace coreflow {

class RelayCounters {
public:
    void countForward() { ++m_forwards; }
    void countPush() { ++m_pushes; }
    void countRefusal(const QString &name) { ++m_refusals[name]; }
    qint64 forwards() const { return m_forwards; }
    qint64 pushes() const { return m_pushes; }
    const QMap<QString, qint64> &refusalsByName() const { return m_refusals; }

private:
    qint64 m_forwards = 0;
    qint64 m_pushes = 0;
    QMap<QString, qint64> m_refusals;
};

} // namespace coreflow
