"""Counting what crosses the wire to PostgreSQL and Redis.

`WireCounter` is a TCP proxy on 127.0.0.1 in front of a real server. It forwards
every byte unchanged and counts the client's round trips as the server sees them:
- PostgreSQL: Sync and simple Query messages (one per extended-protocol statement,
  one per `BEGIN` / `COMMIT` / simple query);
- Redis: commands (RESP arrays), so a pipeline of three counts three.

The tests hold the request path's budget with it (`lookups/tests/test_round_trips.py`)
and `make bench` prints it next to each scenario. With a `reply_delay` it holds each of
the server's replies back that long, as a distant server would: a request that waits for
two round trips one after the other then takes twice as long as one that overlaps them.
"""

import contextlib
import socket
import struct
import threading
import time

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104


class _PostgresMessages:
    """Counts Sync ('S') and Query ('Q') messages in a client's byte stream."""

    def __init__(self, reply):
        self.buffer = b""
        self.started = False
        self.reply = reply

    def feed(self, data: bytes) -> tuple[bytes, int]:
        """(bytes to forward, round trips seen in them)."""
        self.buffer += data
        forward, count = b"", 0
        while True:
            if not self.started:
                if len(self.buffer) < 8:
                    break
                length, code = struct.unpack("!ii", self.buffer[:8])
                if len(self.buffer) < length:
                    break
                message, self.buffer = self.buffer[:length], self.buffer[length:]
                if code in (_SSL_REQUEST, _GSSENC_REQUEST):
                    self.reply(b"N")  # plain text, so the messages can be read
                    continue
                self.started = True
                forward += message
                continue
            if len(self.buffer) < 5:
                break
            kind = self.buffer[:1]
            (length,) = struct.unpack("!i", self.buffer[1:5])
            if len(self.buffer) < 1 + length:
                break
            message, self.buffer = self.buffer[: 1 + length], self.buffer[1 + length :]
            count += kind in (b"S", b"Q")
            forward += message
        return forward, count


class _RedisCommands:
    """Counts RESP arrays (commands) in a client's byte stream."""

    def __init__(self, reply):
        self.buffer = b""

    def feed(self, data: bytes) -> tuple[bytes, int]:
        self.buffer += data
        count, position = 0, 0
        while True:
            end = self._command_end(position)
            if end is None:
                break
            count, position = count + 1, end
        forward, self.buffer = self.buffer[:position], self.buffer[position:]
        return forward, count

    def _command_end(self, start: int) -> int | None:
        line_end = self.buffer.find(b"\r\n", start)
        if line_end < 0:
            return None
        header = self.buffer[start:line_end]
        if not header.startswith(b"*"):  # an inline command: one line
            return line_end + 2
        position = line_end + 2
        for _ in range(int(header[1:])):
            line_end = self.buffer.find(b"\r\n", position)
            if line_end < 0:
                return None
            size = int(self.buffer[position + 1 : line_end])
            position = line_end + 2 + size + 2
            if position > len(self.buffer):
                return None
        return position


_PROTOCOLS = {"postgresql": _PostgresMessages, "redis": _RedisCommands}


class WireCounter:
    """A proxy to `127.0.0.1:target_port` that counts the client's round trips."""

    def __init__(self, target_port: int, protocol: str, *, reply_delay: float = 0.0):
        self.target_port = target_port
        self.reply_delay = reply_delay
        self.protocol = _PROTOCOLS[protocol]
        self.count = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.count = 0

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, server]
            parser = self.protocol(reply=client.sendall)
            threading.Thread(
                target=self._upstream, args=(client, server, parser), daemon=True
            ).start()
            threading.Thread(target=self._replies, args=(server, client), daemon=True).start()

    def _upstream(self, client, server, parser) -> None:
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if not data:
                _shut(server)
                return
            forward, count = parser.feed(data)
            with self.lock:
                self.count += count
            try:
                server.sendall(forward)
            except OSError:
                return

    def _replies(self, source, target) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                _shut(target)
                return
            if self.reply_delay:
                time.sleep(self.reply_delay)
            try:
                target.sendall(data)
            except OSError:
                return


def _shut(sock) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
