#pragma once
// Logging categories of the relay service, one per component, so QT_LOGGING_RULES can filter
// (e.g. QT_LOGGING_RULES="coreflow.forwarder.debug=true"). One line per event; a line names methods,
// nodes, counts and classes, never a body, a header value or a secret.
#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(logApp)
Q_DECLARE_LOGGING_CATEGORY(logConfig)
Q_DECLARE_LOGGING_CATEGORY(logCloudly)
Q_DECLARE_LOGGING_CATEGORY(logCertificate)
Q_DECLARE_LOGGING_CATEGORY(logListener)
Q_DECLARE_LOGGING_CATEGORY(logForwarder)
Q_DECLARE_LOGGING_CATEGORY(logRegistration)
Q_DECLARE_LOGGING_CATEGORY(logIngress)
Q_DECLARE_LOGGING_CATEGORY(logEscrow)
Q_DECLARE_LOGGING_CATEGORY(logRegistry)
Q_DECLARE_LOGGING_CATEGORY(logCorestore)
Q_DECLARE_LOGGING_CATEGORY(logIsolatedRestore)
Q_DECLARE_LOGGING_CATEGORY(logBackup)
Q_DECLARE_LOGGING_CATEGORY(logClosures)
Q_DECLARE_LOGGING_CATEGORY(logVpn)
Q_DECLARE_LOGGING_CATEGORY(logBindings)
