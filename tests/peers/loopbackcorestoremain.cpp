// coreflow-loopback-corestore: one LoopbackCorestore (docs/contract.md §15) as a process, for the demo and
// the benchmarks (one process per simulated node).
//
//   coreflow-loopback-corestore (--token-file PATH | --token TOKEN) [--port N] [--host 127.0.0.1]
//                               [--base-path /corestore] [--cert PEM --key PEM | --ca-dir DIR]
//                               [--inventory-file F] [--legacy-file F] [--closure-bytes N]
//                               [--closure-rate BYTES_PER_SECOND] [--verbose]
//
// --cert/--key present that certificate (leaf first, then its chain; PKCS#8 or EC/RSA key PEM); without
// them a fresh test CA issues one for --host and, with --ca-dir, its ca.pem is written there.
// --inventory-file / --legacy-file hold the `services` array text, answered byte for byte.
// Prints one line per event on stdout; the first is "corestore listening at <endpoint>", then
// "request <route>" per request (routes as in loopbackcorestore.h). Exits 0 on SIGTERM/SIGINT, 2 on bad
// arguments, 1 when it cannot listen.
#include "tests/peers/loopbackcorestore.h"
#include "tests/peers/quitonsignal.h"
#include "tests/peers/testcertificateauthority.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLoggingCategory>

#include <cstdio>

using namespace coreflow::peers;

namespace {

void say(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(const QString &message, int code)
{
    std::fputs(("coreflow-loopback-corestore: " + message + '\n').toUtf8().constData(), stderr);
    return code;
}

bool readFile(const QString &path, QByteArray *out)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    *out = file.readAll();
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("coreflow-loopback-corestore"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Loopback Corestore control API for one simulated node"));
    parser.addHelpOption();
    const QCommandLineOption portOpt(QStringLiteral("port"), QStringLiteral("Port on 127.0.0.1 (0: any free)."),
                                     QStringLiteral("port"), QStringLiteral("0"));
    const QCommandLineOption hostOpt(QStringLiteral("host"), QStringLiteral("Host named in the endpoint and certificate."),
                                     QStringLiteral("host"), QStringLiteral("127.0.0.1"));
    const QCommandLineOption baseOpt(QStringLiteral("base-path"), QStringLiteral("Endpoint path the routes are appended to."),
                                     QStringLiteral("path"), QStringLiteral("/corestore"));
    const QCommandLineOption tokenFileOpt(QStringLiteral("token-file"),
                                          QStringLiteral("File holding the accepted bearer (one trailing newline is dropped)."),
                                          QStringLiteral("path"));
    const QCommandLineOption tokenOpt(QStringLiteral("token"), QStringLiteral("The accepted bearer."), QStringLiteral("token"));
    const QCommandLineOption certOpt(QStringLiteral("cert"), QStringLiteral("Certificate chain PEM (leaf first)."),
                                     QStringLiteral("pem"));
    const QCommandLineOption keyOpt(QStringLiteral("key"), QStringLiteral("Private key PEM."), QStringLiteral("pem"));
    const QCommandLineOption caDirOpt(QStringLiteral("ca-dir"), QStringLiteral("Directory to write the generated ca.pem into."),
                                      QStringLiteral("dir"));
    const QCommandLineOption inventoryOpt(QStringLiteral("inventory-file"), QStringLiteral("`services` array of GET /control/inventory."),
                                          QStringLiteral("path"));
    const QCommandLineOption legacyOpt(QStringLiteral("legacy-file"), QStringLiteral("`services` array of GET /control/legacy-resources."),
                                       QStringLiteral("path"));
    const QCommandLineOption closureBytesOpt(QStringLiteral("closure-bytes"), QStringLiteral("Closure export size in bytes."),
                                             QStringLiteral("n"), QStringLiteral("1048576"));
    const QCommandLineOption closureRateOpt(QStringLiteral("closure-rate"), QStringLiteral("Closure export pace, bytes/s (0: unpaced)."),
                                            QStringLiteral("n"), QStringLiteral("0"));
    const QCommandLineOption verboseOpt(QStringLiteral("verbose"), QStringLiteral("Log the peer's own lines to stderr."));
    parser.addOptions({portOpt, hostOpt, baseOpt, tokenFileOpt, tokenOpt, certOpt, keyOpt, caDirOpt, inventoryOpt, legacyOpt,
                       closureBytesOpt, closureRateOpt, verboseOpt});
    parser.process(app);

    if (!parser.isSet(verboseOpt))
        QLoggingCategory::setFilterRules(QStringLiteral("coreflow.peers.*.debug=false\ncoreflow.peers.*.info=false"));

    bool ok = false;
    const uint port = parser.value(portOpt).toUInt(&ok);
    if (!ok || port > 65535)
        return fail(QStringLiteral("--port must be a port number"), 2);
    const qint64 closureBytes = parser.value(closureBytesOpt).toLongLong(&ok);
    if (!ok || closureBytes < 0)
        return fail(QStringLiteral("--closure-bytes must be a non-negative number"), 2);
    const qint64 closureRate = parser.value(closureRateOpt).toLongLong(&ok);
    if (!ok || closureRate < 0)
        return fail(QStringLiteral("--closure-rate must be a non-negative number"), 2);

    QByteArray token;
    if (parser.isSet(tokenFileOpt)) {
        if (!readFile(parser.value(tokenFileOpt), &token))
            return fail(QStringLiteral("cannot read the token file"), 2);
        if (token.endsWith('\n'))
            token.chop(1);
    } else if (parser.isSet(tokenOpt)) {
        token = parser.value(tokenOpt).toUtf8();
    }
    if (token.isEmpty())
        return fail(QStringLiteral("--token-file or --token is required (and not empty)"), 2);

    LoopbackCorestore::Options options;
    options.port = quint16(port);
    options.host = parser.value(hostOpt);
    options.basePath = parser.value(baseOpt);
    options.acceptedToken = token;
    options.closureSizeBytes = closureBytes;
    options.closureBytesPerSecond = closureRate;

    IssuedCertificate certificate;
    if (parser.isSet(certOpt) || parser.isSet(keyOpt)) {
        QByteArray certPem;
        QByteArray keyPem;
        if (!readFile(parser.value(certOpt), &certPem) || !readFile(parser.value(keyOpt), &keyPem))
            return fail(QStringLiteral("--cert and --key must both name readable PEM files"), 2);
        certificate.chain = QSslCertificate::fromData(certPem, QSsl::Pem);
        certificate.cert = certificate.chain.value(0);
        certificate.certPem = certPem;
        certificate.keyPem = keyPem;
        certificate.key = QSslKey(keyPem, QSsl::Ec, QSsl::Pem);
        if (certificate.key.isNull())
            certificate.key = QSslKey(keyPem, QSsl::Rsa, QSsl::Pem);
        if (certificate.cert.isNull() || certificate.key.isNull())
            return fail(QStringLiteral("--cert/--key do not hold a certificate and a key"), 2);
    } else {
        TestCertificateAuthority ca(QStringLiteral("Coreflow Corestore demo CA"));
        if (ca.caCertificate().isNull())
            return fail(QStringLiteral("could not create the test CA"), 1);
        if (parser.isSet(caDirOpt)) {
            const QString dir = parser.value(caDirOpt);
            QDir().mkpath(dir);
            const QString path = QDir(dir).filePath(QStringLiteral("ca.pem"));
            if (!ca.writeCaPem(path))
                return fail(QStringLiteral("cannot write %1").arg(path), 1);
            say(QStringLiteral("CA certificate written to %1").arg(path));
        }
        certificate = ca.issueForHost(options.host);
    }

    QuitOnSignal quitOnSignal;
    LoopbackCorestore corestore(certificate, options);
    if (parser.isSet(inventoryOpt)) {
        QByteArray services;
        if (!readFile(parser.value(inventoryOpt), &services))
            return fail(QStringLiteral("cannot read the inventory file"), 2);
        corestore.setInventory(services.trimmed());
    }
    if (parser.isSet(legacyOpt)) {
        QByteArray services;
        if (!readFile(parser.value(legacyOpt), &services))
            return fail(QStringLiteral("cannot read the legacy-resources file"), 2);
        corestore.setLegacyResources(services.trimmed());
    }
    if (!corestore.listen())
        return fail(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(port), 1);
    say(QStringLiteral("corestore listening at %1").arg(corestore.endpoint().toString()));
    QObject::connect(&corestore, &LoopbackCorestore::requestReceived, [](const QString &route) {
        say(QStringLiteral("request %1").arg(route.isEmpty() ? QStringLiteral("(unknown route)") : route));
    });
    QObject::connect(&quitOnSignal, &QuitOnSignal::aboutToQuit, [](int) { say(QStringLiteral("stopping")); });
    return QCoreApplication::exec();
}
