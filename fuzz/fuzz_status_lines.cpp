// fuzz_status_lines: both ends of the status protocol (docs/contract.md §18) over any bytes, split into
// lines at '\n' as both ends split them: the server's StatusHelloReader (service/statussocket) and the
// console's StatusLineReader (console/). The server admits exactly one hello per connection and a
// refusal quotes no more of the client's line than its type, when plain (§1: at most 64 characters of
// A-Z a-z 0-9 _ - .); the console reads every
// line into one outcome, and a snapshot's status reads back from its own JSON unchanged.
#include "console/statuslinereader.h"
#include "service/statussocket/statushelloreader.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cstdio>
#include <cstdlib>

using namespace coreflow;

namespace {
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_status_lines: %s\n", what);
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool helloed = false;
    for (const QByteArray &line : QByteArray(reinterpret_cast<const char *>(data), qsizetype(size)).split('\n')) {
        const StatusHelloOutcome server = StatusHelloReader::read(line, helloed);
        switch (server.kind) {
        case StatusHelloOutcome::Kind::Ignore:
            if (!line.trimmed().isEmpty())
                broken("a line with content ignored by the server");
            break;
        case StatusHelloOutcome::Kind::Refuse: {
            if (server.reason.isEmpty())
                broken("a refusal without a reason");
            // Contract §1 "Quoting a peer's names": the client's type is the one thing a refusal may
            // repeat, in quotes and only when plain (1 to 64 of A-Z a-z 0-9 _ - .); the rest of the
            // reason is the relay's own short text, with no control character.
            const QJsonObject msg = QJsonDocument::fromJson(line.trimmed()).object();
            static const QRegularExpression quoted(QStringLiteral("\"([^\"]*)\""));
            static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_.-]{1,64}$"));
            qsizetype quotedChars = 0;
            for (auto m = quoted.globalMatch(server.reason); m.hasNext();) {
                const QString q = m.next().captured(1);
                if (!plain.match(q).hasMatch() || q != msg.value(QStringLiteral("type")).toString())
                    broken("a refusal quotes something other than the client's plain type");
                quotedChars += q.size();
            }
            if (server.reason.size() - quotedChars > 128)
                broken("a refusal reason longer than the relay's own text");
            for (const QChar c : server.reason)
                if (c.unicode() < 0x20 || (c.unicode() >= 0x7f && c.unicode() < 0xa0))
                    broken("a control character in a refusal reason");
            break;
        }
        case StatusHelloOutcome::Kind::Hello:
            if (helloed)
                broken("a second hello admitted");
            helloed = true;
            break;
        }

        const console::StatusLine client = console::StatusLineReader::read(line);
        switch (client.kind) {
        case console::StatusLine::Kind::Ignore:
            if (!line.trimmed().isEmpty())
                broken("a line with content ignored by the console");
            break;
        case console::StatusLine::Kind::ProtocolError:
            if (!client.reason.startsWith(QLatin1String("protocol error: ")))
                broken("a protocol error without its cause");
            break;
        case console::StatusLine::Kind::Snapshot: {
            const QJsonObject json = client.status.toJson();
            if (!(status::RelayStatus::fromJson(json) == client.status))
                broken("a snapshot's status does not read back from its own JSON");
            break;
        }
        case console::StatusLine::Kind::Refusal:
        case console::StatusLine::Kind::Event:
            break;
        }
    }
    return 0;
}
