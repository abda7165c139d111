#pragma once
// StatusLineReader: reads one line the relay's status socket sent (docs/contract.md §18) for the
// console. Pure: StatusClient calls it per line and acts on the outcome; the fuzz target
// fuzz_status_lines feeds it bytes.
// Outcomes:
//   Ignore         an empty or all-whitespace line
//   ProtocolError  not a JSON object, an unknown type, a snapshot or event of another version, a
//                  snapshot without a status object, an event whose atMs is a number but not an
//                  integer within qint64; reason is the one-line cause the console shows
//   Refusal        {"type":"refusal","name":...,"reason":...} (name and reason as sent)
//   Snapshot       {"type":"snapshot","version":1,"status":{...}} read with RelayStatus::fromJson
//   Event          {"type":"event","version":1,"atMs":<Unix ms>,"kind":...,"line":...}
#include "console/statusevent.h"
#include "shared/status/relaystatus.h"

#include <QByteArray>
#include <QString>

namespace coreflow::console {

struct StatusLine {
    enum class Kind { Ignore, ProtocolError, Refusal, Snapshot, Event };
    Kind kind = Kind::Ignore;
    QString reason;             // ProtocolError: the cause; Refusal: the relay's reason
    QString refusalName;        // Refusal only
    status::RelayStatus status; // Snapshot only
    StatusEvent event;          // Event only
};

class StatusLineReader {
public:
    static StatusLine read(const QByteArray &line);
};

} // namespace coreflow::console
