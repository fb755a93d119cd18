"""A hostile local user against a job's TCP ports, for StrangersTest. Loopback only, bounded in count and time.

usage: stranger.py PORTS SECONDS FLOOD_LIMIT   (PORTS: comma-separated)
On every port: 20 silent connections and 5 of each kind of garbage, held open until the end (huge lengths,
random bytes, niodev's own greeting claiming rank 1 and rank 99, a join HELLO for rank 1 with a made-up proof);
and 4 processes per port that start and reset connections as fast as they can, each at most FLOOD_LIMIT times,
for SECONDS. Prints one line: "stranger connected=N refused=N failed=N flooded=N".
"""
import os
import socket
import struct
import sys
import time

ports = [int(p) for p in sys.argv[1].split(",")]
seconds = float(sys.argv[2])
flood_limit = int(sys.argv[3])
GREETING = struct.pack(">H", 12) + b"Sending Info"
PAYLOADS = [
    b"",
    os.urandom(4096),
    struct.pack(">I", 0xFFFFFFFF) * 4,
    GREETING + struct.pack(">iii", 30000, 31000, 1),
    GREETING + struct.pack(">iii", 30000, 31000, 99),
    b"FSJ1" + struct.pack(">i", 1) + os.urandom(32),
]


def flood(port, end):
    """Child process: start connections and drop them (reset, so no TIME_WAIT uses up local ports) as fast as it
    can, until the time or the count runs out; every one still lands in the port's accept queue. Exits with how
    many it started, in hundreds."""
    made = 0
    linger = struct.pack("ii", 1, 0)
    while time.time() < end and made < flood_limit:
        s = socket.socket()
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        s.connect_ex(("127.0.0.1", port))
        s.close()
        made += 1
    os._exit(min(made // 100, 255))


end = time.time() + seconds
children = []
for port in ports:
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            flood(port, end)
        children.append(pid)

held, connected, refused, failed = [], 0, 0, 0
for port in ports:
    for payload in [b""] * 15 + [p for p in PAYLOADS for _ in range(5)]:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1.0)
        except ConnectionRefusedError:
            refused += 1
            continue
        except OSError:
            failed += 1
            continue
        connected += 1
        try:
            s.sendall(payload)
        except OSError:
            pass
        held.append(s)

flooded = 0
for pid in children:
    _, status = os.waitpid(pid, 0)
    flooded += os.waitstatus_to_exitcode(status) * 100
while time.time() < end:
    time.sleep(0.05)
for s in held:
    s.close()
print("stranger connected=%d refused=%d failed=%d flooded=%d" % (connected, refused, failed, flooded), flush=True)
