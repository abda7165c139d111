#!/usr/bin/python3
"""An independent Noise_IK_25519_ChaChaPoly_BLAKE2s peer on Debian's python3-dissononce, for the
relay's Noise cross-test (tests/unit/tst_vpnnoiseinterop.cpp). Written from docs/contract.md §11.4
and §11.5 and the Noise spec; it shares no code with the relay.

It speaks one line per message on stdin/stdout, bytes in lowercase hex:
  initiator: writes "message1 <hex>", reads "message2 <hex>"
  responder: reads "message1 <hex>", writes "message2 <hex>" (or "rejected <reason>" and exits 3
             when the initiator's static key is not the one given with --member)
then both write "hash <hex>" (the handshake hash), then N times "transport <hex>" (a plain Noise
transport message, nonce 0, 1, ... of payload "python-<i>" under its sending cipher), then read N
lines "transport <hex>" from the other side, open each under its receiving cipher and write
"opened <hex>"; a message that does not open is "failed" and exit 4.

Usage: noise_ik_peer.py initiator|responder --static HEX --remote HEX|--member HEX
                        [--prologue TEXT] [--transport N] [--payload HEX]
"""
import argparse
import sys

from dissononce.cipher.chachapoly import ChaChaPolyCipher
from dissononce.dh.x25519.x25519 import X25519DH
from dissononce.dh.x25519.private import PrivateKey
from dissononce.dh.x25519.public import PublicKey
from dissononce.hash.blake2s import Blake2sHash
from dissononce.processing.handshakepatterns.interactive.IK import IKHandshakePattern
from dissononce.processing.impl.cipherstate import CipherState
from dissononce.processing.impl.handshakestate import HandshakeState
from dissononce.processing.impl.symmetricstate import SymmetricState

PROLOGUE = b'coreflow-vpn/1'   # docs/contract.md §11.4


def say(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


def hear(tag):
    line = sys.stdin.readline()
    if not line:
        sys.exit(2)
    name, _, value = line.strip().partition(' ')
    if name != tag:
        say('failed expected ' + tag)
        sys.exit(2)
    return bytes.fromhex(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('role', choices=('initiator', 'responder'))
    parser.add_argument('--static', required=True)
    parser.add_argument('--remote')
    parser.add_argument('--member')
    parser.add_argument('--prologue', default=PROLOGUE.decode())
    parser.add_argument('--transport', type=int, default=0)
    parser.add_argument('--payload', default='')
    args = parser.parse_args()

    dh = X25519DH()
    own = dh.generate_keypair(PrivateKey(bytes.fromhex(args.static)))
    state = HandshakeState(SymmetricState(CipherState(ChaChaPolyCipher()), Blake2sHash()), dh)
    payload = bytes.fromhex(args.payload)
    if args.role == 'initiator':
        state.initialize(IKHandshakePattern(), True, args.prologue.encode(), s=own,
                         rs=PublicKey(bytes.fromhex(args.remote)))
        message = bytearray()
        state.write_message(payload, message)
        say('message1 ' + bytes(message).hex())
        received = bytearray()
        send, receive = state.read_message(hear('message2'), received)
    else:
        state.initialize(IKHandshakePattern(), False, args.prologue.encode(), s=own)
        received = bytearray()
        state.read_message(hear('message1'), received)
        if state.rs is None or state.rs.data != bytes.fromhex(args.member):
            say('rejected member-unknown')
            sys.exit(3)
        message = bytearray()
        receive, send = state.write_message(payload, message)
        say('message2 ' + bytes(message).hex())
    say('hash ' + state.symmetricstate.get_handshake_hash().hex())
    for i in range(args.transport):
        say('transport ' + send.encrypt_with_ad(b'', ('python-%d' % i).encode()).hex())
    for _ in range(args.transport):
        ciphertext = hear('transport')
        try:
            say('opened ' + receive.decrypt_with_ad(b'', ciphertext).hex())
        except Exception:
            say('failed')
            sys.exit(4)
    return 0


if __name__ == '__main__':
    sys.exit(main())
