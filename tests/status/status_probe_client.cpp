// status_probe_client SOCKET [--send LINE]... [--expect N]: connects to a status socket, sends a hello
// (or the given lines), prints every line the server sends to stdout and exits after N lines (default 1),
// when the server closes, or after 5 s.
// Exit: 0 the server closed or time ran out after connecting, 3 connect failed (reason on stderr).
// Run by tests under setpriv as an unprivileged uid.
#include <QCoreApplication>
#include <QLocalSocket>
#include <QTimer>

#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: status_probe_client SOCKET [--send LINE]...\n");
        return 2;
    }
    QList<QByteArray> toSend;
    int expect = 1;
    for (int i = 2; i + 1 < args.size(); i += 2) {
        if (args[i] == QLatin1String("--send"))
            toSend.append(args[i + 1].toUtf8());
        else if (args[i] == QLatin1String("--expect"))
            expect = args[i + 1].toInt();
    }
    int received = 0;
    if (toSend.isEmpty())
        toSend.append(R"({"type":"hello","version":1,"subscribe":false})");

    // Declared before the socket: its destructor aborts the connection and emits disconnected(),
    // whose slot reads rc (ASan: stack-use-after-scope when rc was declared after the socket).
    int rc = 0;
    QLocalSocket socket;
    QObject::connect(&socket, &QLocalSocket::connected, [&] {
        for (const QByteArray &line : toSend)
            socket.write(line + '\n');
    });
    QObject::connect(&socket, &QLocalSocket::readyRead, [&] {
        while (socket.canReadLine()) {
            const QByteArray line = socket.readLine();
            std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
            std::fflush(stdout);
            if (++received >= expect)
                app.exit(rc);
        }
    });
    QObject::connect(&socket, &QLocalSocket::disconnected, &app, [&] { app.exit(rc); });
    QObject::connect(&socket, &QLocalSocket::errorOccurred, &app, [&](QLocalSocket::LocalSocketError e) {
        if (e == QLocalSocket::PeerClosedError)
            return;
        if (socket.state() != QLocalSocket::ConnectedState) {
            std::fprintf(stderr, "connect failed: %s\n", qPrintable(socket.errorString()));
            app.exit(3);
        }
    });
    QTimer::singleShot(5000, &app, [&] { app.exit(rc); });
    // Connect from inside the loop, so a connect error that is reported at once still ends it.
    QTimer::singleShot(0, &app, [&] { socket.connectToServer(args[1]); });
    return app.exec();
}
