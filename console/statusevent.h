#pragma once
// StatusEvent: one value-free event line from the status socket
// ({"type":"event","version":1,"atMs":<Unix ms>,"kind":"<kind>","line":"<line>"}).
#include <QString>

namespace coreflow::console {

struct StatusEvent {
    qint64 atMs = 0; // Unix ms, relay clock
    QString kind;
    QString line;
    bool operator==(const StatusEvent &) const = default;
};

} // namespace coreflow::console
