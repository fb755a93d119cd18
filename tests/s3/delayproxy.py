#!/usr/bin/env python3
"""A TCP proxy that delays each direction's bytes by ONE_WAY_MS: a network round trip in user space.

For kernels without sch_netem (`tc qdisc ... netem delay` fails), where netns.sh cannot delay the veth pair.
Every chunk read from one side is written to the other ONE_WAY_MS after it arrived, in order; bandwidth is not
limited (a bounded queue per direction only applies back-pressure). A new connection's first client bytes wait
two more one-way delays, the TCP handshake a real network would cost (netem delays the SYN and SYN-ACK too).

It also reads the HTTP/1.1 it forwards, to count what a client asked of an S3 store: requests by method, response
body bytes by method (Content-Length or chunked), all bytes each way, connections. A control port (not delayed)
answers any request with these counters as JSON:  curl -s http://ADDR:CONTROL_PORT/

  delayproxy.py LISTEN_ADDR:PORT UPSTREAM_ADDR:PORT ONE_WAY_MS [CONTROL_PORT]
"""
import asyncio
import json
import sys
import time

CHUNK = 256 << 10
QUEUE_CHUNKS = 256            # 64 MiB a direction at most: far above 10 ms x any rate here
stats = {"connections": 0, "requests": {}, "body_bytes": {}, "bytes_up": 0, "bytes_down": 0, "unparsed": 0}


class HttpCounter:
    """Incremental HTTP/1.1 framing of one direction: headers, then a Content-Length or chunked body."""

    def __init__(self, requests, methods):
        self.requests = requests      # True: client -> server; False: responses
        self.methods = methods        # methods of requests not yet answered, shared by both directions
        self.state = "head"           # head, body, size (chunk-size line), data, crlf (after data), trailer
        self.buf = b""
        self.left = 0                 # bytes still to skip in body, data or crlf
        self.method = None            # of the response being read
        self.broken = False

    def feed(self, data):
        if self.broken:
            return
        try:
            self._feed(memoryview(data))
        except (ValueError, IndexError):
            self.broken = True        # not HTTP we understand: forward it, stop counting this connection
            stats["unparsed"] += 1

    def _skip(self, data, i):
        k = min(self.left, len(data) - i)
        self.left -= k
        if self.state != "crlf" and not self.requests and self.method is not None:
            stats["body_bytes"][self.method] = stats["body_bytes"].get(self.method, 0) + k
        return i + k

    def _line(self, data, i, end):
        """Accumulates up to end (CRLF or CRLFCRLF): (line or None, next index)."""
        self.buf += bytes(data[i:])
        j = self.buf.find(end)
        if j < 0:
            if len(self.buf) > 1 << 20:
                raise ValueError("header too long")
            return None, len(data)
        line = self.buf[:j]
        consumed = j + len(end) - (len(self.buf) - (len(data) - i))
        self.buf = b""
        return line, i + consumed

    def _feed(self, data):
        i = 0
        while i < len(data):
            if self.state in ("body", "data", "crlf"):
                i = self._skip(data, i)
                if self.left == 0:
                    if self.state == "data":
                        self.state, self.left = "crlf", 2
                    else:
                        self.state = "size" if self.state == "crlf" else "head"
            elif self.state == "head":
                head, i = self._line(data, i, b"\r\n\r\n")
                if head is not None:
                    self._header(head.decode("latin-1").split("\r\n"))
            elif self.state == "size":
                line, i = self._line(data, i, b"\r\n")
                if line is not None:
                    self.left = int(line.split(b";")[0], 16)
                    self.state = "data" if self.left else "trailer"
            else:                     # trailer: lines until an empty one
                line, i = self._line(data, i, b"\r\n")
                if line == b"":
                    self.state = "head"

    def _header(self, lines):
        fields = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        length = int(fields.get("content-length", "0"))
        chunked = "chunked" in fields.get("transfer-encoding", "").lower()
        if self.requests:
            method = lines[0].split(" ", 1)[0]
            self.methods.append(method)
            stats["requests"][method] = stats["requests"].get(method, 0) + 1
        else:
            status = int(lines[0].split(" ", 2)[1])
            if 100 <= status < 200:
                return                # 100 Continue: the real answer follows
            self.method = self.methods.pop(0) if self.methods else "?"
            if self.method == "HEAD" or status in (204, 304):
                chunked, length = False, 0
        if chunked:
            self.state = "size"
        elif length:
            self.state, self.left = "body", length


async def pump(reader, writer, delay, first_extra, counter, key):
    """Reads from reader; writes each chunk delay seconds after it arrived (the first one first_extra later)."""
    queue = asyncio.Queue(QUEUE_CHUNKS)

    async def read_side():
        extra = first_extra
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                stats[key] += len(data)
                counter.feed(data)
                await queue.put((time.monotonic() + delay + extra, data))
                extra = 0.0
        except (ConnectionError, OSError):
            pass
        await queue.put((time.monotonic() + delay, None))

    async def write_side():
        try:
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if data is None:
                    if writer.can_write_eof():
                        writer.write_eof()
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass

    await asyncio.gather(read_side(), write_side())


async def handle(client_r, client_w, upstream, delay):
    stats["connections"] += 1
    host, port = upstream
    try:
        server_r, server_w = await asyncio.open_connection(host, port)
    except OSError:
        client_w.close()
        return
    methods = []
    try:
        await asyncio.gather(
            pump(client_r, server_w, delay, 2 * delay, HttpCounter(True, methods), "bytes_up"),
            pump(server_r, client_w, delay, 0.0, HttpCounter(False, methods), "bytes_down"))
    finally:
        for w in (server_w, client_w):
            w.close()


async def control(reader, writer):
    try:
        await asyncio.wait_for(reader.read(4096), 5)
        body = json.dumps(stats).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % len(body) + body)
        await writer.drain()
    except (OSError, asyncio.TimeoutError):
        pass
    writer.close()


def addr(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


async def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    listen, upstream, delay = addr(argv[1]), addr(argv[2]), float(argv[3]) / 1000
    server = await asyncio.start_server(lambda r, w: handle(r, w, upstream, delay), *listen, backlog=256)
    servers = [server]
    if len(argv) == 5:
        servers.append(await asyncio.start_server(control, listen[0], int(argv[4])))
    print(f"delayproxy: {argv[1]} -> {argv[2]}, {argv[3]} ms each way", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv))
    except KeyboardInterrupt:
        pass
