"""Real faults for the live tests: a TCP proxy in front of PostgreSQL that fails on
command, and a private Redis-protocol server (the Valkey of `make run` and `make test`)
that can be killed, frozen and started again.

Nothing here is a mock: the server under test talks to these over real sockets and
sees what it would see when a network or a store fails.
"""

import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time

import redis

from scripts.dev_services import valkey_server_binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TcpProxy:
    """Forwards 127.0.0.1:`port` to `target`, one thread per direction of a connection.

    - `drop()`: resets every open connection (a restarted server, a firewall); new
      connections are accepted and forwarded.
    - `cut()`: drops them and refuses new ones (connection refused) until `heal()`.
    - `stall()`: drops them; new ones are accepted and never answered (a hung server).
    """

    def __init__(self, target: tuple[str, int]):
        self.target = target
        # The port stays ours while the proxy is cut (connections refused): a socket bound to
        # it that never listens holds it, so no other process can bind it meanwhile (a
        # parallel test's server); SO_REUSEPORT lets the listener bind beside it.
        self._reserved = socket.socket()
        self._reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self._reserved.bind(("127.0.0.1", 0))
        self.port = self._reserved.getsockname()[1]
        self.connections_opened = 0
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._stalled = False

    def start(self) -> "TcpProxy":
        self._listen()
        return self

    def drop(self) -> None:
        with self._lock:
            doomed, self._open = self._open, set()
        for sock in doomed:
            _reset(sock)

    def cut(self) -> None:
        self._stop_listening()
        self.drop()

    def stall(self) -> None:
        self._stalled = True
        self.drop()

    def heal(self) -> None:
        self._stalled = False
        self.drop()  # whatever was held while stalled
        if self._listener is None:
            self._listen()

    def close(self) -> None:
        self._stop_listening()
        self.drop()
        self._reserved.close()

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.05)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()  # the accept loop sees it on its next timeout

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            if self._stalled:
                self._track(client)  # held open, never answered
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(client)
                continue
            upstream.settimeout(None)
            self._track(client, upstream)
            with self._lock:
                self.connections_opened += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._open.update(socks)

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with self._lock:
                self._open.discard(sock)
            _reset(sock)


def _reset(sock: socket.socket) -> None:
    """Closes with RST, as a dying host or a firewall does, and wakes a blocked recv."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class PrivateRedis:
    """A Valkey of the test's own on a free port: no disk, nobody else's data."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="phoneintel-redis-")

    def start(self) -> "PrivateRedis":
        """Starts the server and returns once it answers PING."""
        self.process = subprocess.Popen(
            [
                valkey_server_binary(),
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", self._dir.name),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        client = redis.Redis(port=self.port, socket_timeout=0.5, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return self
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
            finally:
                client.close()
        raise RuntimeError("Valkey did not start in 10 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)  # a frozen process must see SIGKILL too
            self.process.kill()
            self.process.wait(timeout=10)

    def freeze(self) -> None:
        """SIGSTOP: the kernel still accepts connections and bytes; no reply comes."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        self.kill()
        self._dir.cleanup()
