#pragma once
// StatusHelloReader: reads one line a status client sent (docs/contract.md §18) and decides what the
// server does with it. Pure: StatusServer calls it per line and acts on the outcome; the fuzz target
// fuzz_status_lines feeds it bytes.
//
// The one message a client may send is {"type":"hello","version":1[,"subscribe":true|false]}.
// Outcomes:
//   Ignore   an empty or all-whitespace line
//   Refuse   anything else that is not a first, well-formed hello: not a JSON object, another type,
//            a second hello (alreadyHelloed), another version, a subscribe that is not a boolean;
//            reason is the one-line refusal reason (status-read-only), which quotes the client's type
//            only when it is a short plain word, and nothing else the client sent
//   Hello    a hello; subscribe says whether the client asked for updates (absent: false)
#include <QByteArray>
#include <QString>

namespace coreflow {

struct StatusHelloOutcome {
    enum class Kind { Ignore, Refuse, Hello };
    Kind kind = Kind::Ignore;
    QString reason;         // Refuse only
    bool subscribe = false; // Hello only
};

class StatusHelloReader {
public:
    static StatusHelloOutcome read(const QByteArray &rawLine, bool alreadyHelloed);
};

} // namespace coreflow
