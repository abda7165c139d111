#include "service/core/logging.h"

Q_LOGGING_CATEGORY(logApp, "coreflow.app")
Q_LOGGING_CATEGORY(logConfig, "coreflow.config")
Q_LOGGING_CATEGORY(logCloudly, "coreflow.cloudly")
Q_LOGGING_CATEGORY(logCertificate, "coreflow.certificate")
Q_LOGGING_CATEGORY(logListener, "coreflow.listener")
Q_LOGGING_CATEGORY(logForwarder, "coreflow.forwarder")
Q_LOGGING_CATEGORY(logRegistration, "coreflow.registration")
Q_LOGGING_CATEGORY(logIngress, "coreflow.ingress")
Q_LOGGING_CATEGORY(logEscrow, "coreflow.escrow")
Q_LOGGING_CATEGORY(logRegistry, "coreflow.registry")
Q_LOGGING_CATEGORY(logCorestore, "coreflow.corestore")
Q_LOGGING_CATEGORY(logBindings, "coreflow.bindings")
