#!/usr/bin/env python3
"""A tiny SSE test server on loopback: serves one fixture file as
`text/event-stream`, written in small chunks with flushes in between, so
the client sees the stream arrive piece by piece.

Usage: sse_server.py FIXTURE [REQUESTS]  -- prints the chosen port on the
first line, serves REQUESTS requests (default 1), then exits. Bounded: it
also exits after 60 seconds whatever happens.
"""
import http.server
import sys
import threading
import time

FIXTURE = open(sys.argv[1], "rb").read()
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
CHUNK = 37  # deliberately not aligned with lines or events


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(FIXTURE), CHUNK):
            part = FIXTURE[i : i + CHUNK]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
            time.sleep(0.001)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):  # keep test output clean
        pass


def main():
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    watchdog = threading.Timer(60, server.server_close)
    watchdog.daemon = True
    watchdog.start()
    for _ in range(REQUESTS):
        server.handle_request()
    server.server_close()
    watchdog.cancel()
    sys.exit(0)


if __name__ == "__main__":
    main()
