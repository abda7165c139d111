#pragma once
// IsolatedRestoreRequest: the exact-key reader of the request body of the five isolated-restore
// methods, `{ nodeId: id, control: IsolatedRestoreControl }` (docs/contract.md §14; IR-01..IR-07).
//
// read() judges the whole body before anything is dialled (IR-04): a body that is not one JSON object,
// a key named twice in any object of it (two readers could otherwise see two different controls: the
// relay's and the node's), an unknown member (never named, D-42), a nodeId that is not an id, or a
// control IsolatedRestoreControl::read refuses: every one is `restore-control-invalid: <field path and
// problem>`. On success `control` holds the control member's bytes exactly as Cloudly sent them (key
// order, whitespace and number spelling kept): those bytes, and nothing re-serialised, are what the
// relay posts to the node's Corestore (IR-02). Pure function: no clock, no log, no socket.
#include "service/isolatedrestore/isolatedrestorecontrol.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace coreflow {

struct IsolatedRestoreRequest {
    QString nodeId;
    QByteArray control;              // the control member's raw JSON, byte-identical to the request's
    IsolatedRestoreControl judged;   // what the reader found in it

    static contract::Result<IsolatedRestoreRequest> read(QByteArrayView requestJson, const QString &operation);
};

} // namespace coreflow
