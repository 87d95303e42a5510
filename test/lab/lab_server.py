#!/usr/bin/env python3
"""A small TCP server for the namespace lab (test/lab/lab.sh listen).

    lab_server.py --port P --kind banner --text 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10' --ready FILE
    lab_server.py --port P --kind http   --text 'nginx/1.18.0'                             --ready FILE

banner: greets every connection with TEXT + CRLF (an SSH, FTP or SMTP server as a scanner sees
        it), then reads and discards what the client sends for a few seconds.
http:   answers every request with 200 and `Server: TEXT` (nonsense requests get a 400 with the
        same header).

Binds 0.0.0.0 inside its network namespace (so it keeps serving when lab.sh moves the host to a
new address), writes FILE once it listens, and serves until it is killed.
"""
import argparse
import http.server
import os
import socket
import socketserver
import sys


class BannerHandler(socketserver.BaseRequestHandler):
    banner = b''

    def handle(self) -> None:
        sock = self.request
        sock.settimeout(5)
        try:
            sock.sendall(self.banner)
            while sock.recv(4096):
                pass
        except OSError:
            pass


class ThreadingTCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128


class ThreadingHTTPServer(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--kind', choices=['banner', 'http'], required=True)
    parser.add_argument('--text', required=True)
    parser.add_argument('--bind', default='0.0.0.0')
    parser.add_argument('--ready')
    args = parser.parse_args()

    if args.kind == 'banner':
        handler = type('Handler', (BannerHandler,), {'banner': (args.text + '\r\n').encode()})
        server: socketserver.TCPServer = ThreadingTCPServer((args.bind, args.port), handler)
    else:
        header = args.text
        body = b'<html><head><title>Lab device</title></head><body>ok</body></html>'

        class HttpHandler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.0'
            timeout = 5

            def version_string(self) -> str:
                return header

            def log_message(self, format: str, *a: object) -> None:  # noqa: A002 - quiet
                pass

            def _answer(self, with_body: bool) -> None:
                self.send_response(200)
                self.send_header('Content-Type', 'text/html')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                self._answer(True)

            def do_POST(self) -> None:  # noqa: N802
                self._answer(True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(False)

            def do_OPTIONS(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header('Allow', 'GET, HEAD, POST, OPTIONS')
                self.send_header('Content-Length', '0')
                self.end_headers()

        server = ThreadingHTTPServer((args.bind, args.port), HttpHandler)

    if args.ready:
        with open(args.ready, 'w') as f:
            f.write(f'{os.getpid()}\n')
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
