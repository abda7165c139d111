#pragma once
// IsolatedRestoreCarrier: the five isolated-restore methods (docs/contract.md §14, the
// isolated-restore route of §15.1; IR-01..IR-18). The relay carries Cloudly's controls, it does not
// drive a restore: each control goes to the node it names, exactly as Cloudly wrote it, and what that
// node states comes back.
//
//   prepareIsolatedRestoreOnNode       POST /control/isolated-restore/prepare
//   stageIsolatedRestoreArchive        POST /control/isolated-restore/stage
//   getIsolatedRestoreProgressOnNode   POST /control/isolated-restore/progress
//   executeIsolatedRestoreOnNode       POST /control/isolated-restore/execute
//   cleanupIsolatedRestoreOnNode       POST /control/isolated-restore/cleanup
//
// Served on the Cloudly table only (attach()/detach(), composition root step 6); on the listener
// table the five answer `method-not-served: the relay listener serves no method <name>` at once
// (attachListenerRefusals(), at construction), reading nothing and dialling nothing.
//
// One control: IsolatedRestoreRequest reads the whole body (a refusal dials nothing, IR-04..IR-06);
// then exactly one CorestoreClient::post() of the control's raw bytes with forbiddenKeepsCredential
// (only a 401 re-reads the control credential, a 403 is the grant's refusal, IR-13, IR-14); never
// retried by this class (IR-08); the outcome judged by IsolatedRestoreOutcome. Every answer and every
// refusal of the five methods carries `request: {}` instead of echoing the request (the control is a
// bearer: never in an answer, IR-03, D-79). One log line per control (category coreflow.isolatedrestore):
// method, node, and the refusal line or the answered revision and phase; never the control.
#include "service/core/methodtable.h"
#include "service/isolatedrestore/isolatedrestoreoutcome.h"

#include <QObject>

namespace coreflow {

class CorestoreClient;

class IsolatedRestoreCarrier : public QObject {
    Q_OBJECT
public:
    IsolatedRestoreCarrier(CorestoreClient &client, MethodTable &cloudlyMethods, MethodTable &nodeMethods,
                           IsolatedRestoreOutcome::HeldToken isHeldToken, QObject *parent = nullptr);
    ~IsolatedRestoreCarrier() override;

    void attach();
    void detach();
    void attachListenerRefusals();

    int controlsInFlight() const { return m_inFlight; }

private:
    void serve(const contract::Frame &frame, MethodTable::Reply reply);

    CorestoreClient &m_client;
    MethodTable &m_cloudlyMethods;
    MethodTable &m_nodeMethods;
    IsolatedRestoreOutcome::HeldToken m_isHeldToken;
    bool m_attached = false;
    int m_inFlight = 0;
};

} // namespace coreflow
