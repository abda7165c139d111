#pragma once
// JournalStream: whether stderr is connected to the systemd journal (docs/contract.md §19.3, Logs).
// systemd sets JOURNAL_STREAM=<device>:<inode> (decimal) for a unit whose stderr is the journal; it
// counts only when that pair is stderr's own (a child that inherited the variable but writes elsewhere
// does not match). Then every log line starts with its syslog priority (`<3>` error/critical, `<4>`
// warning, `<6>` info, `<7>` debug; `<2>` fatal) and carries no timestamp: the journal adds its own.
#include <QByteArray>
#include <QtGlobal>

namespace coreflow {

class JournalStream {
public:
    // `journalStream` is JOURNAL_STREAM's value, `fd` the descriptor to compare (2: stderr).
    static bool matches(const QByteArray &journalStream, int fd);
    // The syslog priority prefix of a Qt message type.
    static const char *priorityPrefix(QtMsgType type);
};

} // namespace coreflow
