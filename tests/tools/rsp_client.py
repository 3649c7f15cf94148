"""The GDB remote serial protocol's framing, for tests that talk to a stub
directly (gdb -batch cannot press Ctrl-C or drop a connection halfway):
send(s, data) sends one packet and waits for its ack, recv(s) returns the
next packet's payload and acks it."""


def send(s, data):
    s.sendall(b'$' + data.encode() + b'#%02x' % (sum(data.encode()) & 0xff))
    assert s.recv(1) == b'+'


def recv(s):
    while s.recv(1) != b'$':
        pass
    buf = b''
    while (c := s.recv(1)) != b'#':
        buf += c
    s.recv(2)
    s.sendall(b'+')
    return buf.decode()
