#pragma once
// HttpHeaderPairs: the header lines of one HTTP/1.1 message as the relay's HTTP code passes them
// around (both roles): (name, value) in arrival or sending order, names as sent, repeated lines kept
// apart. No bound of its own: whoever reads or writes a message bounds it.
#include <QByteArray>
#include <QList>
#include <QPair>

namespace coreflow {

using HttpHeaderPairs = QList<QPair<QByteArray, QByteArray>>;

} // namespace coreflow
