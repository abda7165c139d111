#pragma once
// CorestoreCredential: the relay's Corestore control credential, enrolled with Cloudly on demand
// (docs/contract.md §12.1, D-29, D-72; rules CS-07..CS-14, ON-04, ON-05).
//
// Nothing happens at start. acquire() on the first Corestore-bound call enrolls: a fresh X25519 key
// pair (crypto_box_keypair) under key id "relay-corestore-control:<uuid v4>",
// beginCorestoreControlRecipientEnrollment, the sealed challenge opened with crypto_box_seal_open
// (exactly 32 bytes, else enrollment-challenge-invalid), completeCorestoreControlRecipientEnrollment
// with the keyed BLAKE2b proof (crypto_generichash, 32 bytes, key = the opened bytes, message
// "coreflow-recipient-pop|<keyId>|<challengeId>", base64), then getCorestoreControlCredentialMaterial,
// whose sealed { token } is opened into a Secret. Every acquire() made while an enrollment (or a
// re-read) runs waits for that one and gets its outcome.
//
// Failure: CorestoreCredentialEnrollmentError: <code>: <step> ... (Cloudly's data.name, or
// enrollment-challenge-invalid / enrollment-answer-invalid / the Cloudly call's refusal), logged once
// per attempt; every acquire() until the next attempt is answered with it at once. The next attempt is
// made by the first acquire() after the backoff wait: reconnectInitialBackoffMs doubling per
// consecutive failure up to reconnectMaxBackoffMs, no jitter, on the injected clock.
//
// reread(): a Corestore 401/403 — drops the token and reads the material again with the same key; a
// caller that saw an older token than the one now held (tokenGeneration()) gets the held one without
// another read. A failed re-read fails the credential and drops the key (the next attempt enrolls).
// recipientStateChanged(): after each registration of the relay's own session; reads
// getCorestoreControlRecipientState when a key is held: another activeKeyId (or null) drops key and
// token, the same one changes nothing.
//
// The private key and the token are Secrets (guarded memory); neither appears in a log line, an error,
// the status or an event. Nothing is read from the environment and nothing is written anywhere.
#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/refusal.h"
#include "shared/contract/timing.h"
#include "shared/secret.h"
#include "shared/util/clock.h"

#include <QObject>
#include <functional>
#include <optional>
#include <vector>

namespace coreflow {

class CorestoreCredential : public QObject {
    Q_OBJECT
public:
    enum class State { None, Enrolling, Held, Failed };
    // token: the held token (valid during the call only) or nullptr; failure: why there is none.
    using Ready = std::function<void(const Secret *token, quint64 tokenGeneration, const contract::Refusal &failure)>;

    CorestoreCredential(CloudlyConnector &cloudly, Clock &clock, const contract::RelayTiming &timing,
                        QObject *parent = nullptr);
    ~CorestoreCredential() override;

    void acquire(Ready ready);
    // A Corestore 401/403 answered a request sent with the token of generation usedGeneration.
    void reread(quint64 usedGeneration, Ready ready);
    // A registration of the relay's own session succeeded (CloudlyConnector::dispatchable).
    void recipientStateChanged();

    // True when bytes equal the held token (constant time): a Corestore that quotes the bearer back
    // in its error code is not quoted on (contract §12, CS-09).
    bool matchesToken(QByteArrayView bytes) const;
    State state() const { return m_state; }
    static QString stateWord(State state);
    QString failureCode() const { return m_state == State::Failed ? m_failureCode : QString(); }
    QString keyId() const { return m_held ? m_keyId : QString(); }
    qint64 generation() const { return m_held ? m_generation : 0; }
    qint64 enrolledAtMs() const { return m_held ? m_enrolledAtMs : 0; }
    // Enrollments begun since start (tests, status).
    int enrollmentsBegun() const { return m_enrollmentsBegun; }
    // When the next attempt may start (clock ms); 0 unless failed.
    qint64 nextAttemptAtMs() const { return m_state == State::Failed ? m_nextAttemptAtMs : 0; }
    // The public key of the held (or enrolling) key pair, base64; "" when none. Not secret.
    QByteArray publicKeyBase64() const { return m_publicKey.toBase64(); }

Q_SIGNALS:
    void statusChanged();
    // A value-free line for the status socket's event stream (kind "corestore").
    void eventLine(const QString &line);

private:
    void startEnrollment();
    void begin();
    void complete(const QString &challengeId, const QByteArray &sealedChallenge);
    void readMaterial();
    void succeed();
    void fail(const QString &code, const QString &reason);
    void dropKey();
    void settle();
    // Common reading of a Cloudly answer: nullopt plus fail() when refused or unreadable.
    std::optional<QJsonObject> answerOf(const CloudlyConnector::CallResult &result, const QString &step);

    CloudlyConnector &m_cloudly;
    Clock &m_clock;
    contract::RelayTiming m_timing;

    State m_state = State::None;
    bool m_held = false;            // a token is held
    bool m_busy = false;            // an enrollment or re-read runs
    QString m_keyId;
    QByteArray m_publicKey;         // 32 bytes
    Secret m_privateKey;            // 32 bytes
    Secret m_token;
    quint64 m_tokenGeneration = 0;  // raised for every token read
    qint64 m_generation = 0;
    qint64 m_enrolledAtMs = 0;
    contract::Refusal m_failure;
    QString m_failureCode;
    int m_consecutiveFailures = 0;
    qint64 m_nextAttemptAtMs = 0;
    int m_enrollmentsBegun = 0;
    quint64 m_attempt = 0;          // guards answers of an abandoned attempt
    std::vector<Ready> m_waiting;
};

} // namespace coreflow
