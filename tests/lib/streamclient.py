"""streamclient.py - a recorder's side of the stream protocol
(format/SPEC.md section 10), scripted, for tests that need a client that
perfrec's sender would never be: one that sends a chosen slice of a real
recording's records and closes, or says a chosen resend_from.

  python3 streamclient.py PORT TRACE.prec --host H --session S --sid HEX
          [--resend-from N] [--send FIRST-LAST] [--wait SECONDS]

Sends a hello (frame_bytes 960 KiB, adapting), then records FIRST..LAST of
TRACE (1-based: record 1 is the file header) as frames of those seqs, then
reads the collector's answers for up to SECONDS (default 3) or until it
closes, and prints one line per answer:
  welcome next_seq=N complete=0|1
  ack seq=N
  refusal definitive=0|1 reason=TEXT
`records TRACE` prints each record's size, one per line.
"""
import argparse
import socket
import struct
import sys


def records(path):
    """The file's records (SPEC.md section 4), as bytes each."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 8 <= len(data):
        magic, size = struct.unpack_from("<II", data, pos)
        n = 8 + size
        if magic == 0x184D2A51:           # frame info: its data frame follows
            n += struct.unpack_from("<I", data, pos + 8 + 24)[0]
        out.append(data[pos:pos + n])
        pos += n
    return out


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def _field(num, wire, payload):
    key = _varint(num << 3 | wire)
    if wire == 0:
        return key + _varint(payload)
    return key + _varint(len(payload)) + payload


def _msg(body_field, body):   # StreamMessage{body}, length-prefixed
    m = _field(body_field, 2, body)
    return struct.pack(">I", len(m)) + m


def _read_varint(b, pos):
    n = shift = 0
    while True:
        c = b[pos]
        pos += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, pos


def _fields(b):
    pos, out = 0, {}
    while pos < len(b):
        key, pos = _read_varint(b, pos)
        if key & 7 == 0:
            v, pos = _read_varint(b, pos)
        else:
            n, pos = _read_varint(b, pos)
            v, pos = b[pos:pos + n], pos + n
        out[key >> 3] = v
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "records":
        for r in records(sys.argv[2]):
            print(len(r))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("trace")
    ap.add_argument("--host", required=True)
    ap.add_argument("--session", required=True)
    ap.add_argument("--sid", required=True)
    ap.add_argument("--resend-from", type=int, default=0)
    ap.add_argument("--send", default="")
    ap.add_argument("--wait", type=float, default=3)
    a = ap.parse_args()
    recs = records(a.trace)
    s = socket.create_connection(("127.0.0.1", a.port))
    hello = (_field(1, 0, 1) + _field(2, 2, a.host.encode()) +
             _field(4, 2, a.session.encode()) + _field(9, 2, bytes.fromhex(a.sid)) +
             _field(7, 0, 983040) + _field(10, 0, 1))
    if a.resend_from:
        hello += _field(8, 0, a.resend_from)
    s.sendall(_msg(1, hello))
    if a.send:
        first, last = (int(x) for x in a.send.split("-"))
        for seq in range(first, last + 1):
            try:
                s.sendall(_msg(3, _field(1, 0, seq) + _field(2, 2, recs[seq - 1])))
            except OSError:
                break
    s.settimeout(a.wait)
    buf = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        buf += chunk
    pos = 0
    while pos + 4 <= len(buf):
        n = struct.unpack_from(">I", buf, pos)[0]
        if pos + 4 + n > len(buf):
            break
        m = _fields(buf[pos + 4:pos + 4 + n])
        pos += 4 + n
        if 2 in m:
            w = _fields(m[2])
            print("welcome next_seq=%d complete=%d" % (w.get(2, 0), w.get(3, 0)))
        elif 4 in m:
            print("ack seq=%d" % _fields(m[4]).get(1, 0))
        elif 6 in m:
            r = _fields(m[6])
            print("refusal definitive=%d reason=%s" %
                  (r.get(3, 0), r.get(1, b"").decode(errors="replace")))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
