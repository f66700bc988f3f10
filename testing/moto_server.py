# moto's S3 server, with conditional writes made atomic.
#
# Usage: python moto_server.py HOST PORT
#
# moto checks `If-None-Match: *` (and `If-Match`) and then stores the object as two separate
# steps, and `moto_server` serves requests on threads: two concurrent conditional creates of
# one key can both pass the check and both answer 200. Real S3 arbitrates them atomically, and
# that arbitration is what the object-store catalog and the conformance suite test. So this
# launcher runs moto's own WSGI application behind one lock taken by every conditional write;
# every other request still runs concurrently. Exit status 3: moto[server] is not installed.
#
# Faults, for tests of what a client does when an answer is lost: `POST /__faults__/<mode>/<n>`
# with a key fragment as the body arms the next <n> PUTs whose path contains it. Modes:
# - `store-then-503`: moto stores the object, then the client is told 503 (a server error after
#   the write landed, which clients retry: a conditional create's retry then sees its own object).
# - `store-then-drop`: moto stores the object, then the connection is closed with no answer.
# - `delay-<ms>`: the request waits <ms> milliseconds before moto sees it (a slow writer that
#   other writers overtake).
# `GET /__faults__` answers how many armed requests have not arrived yet (all faults summed).
import os
import socket
import sys
import threading
import time

try:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        create_backend_app,
    )
    from werkzeug.serving import run_simple
except ImportError as error:
    print(f"moto[server] is not installed: {error}", file=sys.stderr)
    sys.exit(3)

CONDITIONS = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MATCH")
WRITES = ("PUT", "POST")


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    # moto reads its own port from here (as its `moto_server` entry point sets it).
    os.environ.setdefault("MOTO_PORT", str(port))
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()
    faults = []  # [mode, fragment, remaining]

    def arm(environ, start_response):
        _, _, mode, count = environ["PATH_INFO"].split("/", 3)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        fragment = environ["wsgi.input"].read(length).decode()
        with lock:
            faults.append([mode, fragment, int(count)])
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    def pending(environ, start_response):
        with lock:
            body = str(sum(max(fault[2], 0) for fault in faults)).encode()
        start_response("200 OK", [("Content-Length", str(len(body)))])
        return [body]

    def fault_for(environ):
        if environ.get("REQUEST_METHOD") != "PUT":
            return None
        with lock:
            for fault in faults:
                if fault[2] > 0 and fault[1] in environ.get("PATH_INFO", ""):
                    fault[2] -= 1
                    return fault[0]
        return None

    def store_then_503(environ, start_response):
        list(app(environ, lambda status, headers, exc_info=None: None))
        body = b"<Error><Code>ServiceUnavailable</Code><Message>injected</Message></Error>"
        start_response("503 Service Unavailable", [("Content-Length", str(len(body)))])
        return [body]

    def store_then_drop(environ, start_response):
        list(app(environ, lambda status, headers, exc_info=None: None))
        connection = environ.get("werkzeug.socket")
        if connection is not None:
            connection.shutdown(socket.SHUT_RDWR)
        # Nothing reaches the client: werkzeug's write fails on the closed socket.
        start_response("500 Internal Server Error", [("Content-Length", "0")])
        return [b""]

    def serve(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/__faults__":
            return pending(environ, start_response)
        if path.startswith("/__faults__/"):
            return arm(environ, start_response)
        fault = fault_for(environ)
        if fault == "store-then-503":
            with lock:
                return store_then_503(environ, start_response)
        if fault == "store-then-drop":
            with lock:
                return store_then_drop(environ, start_response)
        if fault is not None and fault.startswith("delay-"):
            time.sleep(int(fault.removeprefix("delay-")) / 1000)
        return atomic_conditional_writes(environ, start_response)

    def atomic_conditional_writes(environ, start_response):
        conditional = environ.get("REQUEST_METHOD") in WRITES and any(
            key in environ for key in CONDITIONS
        )
        if not conditional:
            return app(environ, start_response)
        with lock:
            # The whole response is produced under the lock: check and store are one step.
            return list(app(environ, start_response))

    run_simple(host, port, serve, threaded=True)


if __name__ == "__main__":
    main()
