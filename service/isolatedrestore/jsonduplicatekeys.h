#pragma once
// JsonDuplicateKeys: whether any object in a JSON text names a key twice (after unescaping). Qt's
// reader keeps the last of two equal keys and other readers (simdjson's find_field_unordered(), the
// node's own) may keep the first, so a body with a duplicate key would be judged as one thing and read
// as another: the isolated-restore readers refuse it (docs/contract.md §14, D-79).
//
// find(): Verdict::Clean, Verdict::Duplicate (with `path`, the object's path from `root` built from
// plain keys only and cut before the first key that is not plain, docs/contract.md §1 "Quoting a
// peer's names"), or Verdict::Unreadable (a value that cannot be walked, or nesting deeper than 64
// levels). Bytes after the first value are not judged here: the callers also read the text with Qt's
// JSON reader, which refuses them. Cost: one simdjson on-demand walk and a hash set per object
// (linear in the text). Pure function.
#include <QByteArrayView>
#include <QSet>
#include <QString>

namespace coreflow {

class JsonDuplicateKeys {
public:
    enum class Verdict { Clean, Duplicate, Unreadable };
    struct Finding {
        Verdict verdict = Verdict::Clean;
        QString path;
        bool rootIsObject = false;
    };
    static constexpr int kMaxDepth = 64;

    // nameable: the contract's member names a path may quote; a key outside it (a member the contract
    // does not name, possibly the sender's value) ends the path there (D-79 (3)).
    static Finding find(QByteArrayView json, const QString &root, const QSet<QString> &nameable);
};

} // namespace coreflow
