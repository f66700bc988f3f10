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
import os
import sys
import threading

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

    def atomic_conditional_writes(environ, start_response):
        conditional = environ.get("REQUEST_METHOD") in WRITES and any(
            key in environ for key in CONDITIONS
        )
        if not conditional:
            return app(environ, start_response)
        with lock:
            # The whole response is produced under the lock: check and store are one step.
            return list(app(environ, start_response))

    run_simple(host, port, atomic_conditional_writes, threaded=True)


if __name__ == "__main__":
    main()
